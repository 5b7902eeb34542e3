// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_commands.h: the `bloomery` subcommands. Each Add*Command declares its subcommand on `root`
// (its summary, its flags with their help) and returns what runs once the command line is parsed;
// what it runs writes results to stdout and returns a Status that main() turns into the exit code
// (cli_common.h: InvalidArgument is a usage error, exit 2; anything else exit 1).
#ifndef BLOOMERY_TOOLS_CLI_COMMANDS_H_
#define BLOOMERY_TOOLS_CLI_COMMANDS_H_

#include "cli_common.h"

namespace bloomery::cli {

// Sizes a filter for both layouts side by side (cli_plan.cc).
Command AddPlanCommand(CLI::App& root);
// The m/n x k tuning table, predicted and measured, as text, JSON, CSV and SVG (cli_table.cc).
Command AddTableCommand(CLI::App& root);
// ns/key of every BlockedFilter operation next to the memory floor (cli_bench.cc).
Command AddBenchCommand(CLI::App& root);
// Streams lines, keeping first occurrences, optionally remembered in a state file (cli_stream.cc).
Command AddDedupeCommand(CLI::App& root);
// Lines of B probably in A, within a memory budget (cli_stream.cc).
Command AddIntersectCommand(CLI::App& root);
// Filter files (cli_file.cc): create one from lines, add or remove lines, look lines up, describe
// a file, merge files, repair a file left DIRTY.
Command AddBuildCommand(CLI::App& root);
Command AddAddCommand(CLI::App& root);
Command AddRemoveCommand(CLI::App& root);
Command AddQueryCommand(CLI::App& root);
Command AddInfoCommand(CLI::App& root);
Command AddMergeCommand(CLI::App& root);
Command AddRepairCommand(CLI::App& root);

}  // namespace bloomery::cli

#endif  // BLOOMERY_TOOLS_CLI_COMMANDS_H_
