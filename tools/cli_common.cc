// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "cli_common.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace bloomery::cli {
namespace {

absl::Status BadNumber(std::string_view text, std::string_view what) {
  return UsageError(absl::StrCat("\"", AbslView(text), "\" is not ", AbslView(what)));
}

// The length of the run of decimal digits at the start of `text`.
size_t Digits(std::string_view text) {
  const size_t end = text.find_first_not_of("0123456789");
  return end == std::string_view::npos ? text.size() : end;
}

// Decimal notation only (absl::SimpleAtod alone would also take "0x10", "inf", "nan" and a sign):
// the longest prefix of `text` that is a mantissa ("12", "1.", "1.5", ".5") and an optional
// exponent ("e6", "E+6", "e-3"); empty if there is none. Nothing that may follow it (a unit's
// suffix, '%') is a digit, '.' or an exponent, so the longest prefix is the only one.
std::string_view DecimalPrefix(std::string_view text) {
  size_t at = Digits(text);
  const bool whole = at > 0;
  if (at < text.size() && text[at] == '.') {
    const size_t fraction = Digits(text.substr(at + 1));
    if (!whole && fraction == 0) return {};
    at += 1 + fraction;
  }
  if (at == 0) return {};
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    size_t exponent = at + 1;
    if (exponent < text.size() && (text[exponent] == '+' || text[exponent] == '-')) ++exponent;
    const size_t digits = Digits(text.substr(exponent));
    if (digits > 0) at = exponent + digits;
  }
  return text.substr(0, at);
}

// One convention for every number flag (kNumberConvention): K (or k), M, G, T are powers of 1000
// and Ki, Mi, Gi, Ti powers of 1024, for counts, bits and bytes alike; a size may end in B.
struct Suffix {
  std::string_view text;
  double multiplier;
};
constexpr double kKilo = 1e3, kKibi = 1024.0;
constexpr Suffix kSuffixes[] = {{"", 1},
                                {"k", kKilo},
                                {"K", kKilo},
                                {"M", 1e6},
                                {"G", 1e9},
                                {"T", 1e12},
                                {"Ki", kKibi},
                                {"Mi", kKibi* kKibi},
                                {"Gi", kKibi* kKibi* kKibi},
                                {"Ti", kKibi* kKibi* kKibi* kKibi}};

// The multiplier `suffix` stands for in `unit`, or 0 if the unit does not take it: one of
// kSuffixes, and for a size the same followed by B ("4GB", "4GiB", "512B").
double SuffixMultiplier(std::string_view suffix, Unit unit) {
  if (unit == Unit::kBytes && suffix.ends_with('B')) suffix.remove_suffix(1);
  for (const Suffix& s : kSuffixes) {
    if (s.text == suffix) return s.multiplier;
  }
  return 0;
}

}  // namespace

absl::Status UsageError(std::string_view message) {
  return absl::InvalidArgumentError(AbslView(message));
}
absl::Status InputError(std::string_view message) {
  return absl::FailedPreconditionError(AbslView(message));
}

absl::Status CheckWritableBeside(const char* flag, const std::string& path) {
  std::filesystem::path probe = std::filesystem::path(path).parent_path();
  if (probe.empty()) probe = ".";
  std::string name = (probe / ".bloomery-probe.XXXXXX").string();
  const int fd = mkstemp(name.data());
  if (fd < 0) {
    return InputError(
        absl::StrCat(flag, " ", path, ": cannot write beside it (", std::strerror(errno), ")"));
  }
  close(fd);
  unlink(name.c_str());
  return absl::OkStatus();
}

int ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  return status.code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitBadInput;
}

