// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "cli_common.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace bloomery::cli {
namespace {

// Largest value a count or size may take: keeps every later product (bits = bytes * 8, keys * bits
// per key) away from overflow's edge.
constexpr uint64_t kMaxNumber = uint64_t{1} << 62;

absl::Status BadNumber(std::string_view text, std::string_view what) {
  return UsageError(absl::StrCat("\"", AsAbsl(text), "\" is not ", AsAbsl(what)));
}

bool MultiplyChecked(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out) && *out <= kMaxNumber;
}

// "<mantissa>[suffix]" or "<base>^<exponent>"; binary suffixes for sizes, decimal ones for counts.
absl::StatusOr<uint64_t> ParseNumber(std::string_view text, bool binary_suffixes) {
  const std::string_view what = binary_suffixes ? "a size (e.g. 1048576, 2^20, 4G, 1.5GiB)"
                                                : "a whole number (e.g. 1000000, 1e6, 2^20, 10M)";
  const std::string_view original = text;
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.')) {
    return BadNumber(original, what);
  }
  if (std::any_of(text.begin(), text.end(),
                  [](char c) { return std::isspace(static_cast<unsigned char>(c)); })) {
    return BadNumber(original, what);
  }
  if (const size_t caret = text.find('^'); caret != std::string_view::npos) {
    uint64_t base = 0;
    uint32_t exponent = 0;
    if (!absl::SimpleAtoi(AsAbsl(text.substr(0, caret)), &base) ||
        !absl::SimpleAtoi(AsAbsl(text.substr(caret + 1)), &exponent) ||
        !std::isdigit(static_cast<unsigned char>(text[caret + 1]))) {
      return BadNumber(original, what);
    }
    uint64_t value = 1;
    for (uint32_t i = 0; i < exponent; ++i) {
      if (!MultiplyChecked(value, base, &value)) {
        return UsageError(absl::StrCat("\"", AsAbsl(original), "\" is too large"));
      }
    }
    return value;
  }
  uint64_t multiplier = 1;
  if (binary_suffixes) {
    if (text.size() >= 3 && text.substr(text.size() - 2) == "iB") {
      text.remove_suffix(2);
    } else if (text.size() >= 2 && text.back() == 'B') {
      text.remove_suffix(1);
    }
  }
  constexpr std::string_view kSuffixes = "KMGT";
  if (!text.empty()) {
    const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
    if (const size_t index = kSuffixes.find(last); index != std::string_view::npos) {
      for (size_t i = 0; i <= index; ++i) multiplier *= binary_suffixes ? 1024 : 1000;
      text.remove_suffix(1);
    } else if (original.size() != text.size()) {
      return BadNumber(original, what);  // "B" or "iB" without K/M/G/T
    }
  }
  if (text.empty()) return BadNumber(original, what);
  if (std::all_of(text.begin(), text.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    uint64_t mantissa = 0;
    uint64_t value = 0;
    if (!absl::SimpleAtoi(AsAbsl(text), &mantissa) ||
        !MultiplyChecked(mantissa, multiplier, &value)) {
      return UsageError(absl::StrCat("\"", AsAbsl(original), "\" is too large"));
    }
    return value;
  }
  double mantissa = 0;
  if (!absl::SimpleAtod(AsAbsl(text), &mantissa) || !std::isfinite(mantissa) || mantissa < 0) {
    return BadNumber(original, what);
  }
  const double value = mantissa * static_cast<double>(multiplier);
  if (value >= static_cast<double>(kMaxNumber)) {
    return UsageError(absl::StrCat("\"", AsAbsl(original), "\" is too large"));
  }
  if (value != std::floor(value)) {
    return UsageError(absl::StrCat("\"", AsAbsl(original), "\" is not a whole number"));
  }
  return static_cast<uint64_t>(value);
}

std::string JsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&out, "\\u%04x", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

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

std::string SimdTargetName() { return std::string(ActiveSimdTarget()); }

absl::StatusOr<uint64_t> ParseCount(std::string_view text) { return ParseNumber(text, false); }
absl::StatusOr<uint64_t> ParseSize(std::string_view text) { return ParseNumber(text, true); }

absl::StatusOr<double> ParseFraction(std::string_view text) {
  const std::string_view original = text;
  constexpr std::string_view kWhat = "a probability in (0, 1) (e.g. 0.01, 1e-3, 1%)";
  const bool percent = !text.empty() && text.back() == '%';
  if (percent) text.remove_suffix(1);
  double value = 0;
  if (text.empty() || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '.') ||
      std::any_of(text.begin(), text.end(),
                  [](char c) { return std::isspace(static_cast<unsigned char>(c)); }) ||
      !absl::SimpleAtod(AsAbsl(text), &value)) {
    return BadNumber(original, kWhat);
  }
  if (percent) value /= 100;
  if (!(value > 0 && value < 1)) return BadNumber(original, kWhat);
  return value;
}

