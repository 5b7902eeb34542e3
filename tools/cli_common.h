// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_common.h: what every `bloomery` subcommand shares: the subcommand registry, strict numbers
// as CLI11 flags (each flag and its help declared in one call, so --help cannot drift from the
// flags), exit codes, JSON output and human-readable formatting.
//
// Errors travel as absl::Status and become exit codes in one place (ExitCodeFor): InvalidArgument
// means the command line was wrong (exit 2), anything else means the input or a file was bad
// (exit 1). CLI11's parse errors are usage errors too. Messages go to stderr prefixed with
// "bloomery <subcommand>: ".
#ifndef BLOOMERY_TOOLS_CLI_COMMON_H_
#define BLOOMERY_TOOLS_CLI_COMMON_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
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

// A subcommand: its flags are bound to state that `run` owns; `run` writes results to stdout and
// returns a Status that main() turns into the exit code.
struct Command {
  CLI::App* app = nullptr;
  std::function<absl::Status()> run;
};

// The subcommands, in help's order.
class Commands {
 public:
  explicit Commands(CLI::App& root) : root_(root) {}
  // Declares subcommand `name`: `summary` is its line in `bloomery --help`, `details` what its own
  // --help prints below the flags. The caller declares the flags (each with its help) on the app
  // returned, bound to the Flags returned, which `run` gets once the command line is parsed.
  template <typename Flags>
  std::pair<CLI::App*, Flags*> Add(const std::string& name, const std::string& summary,
                                   const std::string& details, absl::Status (*run)(const Flags&)) {
    CLI::App* app = root_.add_subcommand(name, summary);
    app->footer(details);
    auto flags = std::make_shared<Flags>();
    list_.push_back({app, [flags, run] { return run(*flags); }});
    return {app, flags.get()};
  }
  [[nodiscard]] const std::vector<Command>& list() const { return list_; }

 private:
  CLI::App& root_;
  std::vector<Command> list_;
};

// Each declares its file's subcommands, in help's order.
void AddPlanCommands(Commands& commands);    // plan, table (cli_plan.cc)
void AddBenchCommands(Commands& commands);   // bench (cli_bench.cc)
void AddStreamCommands(Commands& commands);  // dedupe, intersect (cli_stream.cc)
// build, add, remove, query, info, merge, repair: the filter-file subcommands (cli_file.cc)
void AddFileCommands(Commands& commands);

// What a number flag accepts. Every form is strict: nothing but the number (no spaces, sign, hex
// or trailing text); "1e6", "1.5e6" and "2^20" are fine; the value must be a whole number < 2^62.
enum class Unit {
  kCount,  // k/K, M, G, T are powers of 1000: "10M" == 10^7
  kBits,   // K, M, G, T are powers of 1024: "1G" == 2^30 bits; byte units ("1GB") are refused
  kBytes,  // K, M, G, T are powers of 1024, optionally followed by B or iB: "4G" == "4GiB"
};
[[nodiscard]] absl::StatusOr<uint64_t> ParseNumber(std::string_view text, Unit unit);
// A probability in (0, 1): "0.01", "1e-3", or a percentage "1%".
[[nodiscard]] absl::StatusOr<double> ParseFraction(std::string_view text);

// Flags whose value is parsed (strictly, as above) while the command line is: a bad value is a
// usage error naming the flag. `name` is CLI11's ("--capacity", "-o,--output").
CLI::Option* AddNumber(CLI::App& app, const std::string& name, uint64_t& out, Unit unit,
                       const std::string& help);
CLI::Option* AddFraction(CLI::App& app, const std::string& name, double& out,
                         const std::string& help);
CLI::Option* AddInteger(CLI::App& app, const std::string& name, uint32_t& out, uint32_t min,
                        uint32_t max, const std::string& help);
// A boolean flag; "--json=yes" is a usage error.
CLI::Option* AddFlag(CLI::App& app, const std::string& name, bool& out, const std::string& help);
// "--json": print JSON instead of text.
inline CLI::Option* AddJson(CLI::App& app, bool& out,
                            const std::string& help = "print JSON instead of a table") {
  return AddFlag(app, "--json", out, help);
}
[[nodiscard]] inline bool Given(const CLI::Option* option) { return option->count() > 0; }

// The sizing flags of every subcommand that creates a filter: "--capacity N [--fpr P] [--hashes
// K]" (planned) or "--bits B [--hashes K] [--capacity N]" (a given geometry).
struct SizingFlags {
  // Declares the flags; `capacity_help` and `fpr_help` say what they mean to this subcommand.
  void Add(CLI::App& app, const std::string& capacity_help, const std::string& fpr_help);
  // FilterOptions from the flags, absent ones taking the defaults. Errors (InvalidArgument): --fpr
  // with --bits, --bits without --hashes or --capacity, a zero capacity.
  [[nodiscard]] absl::StatusOr<FilterOptions> Options(uint64_t default_capacity,
                                                      double default_fpr) const;
  uint64_t capacity = 0;
  double fpr = 0;
  uint64_t bits = 0;
  uint32_t hashes = 0;
  CLI::Option* capacity_flag = nullptr;
  CLI::Option* fpr_flag = nullptr;
  CLI::Option* bits_flag = nullptr;
  CLI::Option* hashes_flag = nullptr;
};

// "--max-memory SIZE": the cap on the memory of a filter created or loaded (0: none).
CLI::Option* AddMaxMemory(CLI::App& app, uint64_t& out);
// "--strip-cr": drop one '\r' at the end of each input line (cli_io.h).
CLI::Option* AddStripCr(CLI::App& app, bool& out);
// "--allow-dirty": load a file left DIRTY by a crashed read-write mapping (LoadOptions).
CLI::Option* AddAllowDirty(CLI::App& app, bool& out);
// "--no-wait": a read-modify-write command fails at once when another process holds the file's
// lock, instead of waiting for it (LockForUpdate, file.h).
CLI::Option* AddNoWait(CLI::App& app, bool& out);

// JSON in the order the fields are written. Printed with invalid UTF-8 (a file name's bytes)
// replaced by U+FFFD, so the output is always valid JSON; non-finite numbers print as null.
using Json = nlohmann::ordered_json;
void PrintJson(const Json& json);

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
