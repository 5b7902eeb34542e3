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

// plan, table and bench live in cli_plan.cc, cli_table.cc and cli_bench.cc; dedupe and intersect
// in cli_stream.cc; the filter-file subcommands in cli_file.cc.
Command AddPlanCommand(CLI::App& root);
Command AddTableCommand(CLI::App& root);
Command AddBenchCommand(CLI::App& root);
Command AddDedupeCommand(CLI::App& root);
Command AddIntersectCommand(CLI::App& root);
Command AddBuildCommand(CLI::App& root);
Command AddAddCommand(CLI::App& root);
Command AddRemoveCommand(CLI::App& root);
Command AddQueryCommand(CLI::App& root);
Command AddInfoCommand(CLI::App& root);
Command AddMergeCommand(CLI::App& root);
Command AddRepairCommand(CLI::App& root);

}  // namespace bloomery::cli

#endif  // BLOOMERY_TOOLS_CLI_COMMANDS_H_
