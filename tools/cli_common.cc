// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "cli_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace bloomery::cli {
namespace {

// Largest value a number may take: keeps every later product (bits = bytes * 8, keys * bits per
// key) away from overflow's edge.
constexpr uint64_t kMaxNumber = uint64_t{1} << 62;

absl::Status BadNumber(std::string_view text, std::string_view what) {
  return UsageError(absl::StrCat("\"", AsAbsl(text), "\" is not ", AsAbsl(what)));
}

// Decimal notation only (absl::SimpleAtod alone would also take "0x10", "inf", "nan" and a sign):
// a mantissa, an exponent, then a unit's suffix.
constexpr std::string_view kDecimal = R"(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)";

}  // namespace

absl::Status UsageError(std::string_view message) {
  return absl::InvalidArgumentError(AsAbsl(message));
}
absl::Status InputError(std::string_view message) {
  return absl::FailedPreconditionError(AsAbsl(message));
}

int ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  return status.code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitBadInput;
}

absl::StatusOr<uint64_t> ParseNumber(std::string_view text, Unit unit) {
  static const std::regex kPower(R"(([0-9]+)\^([0-9]+))");
  // Counts take k or K for 1000; bits and bytes K for 1024; bytes may add B or iB to K, M, G, T.
  static const std::regex kForms[] = {
      std::regex(absl::StrCat(AsAbsl(kDecimal), "([kKMGT]?)")),
      std::regex(absl::StrCat(AsAbsl(kDecimal), "([KMGT]?)")),
      std::regex(absl::StrCat(AsAbsl(kDecimal), "(?:([KMGT])(?:i?B)?)?")),
  };
  const std::string_view what =
      unit == Unit::kCount  ? "a whole number (e.g. 1000000, 1e6, 2^20, 10M)"
      : unit == Unit::kBits ? "a number of bits (e.g. 1048576, 2^20, 1G; not bytes: no B)"
                            : "a size (e.g. 1048576, 2^20, 4G, 1.5GiB)";
  const std::string original(text);
  const absl::Status too_large = UsageError(absl::StrCat("\"", original, "\" is too large"));
  std::smatch match;
  if (std::regex_match(original, match, kPower)) {
    uint64_t base = 0;
    uint32_t exponent = 0;
    if (!absl::SimpleAtoi(match.str(1), &base) || !absl::SimpleAtoi(match.str(2), &exponent)) {
      return too_large;
    }
    uint64_t value = 1;
    for (uint32_t i = 0; i < exponent; ++i) {
      if (__builtin_mul_overflow(value, base, &value) || value > kMaxNumber) return too_large;
    }
    return value;
  }
  if (!std::regex_match(original, match, kForms[static_cast<int>(unit)])) {
    return BadNumber(original, what);
  }
  const std::string suffix = match.str(3);
  const size_t power = suffix.empty()
                           ? std::string_view::npos
                           : std::string_view("KMGT").find(suffix == "k" ? 'K' : suffix[0]);
  const double multiplier =
      power == std::string_view::npos
          ? 1
          : std::pow(unit == Unit::kCount ? 1000.0 : 1024.0, static_cast<double>(power + 1));
  const std::string number = match.str(1) + match.str(2);
  uint64_t whole = 0;
  uint64_t value = 0;
  if (absl::SimpleAtoi(number, &whole)) {  // digits only: exact, whatever its size
    if (__builtin_mul_overflow(whole, static_cast<uint64_t>(multiplier), &value) ||
        value > kMaxNumber) {
      return too_large;
    }
    return value;
  }
  double mantissa = 0;
  if (!absl::SimpleAtod(number, &mantissa)) return BadNumber(original, what);
  const double scaled = mantissa * multiplier;
  if (!(scaled < static_cast<double>(kMaxNumber))) return too_large;
  if (scaled != std::floor(scaled)) {
    return UsageError(absl::StrCat("\"", original, "\" is not a whole number"));
  }
  return static_cast<uint64_t>(scaled);
}

absl::StatusOr<double> ParseFraction(std::string_view text) {
  static const std::regex kFraction(absl::StrCat(AsAbsl(kDecimal), "(%?)"));
  constexpr std::string_view kWhat = "a probability in (0, 1) (e.g. 0.01, 1e-3, 1%)";
  const std::string original(text);
  std::smatch match;
  double value = 0;
  if (!std::regex_match(original, match, kFraction) ||
      !absl::SimpleAtod(match.str(1) + match.str(2), &value)) {
    return BadNumber(original, kWhat);
  }
  if (match.length(3) != 0) value /= 100;
  if (!(value > 0 && value < 1)) return BadNumber(original, kWhat);
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

CLI::Option* AddNumber(CLI::App& app, const std::string& name, uint64_t& out, Unit unit,
                       const std::string& help) {
  return AddParsed(app, name, out, help,
                   [unit](std::string_view t) { return ParseNumber(t, unit); })
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
  return AddParsed(app, name, out, help,
                   [min, max](std::string_view text) -> absl::StatusOr<uint32_t> {
                     uint32_t value = 0;
                     if (text.empty() ||
                         text.find_first_not_of("0123456789") != std::string_view::npos ||
                         !absl::SimpleAtoi(AsAbsl(text), &value) || value < min || value > max) {
                       return UsageError(absl::StrFormat("\"%s\" is not a whole number in [%d, %d]",
                                                         text, min, max));
                     }
                     return value;
                   })
      ->type_name("N");
}

CLI::Option* AddFlag(CLI::App& app, const std::string& name, bool& out, const std::string& help) {
  return app.add_flag(name, out, help)->disable_flag_override();
}

void SizingFlags::Add(CLI::App& app, const std::string& capacity_help,
                      const std::string& fpr_help) {
  this->app = &app;
  AddNumber(app, "--capacity", capacity, Unit::kCount, capacity_help);
  AddFraction(app, "--fpr", fpr, fpr_help);
  AddNumber(app, "--bits", bits, Unit::kBits,
            "a given size in bits instead: 2^30, 1G (K, M, G, T: powers of 1024)");
  AddInteger(app, "--hashes", hashes, kMinHashes, kMaxHashes,
             "probes per key, 1..16 (default: the planner's choice)");
}

absl::StatusOr<FilterOptions> SizingFlags::Options(uint64_t default_capacity,
                                                   double default_fpr) const {
  FilterOptions options;
  options.hashes = hashes;
  options.capacity = Given("--capacity") ? capacity : default_capacity;
  if (Given("--capacity") && capacity == 0) return UsageError("--capacity must be at least 1");
  if (Given("--bits")) {
    if (Given("--fpr")) {
      return UsageError(
          "--fpr and --bits do not go together (--bits fixes the size; --fpr asks the planner "
          "for one)");
    }
    if (bits == 0) return UsageError("--bits must be at least 1");
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

CLI::Option* AddMaxMemory(CLI::App& app, uint64_t& out) {
  return AddNumber(
      app, "--max-memory", out, Unit::kBytes,
      "refuse a filter over SIZE of memory (4G, 512M; default: the RAM or cgroup limit)");
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

}  // namespace bloomery::cli
