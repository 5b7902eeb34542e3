// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_common.h: what every `bloomery` subcommand shares: flag parsing, strict number parsing,
// exit codes, a small JSON writer and human-readable formatting.
//
// Errors travel as absl::Status and become exit codes in one place (ExitCodeFor): InvalidArgument
// means the command line was wrong (exit 2), anything else means the input or a file was bad
// (exit 1). Messages go to stderr prefixed with "bloomery <subcommand>: ".
#ifndef BLOOMERY_TOOLS_CLI_COMMON_H_
#define BLOOMERY_TOOLS_CLI_COMMON_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bloomery/bloomery.h"

namespace bloomery::cli {

// Debian's Abseil is built with its own absl::string_view rather than an alias of
// std::string_view; StrCat, SimpleAtoi and Status take the former.
[[nodiscard]] inline absl::string_view AsAbsl(std::string_view s) { return {s.data(), s.size()}; }

inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;
inline constexpr int kExitUsage = 2;

// A usage error: exit code 2.
[[nodiscard]] absl::Status UsageError(std::string_view message);
// A bad input or file: exit code 1.
[[nodiscard]] absl::Status InputError(std::string_view message);
// 0 for OK, 2 for InvalidArgument (usage), 1 for everything else.
[[nodiscard]] int ExitCodeFor(const absl::Status& status);

// The SIMD target the filter kernels run on, as a short name (bloomery::ActiveSimdTarget()).
[[nodiscard]] std::string SimdTargetName();

struct FlagSpec {
  std::string_view name;  // without the leading "--" (or "-" for one letter)
  bool takes_value;
};

// The parsed command line of one subcommand: "--flag value", "--flag=value", boolean "--flag",
// positional arguments ("-" is a positional meaning stdin), and "--" ending the flags. A one-letter
// flag may also be written with one dash: "-o FILE".
class Args {
 public:
  // Errors (InvalidArgument): unknown flags, a value missing or given to a boolean flag, a flag
  // given twice. "--help" / "-h" are always accepted.
  [[nodiscard]] static absl::StatusOr<Args> Parse(int argc, char* const* argv,
                                                  std::initializer_list<FlagSpec> flags);

  [[nodiscard]] bool help() const { return help_; }
  [[nodiscard]] bool Has(std::string_view name) const;
  [[nodiscard]] std::optional<std::string_view> Value(std::string_view name) const;
  [[nodiscard]] const std::vector<std::string>& positional() const { return positional_; }

  // Typed values: `fallback` when the flag is absent; InvalidArgument naming the flag when bad.
  [[nodiscard]] absl::StatusOr<uint64_t> Count(std::string_view name, uint64_t fallback) const;
  [[nodiscard]] absl::StatusOr<uint64_t> Size(std::string_view name, uint64_t fallback) const;
  [[nodiscard]] absl::StatusOr<double> Fraction(std::string_view name, double fallback) const;
  [[nodiscard]] absl::StatusOr<uint32_t> Integer(std::string_view name, uint32_t fallback,
                                                 uint32_t min, uint32_t max) const;
  // Fails unless exactly `min`..`max` positional arguments were given.
  [[nodiscard]] absl::Status ExpectPositional(size_t min, size_t max) const;

 private:
  bool help_ = false;
  std::vector<std::pair<std::string, std::string>> values_;  // (name, value); "" for booleans
  std::vector<std::string> positional_;
};

// Strict number parsing. Nothing but the number may appear (no spaces, no sign, no trailing text).
// Counts: "1000000", "1e6", "1.5e6", "2^20", and decimal suffixes k/K, M, G, T (10^3 .. 10^12);
// the value must be a whole number below 2^63.
[[nodiscard]] absl::StatusOr<uint64_t> ParseCount(std::string_view text);
// Sizes (bytes or bits): as counts, but suffixes K, M, G, T are binary (2^10 .. 2^40) and may be
// followed by "B" or "iB": "4G" == "4GiB" == "4GB" == 2^32.
[[nodiscard]] absl::StatusOr<uint64_t> ParseSize(std::string_view text);
// A probability in (0, 1): "0.01", "1e-3", or a percentage "1%".
[[nodiscard]] absl::StatusOr<double> ParseFraction(std::string_view text);

// FilterOptions from the sizing flags shared by every subcommand that builds a filter:
// "--capacity N [--fpr P] [--hashes K]" (planned) or "--bits B [--hashes K] [--capacity N]" (a
// given geometry). Absent flags take the defaults. Errors (InvalidArgument): bad numbers, --fpr
// with --bits.
[[nodiscard]] absl::StatusOr<FilterOptions> SizingFromFlags(const Args& args,
                                                            uint64_t default_capacity,
                                                            double default_fpr);

// Builds JSON text; commas and nesting are tracked for the caller. Non-finite numbers become null.
class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Number(double value);
  JsonWriter& Integer(uint64_t value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  // The document, with a trailing newline.
  [[nodiscard]] std::string Finish();

 private:
  void BeforeValue();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

// Right-aligned text columns (the first column left-aligned), two spaces apart.
class TextTable {
 public:
  void AddRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  [[nodiscard]] std::string Render() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

// 1234567 -> "1,234,567".
[[nodiscard]] std::string FormatCount(uint64_t value);
// 1288490188 -> "1.20 GiB".
[[nodiscard]] std::string FormatBytes(double bytes);
// An FPR for people: "0.00977" or "9.77e-06".
[[nodiscard]] std::string FormatFpr(double fpr);

}  // namespace bloomery::cli

#endif  // BLOOMERY_TOOLS_CLI_COMMON_H_
