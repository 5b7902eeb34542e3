// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_test_util.h: what the parts of the CLI's tests (tests/cli_<part>_test.cc) share. Each part
// drives the real `bloomery` binary (path in $BLOOMERY_CLI, set by tests/meson.build) through
// cli_run.h's posix_spawn and checks its output, its JSON, its exit codes and its error messages.
// Figures are checked against the library itself (the planner, the FPR formulas), never against
// copies. The parts are written in namespace bloomery::cli_test, where these names are found.
#ifndef BLOOMERY_TESTS_CLI_TEST_UTIL_H_
#define BLOOMERY_TESTS_CLI_TEST_UTIL_H_

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli_run.h"
#include "test_util.h"

namespace bloomery::cli_test {

using cli_run::Contains;
using cli_run::ReadFile;
using cli_run::Run;
using cli_run::RunResult;
using cli_run::Scratch;
using cli_run::Spawn;
using cli_run::Spawned;
using cli_run::TempDir;
using cli_run::Wait;
using cli_run::WriteFile;
using testing::SplitMix64;
using testing::WithinBinomialBound;

// ---------------------------------------------------------------------------------------------
// Lines: a command's input and output.

inline std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

inline std::string JoinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

// ---------------------------------------------------------------------------------------------
// JSON as the tests read it. nlohmann-json's parser is strict (one document, valid UTF-8, no
// trailing text), which proves the output is JSON; the tree is copied into this small struct.

struct Json {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject } type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> items;  // an array's
  // An object's members: values[i] is named names[i]. (Not a vector of pair<string, Json>: with
  // Json incomplete here, clang with libstdc++ refuses it.)
  std::vector<std::string> names;
  std::vector<Json> values;

  [[nodiscard]] const Json& operator[](std::string_view key) const {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == key) return values[i];
    }
    FAIL("JSON has no member \"" << std::string(key) << "\"");
    return *this;
  }
  [[nodiscard]] const Json& operator[](size_t i) const {
    REQUIRE(i < items.size());
    return items[i];
  }
  [[nodiscard]] bool Has(std::string_view key) const {
    return std::find(names.begin(), names.end(), key) != names.end();
  }
  [[nodiscard]] double Num() const {
    REQUIRE(type == Type::kNumber);
    return number;
  }
  [[nodiscard]] uint64_t U64() const { return static_cast<uint64_t>(Num()); }
};

inline Json FromParsed(const nlohmann::ordered_json& parsed) {
  Json value;
  if (parsed.is_object() || parsed.is_array()) {
    value.type = parsed.is_object() ? Json::Type::kObject : Json::Type::kArray;
    for (const auto& [key, item] : parsed.items()) {
      if (parsed.is_object()) {
        value.names.push_back(key);
        value.values.push_back(FromParsed(item));
      } else {
        value.items.push_back(FromParsed(item));
      }
    }
  } else if (parsed.is_string()) {
    value.type = Json::Type::kString;
    value.string = parsed.get<std::string>();
  } else if (parsed.is_boolean()) {
    value.type = Json::Type::kBool;
    value.boolean = parsed.get<bool>();
  } else if (parsed.is_number()) {
    value.type = Json::Type::kNumber;
    value.number = parsed.get<double>();
  }
  return value;
}

inline Json ParseJson(const std::string& text) {
  const auto parsed = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  REQUIRE_MESSAGE(!parsed.is_discarded(), "not valid JSON: " << text.substr(0, 300));
  return FromParsed(parsed);
}

// ---------------------------------------------------------------------------------------------
// Filter files: lines to insert, written to the scratch directory, built by `bloomery build`.

// The distinct lines "<prefix><i>" for i in [begin, end).
inline std::vector<std::string> NumberedLines(const std::string& prefix, int begin, int end) {
  std::vector<std::string> lines;
  for (int i = begin; i < end; ++i) lines.push_back(prefix + std::to_string(i));
  return lines;
}

// Writes `lines` to the scratch file `name`; returns its path.
inline std::string WriteLines(const std::string& name, const std::vector<std::string>& lines) {
  const std::string path = Scratch().File(name);
  WriteFile(path, JoinLines(lines));
  return path;
}

// Runs `bloomery build ... -o FILE INPUT --json` and returns its JSON summary.
inline Json Build(const std::vector<std::string>& flags, const std::string& file,
                  const std::string& input) {
  std::vector<std::string> args = {"build"};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {"-o", file, input, "--json"});
  RunResult r = Run(args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return ParseJson(r.out);
}

}  // namespace bloomery::cli_test

#endif  // BLOOMERY_TESTS_CLI_TEST_UTIL_H_