absl::StatusOr<FilterOptions> SizingFromFlags(const Args& args, uint64_t default_capacity,
                                              double default_fpr) {
  FilterOptions options;
  absl::StatusOr<uint32_t> hashes = args.Integer("hashes", 0, kMinHashes, kMaxHashes);
  if (!hashes.ok()) return hashes.status();
  options.hashes = *hashes;
  if (args.Has("bits")) {
    if (args.Has("fpr")) {
      return UsageError(
          "--fpr and --bits do not go together (--bits fixes the size; --fpr asks "
          "the planner for one)");
    }
    absl::StatusOr<uint64_t> bits = args.Size("bits", 0);
    if (!bits.ok()) return bits.status();
    absl::StatusOr<uint64_t> capacity = args.Count("capacity", 0);
    if (!capacity.ok()) return capacity.status();
    if (*bits == 0) return UsageError("--bits must be at least 1");
    if (options.hashes == 0 && *capacity == 0) {
      return UsageError("--bits needs --hashes, or --capacity to choose them for");
    }
    options.bits = *bits;
    options.capacity = *capacity;
    return options;
  }
  absl::StatusOr<uint64_t> capacity = args.Count("capacity", default_capacity);
  if (!capacity.ok()) return capacity.status();
  absl::StatusOr<double> fpr = args.Fraction("fpr", default_fpr);
  if (!fpr.ok()) return fpr.status();
  if (*capacity == 0) {
    return UsageError(args.Has("capacity") ? "--capacity must be at least 1"
                                           : "give --capacity N (and --fpr P), or --bits B");
  }
  options.capacity = *capacity;
  options.fpr = *fpr;
  return options;
}

absl::StatusOr<Args> Args::Parse(int argc, char* const* argv,
                                 std::initializer_list<FlagSpec> flags) {
  Args args;
  bool flags_done = false;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (flags_done || arg == "-" || !arg.starts_with("-")) {
      args.positional_.emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      args.help_ = true;
      continue;
    }
    // "-o" is the short form of a one-letter flag "o"; other single-dash words are not flags.
    if (!arg.starts_with("--") && arg.size() != 2) {
      return UsageError(absl::StrCat("unknown option ", AsAbsl(arg)));
    }
    std::string_view name = arg.substr(arg.starts_with("--") ? 2 : 1);
    std::optional<std::string_view> inline_value;
    if (const size_t eq = name.find('='); eq != std::string_view::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const auto spec =
        std::find_if(flags.begin(), flags.end(), [&](const FlagSpec& f) { return f.name == name; });
    if (spec == flags.end()) return UsageError(absl::StrCat("unknown option --", AsAbsl(name)));
    if (args.Has(name)) return UsageError(absl::StrCat("--", AsAbsl(name), " given twice"));
    std::string value;
    if (spec->takes_value) {
      if (inline_value) {
        value = std::string(*inline_value);
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        return UsageError(absl::StrCat("--", AsAbsl(name), " needs a value"));
      }
    } else if (inline_value) {
      return UsageError(absl::StrCat("--", AsAbsl(name), " takes no value"));
    }
    args.values_.emplace_back(std::string(name), std::move(value));
  }
  return args;
}

bool Args::Has(std::string_view name) const { return Value(name).has_value(); }

std::optional<std::string_view> Args::Value(std::string_view name) const {
  for (const auto& [key, value] : values_) {
    if (key == name) return value;
  }
  return std::nullopt;
}

absl::StatusOr<uint64_t> Args::Count(std::string_view name, uint64_t fallback) const {
  const std::optional<std::string_view> text = Value(name);
  if (!text) return fallback;
  absl::StatusOr<uint64_t> value = ParseCount(*text);
  if (!value.ok())
    return UsageError(absl::StrCat("--", AsAbsl(name), ": ", value.status().message()));
  return value;
}

absl::StatusOr<uint64_t> Args::Size(std::string_view name, uint64_t fallback) const {
  const std::optional<std::string_view> text = Value(name);
  if (!text) return fallback;
  absl::StatusOr<uint64_t> value = ParseSize(*text);
  if (!value.ok())
    return UsageError(absl::StrCat("--", AsAbsl(name), ": ", value.status().message()));
  return value;
}

absl::StatusOr<double> Args::Fraction(std::string_view name, double fallback) const {
  const std::optional<std::string_view> text = Value(name);
  if (!text) return fallback;
  absl::StatusOr<double> value = ParseFraction(*text);
  if (!value.ok())
    return UsageError(absl::StrCat("--", AsAbsl(name), ": ", value.status().message()));
  return value;
}

absl::StatusOr<uint32_t> Args::Integer(std::string_view name, uint32_t fallback, uint32_t min,
                                       uint32_t max) const {
  const std::optional<std::string_view> text = Value(name);
  if (!text) return fallback;
  uint32_t value = 0;
  if (text->empty() || !std::isdigit(static_cast<unsigned char>((*text)[0])) ||
      !absl::SimpleAtoi(AsAbsl(*text), &value) || value < min || value > max) {
    return UsageError(
        absl::StrFormat("--%s: \"%s\" is not a whole number in [%d, %d]", name, *text, min, max));
  }
  return value;
}

absl::Status Args::ExpectPositional(size_t min, size_t max) const {
  if (positional_.size() < min) {
    return UsageError(min == 1 ? "missing argument" : absl::StrCat("needs ", min, " arguments"));
  }
  if (positional_.size() > max) {
    return UsageError(absl::StrCat("unexpected argument \"", positional_[max], "\""));
  }
  return absl::OkStatus();
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ',';
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  out_ += '}';
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  out_ += ']';
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  BeforeValue();
  absl::StrAppend(&out_, "\"", JsonEscape(key), "\":");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  BeforeValue();
  absl::StrAppend(&out_, "\"", JsonEscape(value), "\"");
  return *this;
}

JsonWriter& JsonWriter::Number(double value) {
  if (!std::isfinite(value)) return Null();
  BeforeValue();
  absl::StrAppendFormat(&out_, "%.10g", value);
  return *this;
}

JsonWriter& JsonWriter::Integer(uint64_t value) {
  BeforeValue();
  absl::StrAppend(&out_, value);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
  return *this;
}

std::string JsonWriter::Finish() {
  out_ += '\n';
  return std::move(out_);
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
      if (c == 0) {
        absl::StrAppend(&line, row[c], pad);
      } else {
        absl::StrAppend(&line, "  ", pad, row[c]);
      }
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
