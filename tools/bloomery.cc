// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// bloomery: the command-line tool over the public bloomery API; `bloomery --help` lists the
// subcommands. Exit codes: 0 success, 1 bad input or file (or stdout not writable), 2 bad usage.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "bloomery/version.h"
#include "cli_common.h"

namespace {

using bloomery::cli::Command;

// An argument CLI11 left over: an unknown flag or one positional argument too many.
std::string Leftover(const std::string& arg) {
  if (arg.size() > 1 && arg[0] == '-') return "unknown option " + arg;
  return "unexpected argument \"" + arg + "\"";
}

// Every output ends here: a full disk or a closed pipe must not look like success.
int CheckStdout(int code, const char* command) {
  if (std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return code;
  std::fprintf(stderr, "bloomery %s: writing to stdout: %s\n", command, std::strerror(errno));
  return bloomery::cli::kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  // Ctrl-C or a kill during a save must not leave a `.FILE.tmp.*` beside the user's file.
  if (absl::Status s = bloomery::InstallSaveCleanupOnSignals(); !s.ok()) {
    std::fprintf(stderr, "bloomery: %s\n", std::string(s.message()).c_str());
  }
  CLI::App root("bloomery: Bloom filters from the command line. Keys are read one per line.\n",
                "bloomery");
  root.footer(std::string(bloomery::cli::kNumberConvention) +
              "\nExit codes: 0 success, 1 bad input or file, 2 bad usage.");
  root.get_formatter()->label("Usage", "usage");
  root.set_version_flag("--version", "bloomery " BLOOMERY_VERSION_STRING,
                        "Print the version (the library's) and exit");
  root.require_subcommand(1);
  bloomery::cli::Commands registry(root);
  for (auto add : {bloomery::cli::AddPlanCommands, bloomery::cli::AddBenchCommands,
                   bloomery::cli::AddStreamCommands, bloomery::cli::AddFileCommands}) {
    add(registry);
  }
  const std::vector<Command>& commands = registry.list();
  const std::string_view name = argc > 1 ? argv[1] : "";
  if (name == "--help" || name == "-h" || name == "help") {
    std::cout << root.help();
    return CheckStdout(bloomery::cli::kExitOk, "--help");
  }
  if (name == "--version") {  // as --help: before the check that a subcommand comes first
    std::cout << root.version() << "\n";
    return CheckStdout(bloomery::cli::kExitOk, "--version");
  }
  if (std::none_of(commands.begin(), commands.end(),
                   [&](const Command& c) { return c.app->get_name() == name; })) {
    if (!name.empty()) std::fprintf(stderr, "bloomery: unknown command \"%s\"\n\n", argv[1]);
    std::cerr << root.help();
    return bloomery::cli::kExitUsage;
  }
  for (const Command& command : commands) command.app->allow_extras();
  std::string error;
  try {
    root.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << root.help();  // the chosen subcommand's
    return CheckStdout(bloomery::cli::kExitOk, argv[1]);
  } catch (const CLI::ParseError& e) {
    error = e.what();
  }
  for (const Command& command : commands) {
    if (!command.app->parsed()) continue;
    if (error.empty() && !command.app->remaining().empty()) {
      error = Leftover(command.app->remaining().front());
    }
    absl::Status status = error.empty() ? command.run() : bloomery::cli::UsageError(error);
    if (!status.ok()) {
      std::fprintf(stderr, "bloomery %s: %s\n", argv[1], std::string(status.message()).c_str());
      if (bloomery::cli::ExitCodeFor(status) == bloomery::cli::kExitUsage) {
        std::fprintf(stderr, "(see bloomery %s --help)\n", argv[1]);
      }
    }
    return CheckStdout(bloomery::cli::ExitCodeFor(status), argv[1]);
  }
  std::fprintf(stderr, "bloomery %s: %s\n", argv[1], error.c_str());
  return bloomery::cli::kExitUsage;
}
