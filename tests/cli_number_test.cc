// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_number_test.cc: every form the `bloomery` number flags accept or refuse (ParseNumber and
// ParseFraction, tools/cli_common.h), as a table: a value for each accepted form, the message for
// each refused one. A refusal is a usage error (InvalidArgument: exit code 2).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli_common.h"

namespace bloomery::cli {
namespace {

constexpr uint64_t kMax = uint64_t{1} << 62;  // the largest number a flag takes
constexpr uint64_t kKi = 1024;
constexpr uint64_t kMi = kKi * kKi;
constexpr uint64_t kGi = kMi * kKi;
constexpr uint64_t kTi = kGi * kKi;

// What a refused form's message says; the input is quoted ahead of it.
constexpr std::string_view kNotCount = " is not a whole number (e.g. 1000000, 1e6, 2^20, 10M, 1Mi)";
constexpr std::string_view kNotBits =
    " is not a number of bits (e.g. 8000000, 2^23, 8M, 1Gi; not bytes: no B)";
constexpr std::string_view kNotSize = " is not a size (e.g. 1048576, 2^20, 4G, 4GB, 1.5GiB)";
constexpr std::string_view kTooLarge = " is too large";
constexpr std::string_view kNotFraction = " is not a probability in (0, 1) (e.g. 0.01, 1e-3, 1%)";

struct NumberCase {
  std::string_view text;
  Unit unit;
  uint64_t value;          // when accepted
  std::string_view error;  // when refused: the message after the quoted text
};

const std::vector<NumberCase>& NumberCases() {
  static const std::vector<NumberCase> cases = {
      // Plain digits, exact at any size up to 2^62.
      {"0", Unit::kCount, 0, ""},
      {"1000000", Unit::kCount, 1'000'000, ""},
      {"007", Unit::kCount, 7, ""},
      {"4611686018427387904", Unit::kCount, kMax, ""},
      {"4611686018427387905", Unit::kCount, 0, kTooLarge},
      {"18446744073709551616", Unit::kCount, 0, kTooLarge},  // past uint64_t: read as a double
      {"99999999999999999999999999", Unit::kBits, 0, kTooLarge},
      // Decimal notation: whole values only.
      {"1e6", Unit::kCount, 1'000'000, ""},
      {"1E6", Unit::kCount, 1'000'000, ""},
      {"1e+6", Unit::kCount, 1'000'000, ""},
      {"1.5e6", Unit::kCount, 1'500'000, ""},
      {"2.5e1", Unit::kCount, 25, ""},
      {"1.", Unit::kCount, 1, ""},
      {"1.0", Unit::kCount, 1, ""},
      {".5e1", Unit::kCount, 5, ""},
      {"1e0", Unit::kCount, 1, ""},
      {"0e5", Unit::kCount, 0, ""},
      {"1e-999", Unit::kCount, 0, ""},  // underflows to 0: whole
      {"1.5", Unit::kCount, 0, " is 1.5, not a whole number"},
      {".5", Unit::kCount, 0, " is 0.5, not a whole number"},
      {"1e-1", Unit::kCount, 0, " is 0.1, not a whole number"},
      {"1e30", Unit::kCount, 0, kTooLarge},
      {"1e999", Unit::kCount, 0, kTooLarge},
      {"4.611686018427387904e18", Unit::kCount, 0, kTooLarge},  // 2^62 as a double: not below it
      // Powers: digits ^ digits.
      {"2^20", Unit::kCount, uint64_t{1} << 20, ""},
      {"2^62", Unit::kCount, kMax, ""},
      {"2^63", Unit::kCount, 0, kTooLarge},
      {"2^99", Unit::kCount, 0, kTooLarge},
      {"4^31", Unit::kBits, kMax, ""},
      {"10^3", Unit::kBytes, 1000, ""},
      {"0^0", Unit::kCount, 1, ""},
      {"0^5", Unit::kCount, 0, ""},
      {"7^0", Unit::kCount, 1, ""},
      {"1^4294967295", Unit::kCount, 1, ""},
      {"1^4294967296", Unit::kCount, 0, kTooLarge},            // the exponent is past uint32_t
      {"18446744073709551616^1", Unit::kCount, 0, kTooLarge},  // the base is past uint64_t
      {"02^010", Unit::kCount, 1024, ""},
      {"2^", Unit::kCount, 0, kNotCount},
      {"^2", Unit::kCount, 0, kNotCount},
      {"2^2^2", Unit::kCount, 0, kNotCount},
      {"2.0^2", Unit::kCount, 0, kNotCount},
      {"2^1e1", Unit::kCount, 0, kNotCount},
      {"2^10k", Unit::kCount, 0, kNotCount},
      {"-2^2", Unit::kCount, 0, kNotCount},
      // Counts: k/K, M, G, T are powers of 1000.
      {"10M", Unit::kCount, 10'000'000, ""},
      {"1k", Unit::kCount, 1000, ""},
      {"1K", Unit::kCount, 1000, ""},
      {"1000k", Unit::kCount, 1'000'000, ""},
      {"2G", Unit::kCount, 2'000'000'000, ""},
      {"3T", Unit::kCount, 3'000'000'000'000, ""},
      {"1.5M", Unit::kCount, 1'500'000, ""},
      {"1e3k", Unit::kCount, 1'000'000, ""},
      {".5k", Unit::kCount, 500, ""},
      {"1.0005k", Unit::kCount, 0, " is 1000.5, not a whole number"},
      {"4611686T", Unit::kCount, 4'611'686'000'000'000'000, ""},
      {"4611687T", Unit::kCount, 0, kTooLarge},
      {"18446744073709551615T", Unit::kCount, 0, kTooLarge},  // the product overflows
      {"1m", Unit::kCount, 0, kNotCount},
      {"1g", Unit::kCount, 0, kNotCount},
      {"1KB", Unit::kCount, 0, kNotCount},
      {"1MiB", Unit::kCount, 0, kNotCount},
      // Ki, Mi, Gi, Ti: powers of 1024, for counts too.
      {"1Ki", Unit::kCount, kKi, ""},
      {"10Mi", Unit::kCount, 10 * kMi, ""},
      {"1.5Gi", Unit::kCount, 3 * kGi / 2, ""},
      {"2Ti", Unit::kCount, 2 * kTi, ""},
      {"1ki", Unit::kCount, 0, kNotCount},
      {"1KI", Unit::kCount, 0, kNotCount},
      {"1P", Unit::kCount, 0, kNotCount},
      {"1MM", Unit::kCount, 0, kNotCount},
      {"M", Unit::kCount, 0, kNotCount},
      // Bits: the same convention (1G is 10^9 bits, as 1G keys is 10^9 keys); no byte units.
      {"1G", Unit::kBits, 1'000'000'000, ""},
      {"1k", Unit::kBits, 1000, ""},
      {"1K", Unit::kBits, 1000, ""},
      {"1.5M", Unit::kBits, 1'500'000, ""},
      {"2T", Unit::kBits, 2'000'000'000'000, ""},
      {"1Gi", Unit::kBits, kGi, ""},
      {"1.5Mi", Unit::kBits, 3 * kMi / 2, ""},
      {"1073741824", Unit::kBits, kGi, ""},
      {"1GB", Unit::kBits, 0, kNotBits},
      {"1GiB", Unit::kBits, 0, kNotBits},
      {"8B", Unit::kBits, 0, kNotBits},
      // Bytes: the same, the suffix optionally followed by B.
      {"4G", Unit::kBytes, 4'000'000'000, ""},
      {"4GB", Unit::kBytes, 4'000'000'000, ""},
      {"4Gi", Unit::kBytes, 4 * kGi, ""},
      {"4GiB", Unit::kBytes, 4 * kGi, ""},
      {"1.5GiB", Unit::kBytes, 3 * kGi / 2, ""},
      {"2.5GiB", Unit::kBytes, 5 * kGi / 2, ""},
      {"2.6M", Unit::kBytes, 2'600'000, ""},  // was "not a whole number" as 2.6 x 2^20
      {"512M", Unit::kBytes, 512'000'000, ""},
      {"64KiB", Unit::kBytes, 64 * kKi, ""},
      {"1kB", Unit::kBytes, 1000, ""},
      {"1TB", Unit::kBytes, 1'000'000'000'000, ""},
      {"1e3Ki", Unit::kBytes, 1000 * kKi, ""},
      {"1048576", Unit::kBytes, kMi, ""},
      {"8B", Unit::kBytes, 8, ""},
      {"1.1Ki", Unit::kBytes, 0, " is 1126.4, not a whole number"},
      {"4194304Ti", Unit::kBytes, kMax, ""},
      {"4194305Ti", Unit::kBytes, 0, kTooLarge},
      {"8iB", Unit::kBytes, 0, kNotSize},
      {"1GiBB", Unit::kBytes, 0, kNotSize},
      {"1Gb", Unit::kBytes, 0, kNotSize},
      {"1gib", Unit::kBytes, 0, kNotSize},
      {"1KIB", Unit::kBytes, 0, kNotSize},
      // Nothing but the number: no space, sign, hex, words or trailing text.
      {"", Unit::kCount, 0, kNotCount},
      {".", Unit::kCount, 0, kNotCount},
      {"e5", Unit::kCount, 0, kNotCount},
      {"1e", Unit::kCount, 0, kNotCount},
      {"1e+", Unit::kCount, 0, kNotCount},
      {"1.e", Unit::kCount, 0, kNotCount},
      {"1..5", Unit::kCount, 0, kNotCount},
      {"1.5.", Unit::kCount, 0, kNotCount},
      {"1e5.5", Unit::kCount, 0, kNotCount},
      {"1e5e5", Unit::kCount, 0, kNotCount},
      {"12x", Unit::kCount, 0, kNotCount},
      {"1e6x", Unit::kCount, 0, kNotCount},
      {"-5", Unit::kCount, 0, kNotCount},
      {"+5", Unit::kCount, 0, kNotCount},
      {" 5", Unit::kCount, 0, kNotCount},
      {"5 ", Unit::kCount, 0, kNotCount},
      {"5\n", Unit::kCount, 0, kNotCount},
      {"0x10", Unit::kCount, 0, kNotCount},
      {"inf", Unit::kCount, 0, kNotCount},
      {"nan", Unit::kCount, 0, kNotCount},
      {"1,000", Unit::kCount, 0, kNotCount},
      {"1_000", Unit::kCount, 0, kNotCount},
      {"ten", Unit::kCount, 0, kNotCount},
      {std::string_view("1\0", 2), Unit::kCount, 0, kNotCount},
      {"4Q", Unit::kBits, 0, kNotBits},
      {"4Q", Unit::kBytes, 0, kNotSize},
      {"-1G", Unit::kBytes, 0, kNotSize},
  };
  return cases;
}

std::string_view UnitName(Unit unit) {
  return unit == Unit::kCount ? "count" : unit == Unit::kBits ? "bits" : "bytes";
}

TEST_CASE("ParseNumber accepts each form it documents and refuses the rest, saying why") {
  for (const NumberCase& c : NumberCases()) {
    CAPTURE(c.text);
    CAPTURE(UnitName(c.unit));
    const absl::StatusOr<uint64_t> parsed = ParseNumber(c.text, c.unit);
    if (c.error.empty()) {
      REQUIRE_MESSAGE(parsed.ok(), parsed.status().message());
      CHECK(*parsed == c.value);
    } else {
      REQUIRE_FALSE(parsed.ok());
      CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument);
      const std::string quoted = "\"" + std::string(c.text) + "\"";
      CHECK(std::string(parsed.status().message()) == quoted + std::string(c.error));
    }
  }
}

struct FractionCase {
  std::string_view text;
  double value;  // 0 when refused
};

TEST_CASE("ParseFraction takes a probability in (0, 1), as a decimal or a percentage") {
  const std::vector<FractionCase> cases = {
      {"0.01", 0.01}, {".01", 0.01},      {"1e-3", 1e-3},
      {"1E-3", 1e-3}, {"1e-300", 1e-300}, {"0.5", 0.5},
      {"1%", 0.01},   {"0.5%", 0.005},    {"99.9%", 0.999},
      {"1e1%", 0.1},  {"5e-1", 0.5},      {"0.999999", 0.999999},
      {"0", 0},       {"0.0", 0},         {"0%", 0},
      {"1", 0},       {"1.0", 0},         {"1.5", 0},
      {"100%", 0},    {"150%", 0},        {"1e-999", 0},  // underflows to 0
      {"1e999", 0},   {"-0.1", 0},        {"+0.1", 0},
      {"nan", 0},     {"inf", 0},         {"abc", 0},
      {"0x0.1", 0},   {"1e-", 0},         {"", 0},
      {".", 0},       {"%", 0},           {"1%%", 0},
      {"0.01 ", 0},   {" 0.01", 0},       {"0.01x", 0},
      {"1/100", 0},   {"1k", 0},          {"2^-1", 0},
  };
  for (const FractionCase& c : cases) {
    CAPTURE(c.text);
    const absl::StatusOr<double> parsed = ParseFraction(c.text);
    if (c.value != 0) {
      REQUIRE_MESSAGE(parsed.ok(), parsed.status().message());
      CHECK(*parsed == doctest::Approx(c.value).epsilon(1e-15));
    } else {
      REQUIRE_FALSE(parsed.ok());
      CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument);
      CHECK(std::string(parsed.status().message()) ==
            "\"" + std::string(c.text) + "\"" + std::string(kNotFraction));
    }
  }
}

}  // namespace
}  // namespace bloomery::cli
