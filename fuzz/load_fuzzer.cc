// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// load_fuzzer: arbitrary bytes as a filter file, given to every kind's Load and LoadFromBytes, to
// AnyFilter's, and to InspectFile and InspectBytes. Each must answer a status or a working filter:
// never crash, never read out of bounds, never allocate past the cap. One verdict: what
// InspectFile accepts the kind it names loads (within the cap, not DIRTY), what it refuses nothing
// loads, and AnyFilter loads exactly what one kind loads.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "bloomery/bloomery.h"
#include "format/internal/format_codec.h"
#include "fuzz_util.h"

namespace {

using bloomery::fuzzing::Fail;

constexpr uint64_t kCap = uint64_t{64} << 20;  // a hostile file cannot make us allocate more

// A loaded filter works: an inserted key is found, the estimates can be computed.
template <typename Filter>
void Exercise(Filter& f) {
  if constexpr (std::is_same_v<Filter, bloomery::ScalableFilter>) {
    if (f.Insert(uint64_t{42}) == bloomery::InsertResult::kRefused) return;  // full: fine
  } else {
    f.Insert(uint64_t{42});
  }
  // A window of a few nanoseconds may rightly expire the key before the lookup.
  bool may_expire = false;
  if constexpr (std::is_same_v<Filter, bloomery::WindowedFilter>) may_expire = f.window_ns() != 0;
  if (!may_expire && !f.MayContain(uint64_t{42})) Fail("false negative after load");
  (void)f.EstimatedFpr();
  (void)f.EstimatedCount();
}

bloomery::LoadOptions Options(bool verify) {
  bloomery::LoadOptions options;
  options.max_bytes = kCap;
  options.verify_checksums = verify;
  return options;
}

template <typename Filter>
bool TryLoad(const std::string& path, std::string_view bytes, bool verify) {
  const bloomery::LoadOptions options = Options(verify);
  absl::StatusOr<Filter> f = Filter::Load(path, options);
  absl::StatusOr<Filter> from_bytes = Filter::LoadFromBytes(bytes, options);
  if (f.ok() != from_bytes.ok()) Fail("Load and LoadFromBytes disagree");
  if (!f.ok()) return false;
  if (f->memory_bytes() > kCap) Fail("loaded past the cap");
  Exercise(*f);
  return true;
}

// How many kinds load the file: every kind AnyFilter knows, each by its own loaders.
template <size_t... I>
int LoadEachKind(const std::string& path, std::string_view bytes, bool verify,
                 std::index_sequence<I...>) {
  return (
      TryLoad<std::variant_alternative_t<I, bloomery::AnyFilter::Variant>>(path, bytes, verify) +
      ...);
}

// AnyFilter's loaders, which must agree with each other and with the kinds' (`loaded` of them).
void TryLoadAny(const std::string& path, std::string_view bytes, bool verify, int loaded) {
  absl::StatusOr<bloomery::AnyFilter> f = bloomery::AnyFilter::Load(path, Options(verify));
  absl::StatusOr<bloomery::AnyFilter> from_bytes =
      bloomery::AnyFilter::LoadFromBytes(bytes, Options(verify));
  if (f.ok() != from_bytes.ok()) Fail("AnyFilter's Load and LoadFromBytes disagree");
  if (f.ok() != (loaded == 1)) Fail("AnyFilter and the kinds' loaders disagree");
  if (!f.ok()) return;
  if (f->memory_bytes() > kCap) Fail("loaded past the cap");
  f->Visit([](auto& filter) { Exercise(filter); });
}

void LoadAll(std::span<const uint8_t> data) {
  const std::string_view bytes(reinterpret_cast<const char*>(data.data()), data.size());
  bloomery::fuzzing::MemoryFile file(data.data(), data.size());
  absl::StatusOr<bloomery::FileInfo> info = bloomery::InspectFile(file.path());
  if (info.ok() != bloomery::InspectBytes(bytes).ok()) {
    Fail("InspectFile and InspectBytes disagree");
  }
  for (bool verify : {true, false}) {
    const int loaded =
        LoadEachKind(file.path(), bytes, verify,
                     std::make_index_sequence<std::variant_size_v<bloomery::AnyFilter::Variant>>());
    if (loaded > 1) Fail("one file loaded as two kinds");
    TryLoadAny(file.path(), bytes, verify, loaded);
    if (!verify) continue;
    if (loaded == 1 && !info.ok()) Fail("a file that loads does not inspect");
    if (loaded == 0 && info.ok() && !info->dirty && info->file_bytes <= kCap) {
      Fail("a file that inspects does not load");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bloomery::detail::CheckAsIsAndResealed({data, size}, LoadAll);
  return 0;
}
