// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_file_test.cc: the commands that read filter files and report on them: info (text, JSON and
// --metrics' Prometheus text), repair of a DIRTY file, and the errors that name a bad file.
// Each part of the CLI's tests drives the real binary as cli_test_util.h says.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/bloomery.h"
#include "cli_test_util.h"

namespace bloomery::cli_test {
namespace {

// ---------------------------------------------------------------------------------------------
// info

TEST_CASE("info describes a file (text and JSON), and reports corruption and missing files") {
  const std::string file = Scratch().File("info.bloom");
  Build({"--kind", "counting", "--capacity", "2000", "--fpr", "0.001"}, file,
        WriteLines("info.txt", NumberedLines("i", 0, 1200)));
  CountingOptions options;
  options.capacity = 2000;
  options.fpr = 0.001;
  absl::StatusOr<CountingPlan> plan = PlanCountingFilter(options);
  REQUIRE(plan.ok());

  RunResult json_run = Run({"info", file, "--json"});
  REQUIRE_MESSAGE(json_run.exit_code == 0, json_run.err);
  const Json json = ParseJson(json_run.out);
  CHECK(json["kind"].string == "counting");
  CHECK(json["version"].U64() >= 1);
  CHECK(json["file_bytes"].U64() == std::filesystem::file_size(file));
  CHECK(json["bits"].U64() == plan->bits());
  CHECK(json["hashes"].U64() == plan->hashes);
  CHECK(json["counter_bits"].U64() == 4);
  CHECK(json["capacity"].U64() == 2000);
  CHECK(json["planned_fpr"].Num() == doctest::Approx(0.001));
  CHECK(json["seed"].string == absl::StrFormat("0x%016x", kDefaultSeed));
  CHECK(json["integer_hash"].string == "xxh3");
  CHECK_FALSE(json["dirty"].boolean);
  CHECK(json["checksums_verified"].boolean);
  CHECK(json["estimated_count"].Num() == doctest::Approx(1200));
  CHECK(json["estimated_fpr"].Num() > 0);
  CHECK(json["estimated_fpr"].Num() < json["planned_fpr"].Num());
  CHECK(json["memory_bytes"].U64() == plan->bytes());

  RunResult text = Run({"info", file});
  REQUIRE(text.exit_code == 0);
  for (const char* field : {"kind", "counting", "format version", "counter bits", "checksums",
                            "verified", "estimated keys", "1,200", "FPR now", "memory"}) {
    CHECK(Contains(text.out, field));
  }

  // A filter made by the library with IntegerHash::kMix says so (the CLI's keys are lines).
  FilterOptions mix_options;
  mix_options.capacity = 1000;
  mix_options.hashing.integer_hash = IntegerHash::kMix;
  absl::StatusOr<BlockedFilter> mix = BlockedFilter::Create(mix_options);
  REQUIRE(mix.ok());
  const std::string mix_file = Scratch().File("info_mix.bloom");
  REQUIRE(mix->Save(mix_file).ok());
  CHECK(ParseJson(Run({"info", mix_file, "--json"}).out)["integer_hash"].string == "mix");
  CHECK(Contains(Run({"info", mix_file}).out, "mix (hash_id 2)"));
  // And one made with IntegerHash::kSeededMix.
  mix_options.hashing.integer_hash = IntegerHash::kSeededMix;
  absl::StatusOr<BlockedFilter> seeded = BlockedFilter::Create(mix_options);
  REQUIRE(seeded.ok());
  const std::string seeded_file = Scratch().File("info_seeded_mix.bloom");
  REQUIRE(seeded->Save(seeded_file).ok());
  CHECK(ParseJson(Run({"info", seeded_file, "--json"}).out)["integer_hash"].string == "seeded-mix");
  CHECK(Contains(Run({"info", seeded_file}).out, "seeded-mix (hash_id 3)"));

  Build({"--kind", "scalable", "--capacity", "100"}, Scratch().File("info_s.bloom"),
        WriteLines("info.txt", NumberedLines("i", 0, 1200)));
  const Json scalable = ParseJson(Run({"info", Scratch().File("info_s.bloom"), "--json"}).out);
  CHECK(scalable["stages"].U64() > 1);
  CHECK(scalable["loaded_stages"].U64() == scalable["stages"].U64());

  // One payload bit flipped (the payload ends the file): a checksum mismatch, exit 1.
  std::string bytes = ReadFile(file);
  bytes.back() = static_cast<char>(bytes.back() ^ 0x10);
  const std::string corrupted = Scratch().File("corrupted.bloom");
  WriteFile(corrupted, bytes);
  RunResult bad = Run({"info", corrupted});
  CHECK(bad.exit_code == 1);
  CHECK(Contains(bad.err, "checksum"));
  CHECK(bad.out.empty());

  RunResult missing = Run({"info", Scratch().File("no_such.bloom")});
  CHECK(missing.exit_code == 1);
  CHECK(Contains(missing.err, "no_such.bloom"));
}

TEST_CASE("a saturated filter says so; filters sized by --bits warn past their capacity") {
  // 512 bits, 4 hashes, 20,000 keys: every bit is set, no count can be inferred.
  const std::string file = Scratch().File("saturated.bloom");
  RunResult built = Run({"build", "--bits", "512", "--hashes", "4", "-o", file,
                         WriteLines("sat.txt", NumberedLines("s", 0, 20'000))});
  REQUIRE_MESSAGE(built.exit_code == 0, built.err);
  CHECK(Contains(built.err, "over the planned capacity"));

  RunResult text = Run({"info", file});
  REQUIRE(text.exit_code == 0);
  CHECK(Contains(text.out, "saturated"));
  CHECK_FALSE(Contains(text.out, "estimated keys  0"));
  const Json json = ParseJson(Run({"info", file, "--json"}).out);
  CHECK(json["saturated"].boolean);
  CHECK(json["estimated_count"].string == "saturated");

  // Not saturated, but 4,000 keys in 8,192 bits with 4 hashes: over the ~1,420 the bits suit.
  RunResult over =
      Run({"build", "--bits", "8192", "--hashes", "4", "-o", Scratch().File("over.bloom"),
           WriteLines("over.txt", NumberedLines("o", 0, 4000))});
  REQUIRE(over.exit_code == 0);
  CHECK(Contains(over.err, "over the planned capacity of 1,419"));
  RunResult under =
      Run({"build", "--bits", "2^20", "--hashes", "4", "-o", Scratch().File("under.bloom"),
           WriteLines("under.txt", NumberedLines("u", 0, 4000))});
  REQUIRE(under.exit_code == 0);
  CHECK_FALSE(Contains(under.err, "warning"));
}

// ---------------------------------------------------------------------------------------------
// The Prometheus text exposition format (version 0.0.4), as `info --metrics` must write it.

struct MetricSample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // unescaped values
  double value = 0;

  [[nodiscard]] std::string Label(std::string_view key) const {
    for (const auto& [name, value] : labels) {
      if (name == key) return value;
    }
    FAIL("sample has no label " << std::string(key));
    return "";
  }
};

// A cursor over one line of the exposition format, for ParseExposition.
class ExpositionLine {
 public:
  explicit ExpositionLine(std::string_view line) : rest_(line) {}

  [[nodiscard]] bool done() const { return rest_.empty(); }

  // Consumes `literal` if the line continues with it.
  bool Take(std::string_view literal) {
    if (!rest_.starts_with(literal)) return false;
    rest_.remove_prefix(literal.size());
    return true;
  }

  // A metric name ([a-zA-Z_:][a-zA-Z0-9_:]*), or with colons false a label name; empty if none.
  std::string Name(bool colons) {
    size_t n = 0;
    while (n < rest_.size()) {
      const char c = rest_[n];
      const bool alpha =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colons && c == ':');
      if (!alpha && !(n > 0 && c >= '0' && c <= '9')) break;
      ++n;
    }
    std::string name(rest_.substr(0, n));
    rest_.remove_prefix(n);
    return name;
  }

  // A quoted label value with only \\, \" and \n escaped, unescaped; nullopt if malformed.
  std::optional<std::string> Quoted() {
    if (!Take("\"")) return std::nullopt;
    std::string value;
    while (!rest_.empty()) {
      const char c = rest_.front();
      rest_.remove_prefix(1);
      if (c == '"') return value;
      if (c == '\n') return std::nullopt;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (rest_.empty()) return std::nullopt;
      const char e = rest_.front();
      rest_.remove_prefix(1);
      if (e == 'n') {
        value += '\n';
      } else if (e == '\\' || e == '"') {
        value += e;
      } else {
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  // The rest of the line as a float in Go's syntax (+Inf, -Inf, NaN); nullopt if it is not one.
  std::optional<double> Value() {
    const std::string_view text = rest_;
    rest_ = {};
    if (text == "+Inf") return INFINITY;
    if (text == "-Inf") return -INFINITY;
    if (text == "NaN") return NAN;
    size_t i = 0;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    size_t digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++digits;
    if (i < text.size() && text[i] == '.') {
      ++i;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++digits;
    }
    if (digits == 0) return std::nullopt;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
      ++i;
      if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
      size_t exponent = 0;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++exponent;
      if (exponent == 0) return std::nullopt;
    }
    if (i != text.size()) return std::nullopt;
    return std::stod(std::string(text));
  }

  [[nodiscard]] std::string_view rest() const { return rest_; }

 private:
  std::string_view rest_;
};

// Whether `text` is valid UTF-8 as the exposition format requires (Prometheus drops a scrape that
// is not): each sequence decoded to its code point, which must be in the range its length encodes
// (no overlong form), not a surrogate, and at most U+10FFFF.
bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t length = lead < 0x80           ? 1
                          : (lead >> 5) == 0x6  ? 2
                          : (lead >> 4) == 0xE  ? 3
                          : (lead >> 3) == 0x1E ? 4
                                                : 0;
    if (length == 0 || i + length > text.size()) return false;
    uint32_t code = length == 1 ? lead : lead & (0x7F >> length);
    for (size_t j = 1; j < length; ++j) {
      const auto next = static_cast<unsigned char>(text[i + j]);
      if ((next >> 6) != 0x2) return false;
      code = (code << 6) | (next & 0x3F);
    }
    constexpr uint32_t kLeast[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kLeast[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += length;
  }
  return true;
}

// Parses `text`, failing the test case unless it is valid UTF-8 and on any line that is not a HELP,
// a TYPE or a sample of the format: metric names [a-zA-Z_:][a-zA-Z0-9_:]*, label names
// [a-zA-Z_][a-zA-Z0-9_]*, label values quoted with only \\, \" and \n escaped, a float value (Go's
// syntax: +Inf, -Inf, NaN), HELP and TYPE once per metric and before its samples, each metric's
// samples together. (A hand parser: GCC 12's std::regex trips -Wmaybe-uninitialized under the
// sanitizers.)
std::vector<MetricSample> ParseExposition(const std::string& text) {
  static const std::unordered_set<std::string> kTypes = {"counter", "gauge", "histogram", "summary",
                                                         "untyped"};
  std::vector<MetricSample> samples;
  std::unordered_set<std::string> helped;
  std::unordered_set<std::string> typed;
  std::unordered_set<std::string> finished;  // metrics whose samples another metric's followed
  std::string current;
  REQUIRE(!text.empty());
  REQUIRE(text.back() == '\n');
  REQUIRE_MESSAGE(IsValidUtf8(text), "not valid UTF-8: " << text.substr(0, 300));
  for (const std::string& line : SplitLines(text)) {
    CAPTURE(line);
    ExpositionLine cursor(line);
    if (cursor.Take("# HELP ")) {
      const std::string name = cursor.Name(/*colons=*/true);
      REQUIRE(!name.empty());
      REQUIRE(cursor.Take(" "));
      CHECK(helped.insert(name).second);
      continue;
    }
    if (cursor.Take("# TYPE ")) {
      const std::string name = cursor.Name(/*colons=*/true);
      REQUIRE(!name.empty());
      REQUIRE(cursor.Take(" "));
      CHECK(kTypes.count(std::string(cursor.rest())) == 1);
      CHECK(helped.count(name) == 1);  // HELP first, as the library clients write it
      CHECK(typed.insert(name).second);
      continue;
    }
    MetricSample sample;
    sample.name = cursor.Name(/*colons=*/true);
    REQUIRE(!sample.name.empty());
    CHECK(typed.count(sample.name) == 1);
    if (sample.name != current) {
      if (!current.empty()) finished.insert(current);
      CHECK(finished.count(sample.name) == 0);
      current = sample.name;
    }
    if (cursor.Take("{")) {
      while (!cursor.Take("}")) {
        std::string label = cursor.Name(/*colons=*/false);
        REQUIRE(!label.empty());
        REQUIRE(cursor.Take("="));
        std::optional<std::string> value = cursor.Quoted();
        REQUIRE(value.has_value());
        sample.labels.emplace_back(std::move(label), std::move(*value));
        if (!cursor.Take(",")) {
          REQUIRE(cursor.Take("}"));
          break;
        }
      }
    }
    REQUIRE(cursor.Take(" "));
    const std::optional<double> value = cursor.Value();
    REQUIRE(value.has_value());
    sample.value = *value;
    samples.push_back(std::move(sample));
  }
  return samples;
}

TEST_CASE("info shows the health, and --metrics prints it for several files as Prometheus text") {
  // Names that need every escape of a label value.
  const std::string over = Scratch().File("health \"over\"\\a.bloom");
  const std::string ok = Scratch().File("health\nok.bloom");
  const std::string scalable = Scratch().File("health_scalable.bloom");
  Build({"--capacity", "1000"}, over, WriteLines("health.txt", NumberedLines("h", 0, 2000)));
  Build({"--kind", "counting", "--capacity", "4000"}, ok,
        WriteLines("health.txt", NumberedLines("h", 0, 1000)));
  Build({"--kind", "scalable", "--capacity", "500"}, scalable,
        WriteLines("health.txt", NumberedLines("h", 0, 2000)));

  RunResult text = Run({"info", over});
  REQUIRE_MESSAGE(text.exit_code == 0, text.err);
  for (const char* field : {"health", "over_limit", "estimated keys", "+-", "fill", "/"}) {
    CHECK(Contains(text.out, field));
  }

  const std::vector<std::string> files = {over, ok, scalable};
  std::vector<Json> infos;
  for (const std::string& file : files) {
    RunResult run = Run({"info", file, "--json"});
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    infos.push_back(ParseJson(run.out));
  }
  CHECK(infos[0]["health"]["state"].string == "over_limit");
  CHECK(infos[1]["health"]["state"].string == "ok");
  CHECK(infos[2]["health"]["state"].string == "ok");  // a chain that grows
  CHECK(infos[2]["health"]["inserted"].U64() <= 2000);
  CHECK_FALSE(infos[0]["health"].Has("inserted"));
  CHECK(infos[1]["health"]["estimated_count"].Num() == doctest::Approx(1000));
  CHECK(infos[0]["health"]["estimated_count"].Num() == doctest::Approx(2000).epsilon(0.03));

  RunResult metrics = Run({"info", "--metrics", over, ok, scalable});
  REQUIRE_MESSAGE(metrics.exit_code == 0, metrics.err);
  const std::vector<MetricSample> samples = ParseExposition(metrics.out);
  // One sample per file per metric, and per state for the state.
  const std::vector<std::pair<std::string, std::string>> gauges = {
      {"bloomery_filter_fill_ratio", "fill_ratio"},
      {"bloomery_filter_estimated_fpr", "estimated_fpr"},
      {"bloomery_filter_planned_fpr", "planned_fpr"},
      {"bloomery_filter_health_ratio", "health_ratio"},
      {"bloomery_filter_estimated_count", "estimated_count"},
      {"bloomery_filter_estimated_count_error", "estimated_count_error"},
      {"bloomery_filter_capacity", "capacity"}};
  CHECK(samples.size() == files.size() * (gauges.size() + 1 + 3));
  for (size_t i = 0; i < files.size(); ++i) {
    CAPTURE(files[i]);
    const Json& health = infos[i]["health"];
    std::unordered_set<std::string> seen;
    int states_set = 0;
    for (const MetricSample& s : samples) {
      if (s.Label("file") != files[i]) continue;
      CHECK(s.Label("kind") == infos[i]["kind"].string);
      seen.insert(s.name);
      if (s.name == "bloomery_filter_state") {
        const bool is = s.Label("state") == health["state"].string;
        CHECK(s.value == (is ? 1 : 0));
        states_set += static_cast<int>(s.value);
      } else if (s.name == "bloomery_filter_memory_bytes") {
        CHECK(s.value == infos[i]["memory_bytes"].Num());
      } else {
        bool known = false;
        for (const auto& [metric, field] : gauges) {
          if (metric != s.name) continue;
          known = true;
          // The same double, printed by two writers (shortest round trip, nlohmann's %.17g).
          CHECK(s.value == doctest::Approx(health[field].Num()).epsilon(1e-15));
        }
        CHECK(known);
      }
    }
    CHECK(states_set == 1);
    CHECK(seen.size() == gauges.size() + 2);
  }

  // A file that does not load is left out and named; the others are still printed; exit 1.
  RunResult partial = Run({"info", "--metrics", over, Scratch().File("no_such.bloom")});
  CHECK(partial.exit_code == 1);
  CHECK(Contains(partial.err, "no_such.bloom"));
  CHECK(ParseExposition(partial.out).size() == gauges.size() + 1 + 3);
  // Several files without --metrics, and --metrics with --json, are usage errors.
  CHECK(Run({"info", over, ok}).exit_code != 0);
  CHECK(Run({"info", "--metrics", "--json", over}).exit_code != 0);
}

TEST_CASE("info --metrics writes a name that is not UTF-8 as valid UTF-8, bad bytes as U+FFFD") {
  // Bytes no UTF-8 decoder takes, each replaced by one U+FFFD but for a truncated sequence (one for
  // its bytes, as Python and the JSON output replace them): a lone continuation, an overlong '/',
  // a surrogate, a truncated sequence, F5; then a valid two-byte and four-byte character, kept.
  const std::string name =
      "metrics_\x80_\xC0\xAF_\xED\xA0\x80_\xE2\x82_\xF5_\xC3\xA9_\xF0\x9F\x8C\xB8.bloom";
  const std::string file = Scratch().File(name);
  Build({"--capacity", "1000"}, file, WriteLines("metrics_utf8.txt", NumberedLines("u", 0, 100)));
  RunResult run = Run({"info", "--metrics", file});
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const std::vector<MetricSample> samples = ParseExposition(run.out);
  REQUIRE(!samples.empty());
  const std::string fffd = "\xEF\xBF\xBD";
  const std::string expected =
      Scratch().File(absl::StrCat("metrics_", fffd, "_", fffd, fffd, "_", fffd, fffd, fffd, "_",
                                  fffd, "_", fffd, "_\xC3\xA9_\xF0\x9F\x8C\xB8.bloom"));
  for (const MetricSample& sample : samples) CHECK(sample.Label("file") == expected);
  // The name as info --json writes it.
  RunResult json = Run({"info", "--json", file});
  REQUIRE_MESSAGE(json.exit_code == 0, json.err);
  CHECK(ParseJson(json.out)["file"].string == expected);
}

// ---------------------------------------------------------------------------------------------
// Files that are not whole or not bloomery's: DIRTY, mapped read-write, corrupt, pybloom-live

TEST_CASE("a DIRTY file: refused by default, read with --allow-dirty, made whole by repair") {
  const std::string file = Scratch().File("dirty.bloom");
  Build({"--capacity", "1000"}, file, WriteLines("dirty_in.txt", {"before"}));
  {
    // A read-write mapping that is never flushed: what a crash leaves behind.
    absl::StatusOr<BlockedFilter> mapped = BlockedFilter::Map(file, MapMode::kReadWrite);
    REQUIRE(mapped.ok());
    mapped->Insert(std::string_view("during"));
  }
  const std::string keys = WriteLines("dirty_keys.txt", {"before", "during"});
  RunResult refused = Run({"query", file, keys});
  CHECK(refused.exit_code == 1);
  CHECK(Contains(refused.err, "dirty.bloom"));
  RunResult allowed = Run({"query", "--allow-dirty", file, keys});
  CHECK(allowed.exit_code == 0);
  CHECK(allowed.out == "before\nduring\n");

  RunResult repaired = Run({"repair", file});
  REQUIRE_MESSAGE(repaired.exit_code == 0, repaired.err);
  CHECK(Contains(repaired.err, "DIRTY cleared"));
  const Json info = ParseJson(Run({"info", file, "--json"}).out);
  CHECK_FALSE(info["dirty"].boolean);
  CHECK(info["checksums_verified"].boolean);
  CHECK(Run({"query", file, keys}).out == "before\nduring\n");
  RunResult clean = Run({"repair", file});
  CHECK(clean.exit_code == 0);
  CHECK(Contains(clean.err, "not dirty"));
  CHECK(Run({"repair", Scratch().File("no_such_dirty.bloom")}).exit_code == 1);
}

TEST_CASE("a file mapped read-write is not replaced under its mapping: updates wait or fail") {
  const std::string file = Scratch().File("mapped.bloom");
  Build({"--capacity", "1000"}, file, WriteLines("mapped_in.txt", {"before"}));
  const std::string more = WriteLines("mapped_more.txt", {"more"});
  {
    absl::StatusOr<BlockedFilter> mapped = BlockedFilter::Map(file, MapMode::kReadWrite);
    REQUIRE(mapped.ok());
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"add", "--no-wait", file, more},
          std::vector<std::string>{"repair", "--no-wait", file}}) {
      RunResult refused = Run(args);
      CHECK(refused.exit_code == 1);
      CHECK(Contains(refused.err, absl::StrCat("locked by pid ", getpid())));
    }
    mapped->Insert(std::string_view("during"));
    REQUIRE(mapped->Flush().ok());
  }
  RunResult added = Run({"add", file, more});
  REQUIRE_MESSAGE(added.exit_code == 0, added.err);
  CHECK(Run({"query", file, WriteLines("mapped_keys.txt", {"before", "during", "more"})}).out ==
        "before\nduring\nmore\n");
}

TEST_CASE("format errors name the file they are about") {
  const std::string input = WriteLines("named_in.txt", NumberedLines("n", 0, 500));
  std::vector<std::string> files;
  for (const char* name : {"g1.bloom", "g2.bloom", "g3.bloom"}) {
    files.push_back(Scratch().File(name));
    Build({"--capacity", "1000"}, files.back(), input);
  }
  std::string bytes = ReadFile(files[2]);
  bytes.back() = static_cast<char>(bytes.back() ^ 0x01);
  WriteFile(files[2], bytes);
  RunResult r =
      Run({"merge", "-o", Scratch().File("named_out.bloom"), files[0], files[1], files[2]});
  CHECK(r.exit_code == 1);
  CHECK(Contains(r.err, "g3.bloom"));
  CHECK_FALSE(Contains(r.err, "g1.bloom"));
}

// pybloom-live's file headers (little-endian), as its pybloom.py writes them: a BloomFilter's
// `<dQQQQ` (error_rate, num_slices, bits_per_slice, capacity, count) and a ScalableBloomFilter's
// `<idQd` and `<l` (scale, ratio, initial_capacity, error_rate; the number of filters).
std::string PybloomHeader(double error_rate, uint64_t slices, uint64_t bits_per_slice,
                          uint64_t capacity, uint64_t count) {
  std::string header(40, '\0');
  std::memcpy(header.data(), &error_rate, 8);
  std::memcpy(header.data() + 8, &slices, 8);
  std::memcpy(header.data() + 16, &bits_per_slice, 8);
  std::memcpy(header.data() + 24, &capacity, 8);
  std::memcpy(header.data() + 32, &count, 8);
  return header;
}

std::string PybloomScalableHeader(int32_t scale, double ratio, uint64_t initial_capacity,
                                  double error_rate, int32_t filters) {
  std::string header(32, '\0');
  std::memcpy(header.data(), &scale, 4);
  std::memcpy(header.data() + 4, &ratio, 8);
  std::memcpy(header.data() + 12, &initial_capacity, 8);
  std::memcpy(header.data() + 20, &error_rate, 8);
  std::memcpy(header.data() + 28, &filters, 4);
  return header;
}

TEST_CASE("pybloom-live files and tofile()'s are named, with the call that opens them") {
  // BloomFilter(10, 0.1) with 8 keys: 4 slices of 12 bits, 6 bytes of bits.
  const std::string bloom = PybloomHeader(0.1, 4, 12, 10, 8) + std::string(6, '\x5a');
  const std::string bloom_file = Scratch().File("pybloom.bin");
  WriteFile(bloom_file, bloom);
  for (const char* command : {"info", "query"}) {
    RunResult r = Run({command, bloom_file});
    CHECK(r.exit_code == 1);
    CHECK_MESSAGE(Contains(r.err,
                           "not a bloomery filter file: a pybloom-live file (BloomFilter, "
                           "capacity 10, error rate 0.1, count 8, 4 slices of 12 bits): "
                           "open it with bloomery.BloomFilter.fromfile in Python"),
                  r.err);
  }
  // A size its header does not imply is not named.
  WriteFile(bloom_file, bloom.substr(0, bloom.size() - 1));
  RunResult short_bits = Run({"info", bloom_file});
  CHECK(short_bits.exit_code == 1);
  CHECK_FALSE(Contains(short_bits.err, "pybloom-live"));
  CHECK(Contains(short_bits.err, "not a bloomery filter file"));

  // ScalableBloomFilter(100, 0.001, mode=2) with one filter: its length, then its file.
  std::string scalable = PybloomScalableHeader(2, 0.9, 100, 0.001, 1);
  const uint64_t length = bloom.size();
  scalable.append(reinterpret_cast<const char*>(&length), 8);
  scalable += bloom;
  const std::string scalable_file = Scratch().File("pybloom_scalable.bin");
  WriteFile(scalable_file, scalable);
  RunResult r = Run({"info", scalable_file, "--json"});
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(Contains(r.err,
                         "not a bloomery filter file: a pybloom-live file "
                         "(ScalableBloomFilter, initial capacity 100, error rate 0.001, "
                         "scale 2, 1 filters): open it with "
                         "bloomery.ScalableBloomFilter.fromfile in Python"),
                r.err);
  WriteFile(scalable_file, scalable + "x");
  CHECK_FALSE(Contains(Run({"info", scalable_file}).err, "pybloom-live"));

  // bloomery.BloomFilter.tofile(): pybloom-live's header (bits_per_slice 0), then bloomery's file.
  const std::string plain = Scratch().File("tofile_plain.bloom");
  Build({"--capacity", "1000", "--fpr", "0.01"}, plain,
        WriteLines("tofile_keys.txt", NumberedLines("t", 0, 3)));
  const std::string wrapped = Scratch().File("tofile.bin");
  WriteFile(wrapped, PybloomHeader(0.01, 7, 0, 1000, 3) + ReadFile(plain));
  for (const char* command : {"info", "query"}) {
    RunResult w = Run({command, wrapped});
    CHECK(w.exit_code == 1);
    CHECK_MESSAGE(Contains(w.err,
                           "not a bloomery filter file: a bloomery.BloomFilter.tofile() "
                           "file (pybloom-live's 40-byte header: capacity 1000, error rate "
                           "0.01, count 3; then a bloomery file): open it with "
                           "bloomery.load or bloomery.BloomFilter.fromfile in Python, or "
                           "drop the header with `tail -c +41 FILE > FILE.bloom`"),
                  w.err);
  }
  // What the message advises gives back bloomery's file.
  WriteFile(wrapped, ReadFile(wrapped).substr(40));
  RunResult stripped = Run({"query", wrapped}, JoinLines(NumberedLines("t", 0, 3)));
  REQUIRE_MESSAGE(stripped.exit_code == 0, stripped.err);
  CHECK(stripped.out == JoinLines(NumberedLines("t", 0, 3)));
}

}  // namespace
}  // namespace bloomery::cli_test