absl::StatusOr<uint64_t> ParseNumber(std::string_view text, Unit unit) {
  const std::string_view what =
      unit == Unit::kCount  ? "a whole number (e.g. 1000000, 1e6, 2^20, 10M, 1Mi)"
      : unit == Unit::kBits ? "a number of bits (e.g. 8000000, 2^23, 8M, 1Gi; not bytes: no B)"
                            : "a size (e.g. 1048576, 2^20, 4G, 4GB, 1.5GiB)";
  const absl::Status too_large = UsageError(absl::StrCat("\"", AbslView(text), "\" is too large"));
  // A power: digits, '^', digits.
  const size_t caret = Digits(text);
  if (caret > 0 && caret + 1 < text.size() && text[caret] == '^' &&
      Digits(text.substr(caret + 1)) == text.size() - caret - 1) {
    uint64_t base = 0;
    uint32_t exponent = 0;
    if (!absl::SimpleAtoi(AbslView(text.substr(0, caret)), &base) ||
        !absl::SimpleAtoi(AbslView(text.substr(caret + 1)), &exponent)) {
      return too_large;
    }
    if (exponent == 0) return 1;
    if (base <= 1) return base;  // 0 or 1 at any power: no need to multiply it out
    uint64_t value = 1;
    for (uint32_t i = 0; i < exponent; ++i) {
      if (__builtin_mul_overflow(value, base, &value) || value > kMaxNumber) return too_large;
    }
    return value;
  }
  const std::string_view number = DecimalPrefix(text);
  const double multiplier = number.empty() ? 0 : SuffixMultiplier(text.substr(number.size()), unit);
  if (multiplier == 0) return BadNumber(text, what);
  uint64_t whole = 0;
  uint64_t value = 0;
  if (absl::SimpleAtoi(AbslView(number), &whole)) {  // digits only: exact, whatever its size
    if (__builtin_mul_overflow(whole, static_cast<uint64_t>(multiplier), &value) ||
        value > kMaxNumber) {
      return too_large;
    }
    return value;
  }
  double mantissa = 0;
  if (!absl::SimpleAtod(AbslView(number), &mantissa)) return BadNumber(text, what);
  const double scaled = mantissa * multiplier;
  if (!(scaled < static_cast<double>(kMaxNumber))) return too_large;
  if (scaled != std::floor(scaled)) {
    return UsageError(
        absl::StrFormat("\"%s\" is %.15g, not a whole number", AbslView(text), scaled));
  }
  return static_cast<uint64_t>(scaled);
}

absl::StatusOr<double> ParseFraction(std::string_view text) {
  constexpr std::string_view kWhat = "a probability in (0, 1) (e.g. 0.01, 1e-3, 1%)";
  const std::string_view number = DecimalPrefix(text);
  const std::string_view suffix = text.substr(number.size());
  double value = 0;
  if (number.empty() || !(suffix.empty() || suffix == "%") ||
      !absl::SimpleAtod(AbslView(number), &value)) {
    return BadNumber(text, kWhat);
  }
  if (!suffix.empty()) value /= 100;
  if (!(value > 0 && value < 1)) return BadNumber(text, kWhat);
  return value;
}

namespace {

// A flag taking one value, turned into `T` by `parse` while the command line is parsed.
template <typename T, typename Parse>
CLI::Option* AddParsed(CLI::App& app, const std::string& name, T& out, const std::string& help,
                       Parse parse) {
  return app.add_option_function<std::string>(
      name,
      [&out, name, parse](const std::string& text) {
        absl::StatusOr<T> value = parse(text);
        if (!value.ok()) {
          const std::string flag = name.substr(name.find("--"));
          throw CLI::ValidationError(absl::StrCat(flag, ": ", value.status().message()));
        }
        out = *value;
      },
      help);
}

}  // namespace

std::string FormatRange(uint64_t min, uint64_t max) {
  const auto bound = [](uint64_t value) {
    if (value >= 65536 && (value & (value - 1)) == 0) {
      return absl::StrCat("2^", __builtin_ctzll(value));
    }
    return FormatCount(value);
  };
  return absl::StrCat("[", bound(min), ", ", bound(max), "]");
}

CLI::Option* AddNumber(CLI::App& app, const std::string& name, uint64_t& out, Unit unit,
                       NumberRange range, const std::string& help) {
  return AddParsed(app, name, out, help,
                   [unit, range](std::string_view text) -> absl::StatusOr<uint64_t> {
                     absl::StatusOr<uint64_t> value = ParseNumber(text, unit);
                     if (value.ok() && (*value < range.min || *value > range.max)) {
                       return UsageError(absl::StrCat("\"", AbslView(text), "\" is out of range ",
                                                      FormatRange(range.min, range.max)));
                     }
                     return value;
                   })
      ->type_name(unit == Unit::kCount  ? "N"
                  : unit == Unit::kBits ? "BITS"
                                        : "SIZE");
}

CLI::Option* AddFraction(CLI::App& app, const std::string& name, double& out,
                         const std::string& help) {
  return AddParsed(app, name, out, help, ParseFraction)->type_name("P");
}

CLI::Option* AddInteger(CLI::App& app, const std::string& name, uint32_t& out, uint32_t min,
                        uint32_t max, const std::string& help) {
  return AddParsed(
             app, name, out, help,
             [min, max](std::string_view text) -> absl::StatusOr<uint32_t> {
               uint32_t value = 0;
               if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos ||
                   !absl::SimpleAtoi(AbslView(text), &value) || value < min || value > max) {
                 return UsageError(absl::StrCat(
                     "\"", AbslView(text), "\" is not a whole number in ", FormatRange(min, max)));
               }
               return value;
             })
      ->type_name("N");
}

