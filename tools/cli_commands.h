// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_commands.h: the `bloomery` subcommands. Each takes the arguments after its name, prints its
// own --help, writes results to stdout, and returns a Status that main() turns into the exit code
// (cli_common.h: InvalidArgument is a usage error, exit 2; anything else exit 1).
#ifndef BLOOMERY_TOOLS_CLI_COMMANDS_H_
#define BLOOMERY_TOOLS_CLI_COMMANDS_H_

#include "absl/status/status.h"

namespace bloomery::cli {

// Sizes a filter for both layouts side by side (cli_plan.cc).
absl::Status PlanCommand(int argc, char* const* argv);
// The m/n x k tuning table, predicted and measured, as text, JSON, CSV and SVG (cli_table.cc).
absl::Status TableCommand(int argc, char* const* argv);
// ns/key of every BlockedFilter operation next to the memory floor (cli_bench.cc).
absl::Status BenchCommand(int argc, char* const* argv);
// Streams lines, keeping first occurrences, optionally remembered in a state file (cli_stream.cc).
absl::Status DedupeCommand(int argc, char* const* argv);
// Lines of B probably in A, within a memory budget (cli_stream.cc).
absl::Status IntersectCommand(int argc, char* const* argv);
// Filter files (cli_file.cc): create one from lines, add or remove lines, look lines up, describe
// a file, merge files.
absl::Status BuildCommand(int argc, char* const* argv);
absl::Status AddCommand(int argc, char* const* argv);
absl::Status RemoveCommand(int argc, char* const* argv);
absl::Status QueryCommand(int argc, char* const* argv);
absl::Status InfoCommand(int argc, char* const* argv);
absl::Status MergeCommand(int argc, char* const* argv);

}  // namespace bloomery::cli

#endif  // BLOOMERY_TOOLS_CLI_COMMANDS_H_