CLI::Validator FileName() {
  return CLI::Validator(
      [](const std::string& name) { return name.empty() ? "needs a file name" : std::string(); },
      "");
}

CLI::Option* AddFlag(CLI::App& app, const std::string& name, bool& out, const std::string& help) {
  return app.add_flag(name, out, help)->disable_flag_override();
}

void SizingFlags::Add(CLI::App& app, const std::string& capacity_help,
                      const std::string& fpr_help) {
  this->app = &app;
  AddNumber(app, "--capacity", capacity, Unit::kCount, {}, capacity_help);
  CLI::Option* fpr_flag = AddFraction(app, "--fpr", fpr, fpr_help);
  // --bits fixes the size; --fpr asks the planner for one.
  AddNumber(app, "--bits", bits, Unit::kBits, {}, "a given size in bits instead: 2^30, 1Gi, 8G")
      ->excludes(fpr_flag);
  AddInteger(app, "--hashes", hashes, kMinHashes, kMaxHashes,
             "probes per key, 1..16 (default: the planner's choice)");
}

absl::StatusOr<FilterOptions> SizingFlags::Options(uint64_t default_capacity,
                                                   double default_fpr) const {
  FilterOptions options;
  options.hashes = hashes;
  options.capacity = Given("--capacity") ? capacity : default_capacity;
  if (Given("--bits")) {
    if (hashes == 0 && !Given("--capacity")) {
      return UsageError("--bits needs --hashes, or --capacity to choose them for");
    }
    options.bits = bits;
    options.capacity = Given("--capacity") ? capacity : 0;
    return options;
  }
  if (options.capacity == 0) return UsageError("give --capacity N (and --fpr P), or --bits B");
  options.fpr = Given("--fpr") ? fpr : default_fpr;
  return options;
}

CLI::Option* AddMaxMemory(CLI::App& app, uint64_t& out, const std::string& help) {
  return AddNumber(app, "--max-memory", out, Unit::kBytes, kMemoryCapRange,
                   help.empty() ? "refuse a filter over SIZE of memory (4GiB, 512M; default, or "
                                  "0: the RAM or cgroup limit)"
                                : help);
}

CLI::Option* AddStripCr(CLI::App& app, bool& out) {
  return AddFlag(app, "--strip-cr", out,
                 "drop one '\\r' at the end of each line (CRLF input); without it \"a\\r\" and "
                 "\"a\" are different keys");
}

CLI::Option* AddAllowDirty(CLI::App& app, bool& out) {
  return AddFlag(
      app, "--allow-dirty", out,
      "load a file left DIRTY by a read-write mapping (a crash, or one still mapped); "
      "its checksums may be stale and are not verified (bloomery repair makes it whole)");
}

CLI::Option* AddNoWait(CLI::App& app, bool& out) {
  return AddFlag(app, "--no-wait", out,
                 "fail at once (exit 1, naming the holder's pid) when another bloomery process is "
                 "updating the file; by default wait for it, so neither loses the other's keys");
}

void PrintJson(const Json& json) {
  const std::string text = json.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
}

std::string TextTable::Render() const {
  std::vector<size_t> width;
  for (const auto& row : rows_) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows_) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      absl::StrAppend(&line, c == 0 ? row[c] + pad : absl::StrCat("  ", pad, row[c]));
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

std::string BlockLayoutList() { return LayoutList({}, ", "); }

absl::StatusOr<Layout> ParseLayoutFlag(std::string_view name, bool allow_auto,
                                       bool allow_partitioned) {
  const std::optional<Layout> layout = ParseLayout(name);
  if (layout && (allow_partitioned || *layout != Layout::kPartitioned) &&
      (allow_auto || *layout != Layout::kAuto)) {
    return *layout;
  }
  return UsageError(absl::StrCat("unknown --layout \"", AbslView(name), "\" (", BlockLayoutList(),
                                 allow_partitioned ? ", partitioned" : "",
                                 allow_auto ? ", auto" : "", ")"));
}

std::string FormatCount(uint64_t value) {
  std::string digits = absl::StrCat(value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string FormatBytes(double bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  return unit == 0 ? absl::StrFormat("%.0f B", bytes)
                   : absl::StrFormat("%.2f %s", bytes, kUnits[unit]);
}

std::string FormatFpr(double fpr) { return absl::StrFormat("%.3g", fpr); }

absl::Status WriteTextFile(const std::string& path, const std::string& contents) {
  std::FILE* file = std::fopen(path.c_str(), "wbe");
  if (file == nullptr) {
    return InputError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  const bool written = std::fwrite(contents.data(), 1, contents.size(), file) == contents.size();
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) return absl::DataLossError(absl::StrCat("writing ", path, " failed"));
  return absl::OkStatus();
}

}  // namespace bloomery::cli
