// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// bloomery: the command-line tool over the public bloomery API.
//
//   bloomery plan --capacity 1e6 --fpr 0.01       size a filter, blocked vs classic
//   bloomery table --svg fpr.svg                  the m/n x k tuning table, predicted and measured
//   bloomery bench                                ns/key next to the memory floor
//   bloomery dedupe --capacity 1e8 < urls.txt     first occurrences only
//   bloomery dedupe --state seen.bloom < new.txt  ... remembered across runs
//   bloomery intersect a.txt b.txt --memory 4G    lines of b.txt probably in a.txt
//   bloomery build --capacity 1e6 -o f.bloom a.txt   a filter file from lines (any kind)
//   bloomery add f.bloom b.txt                    more lines into it
//   bloomery remove f.bloom b.txt                 lines out of it (counting filters)
//   bloomery query f.bloom < keys.txt             the lines that may be in it
//   bloomery info f.bloom                         what a filter file holds, checksums verified
//   bloomery merge -o all.bloom a.bloom b.bloom   the union of filters built alike
//
// Exit codes: 0 success, 1 bad input or file, 2 bad usage (cli_common.h).
#include <cstdio>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "cli_commands.h"
#include "cli_common.h"

namespace {

struct Subcommand {
  std::string_view name;
  std::string_view summary;
  absl::Status (*run)(int argc, char* const* argv);
};

constexpr Subcommand kSubcommands[] = {
    {"plan", "size a filter for N keys at FPR p (or B bits, K hashes): blocked vs classic",
     bloomery::cli::PlanCommand},
    {"table", "the m/n x k table of predicted and measured FPR (text, JSON, CSV, SVG chart)",
     bloomery::cli::TableCommand},
    {"bench", "ns/key of inserts and lookups next to the memory floor, measured FPR",
     bloomery::cli::BenchCommand},
    {"dedupe", "copy stdin (or FILE) to stdout, keeping only the first occurrence of each line",
     bloomery::cli::DedupeCommand},
    {"intersect", "print the lines of B that are probably in A, within a memory budget",
     bloomery::cli::IntersectCommand},
    {"build", "create a filter file (blocked, classic, scalable, counting) from lines",
     bloomery::cli::BuildCommand},
    {"add", "insert lines into a filter file", bloomery::cli::AddCommand},
    {"remove", "erase lines from a counting filter file", bloomery::cli::RemoveCommand},
    {"query", "print the lines that may be in a filter file (or those certainly not)",
     bloomery::cli::QueryCommand},
    {"info", "describe a filter file: kind, geometry, checksums, keys, FPR now",
     bloomery::cli::InfoCommand},
    {"merge", "write the union of filter files built alike", bloomery::cli::MergeCommand},
};

void PrintUsage(std::FILE* out) {
  std::fputs(
      "usage: bloomery <command> [options]   (bloomery <command> --help for details)\n\n"
      "commands:\n",
      out);
  for (const Subcommand& command : kSubcommands) {
    std::fprintf(out, "  %-10s %.*s\n", std::string(command.name).c_str(),
                 static_cast<int>(command.summary.size()), command.summary.data());
  }
  std::fputs(
      "\nKeys are read one per line. Exit codes: 0 success, 1 bad input or file, 2 bad usage.\n",
      out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return bloomery::cli::kExitUsage;
  }
  const std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    PrintUsage(stdout);
    return bloomery::cli::kExitOk;
  }
  for (const Subcommand& command : kSubcommands) {
    if (command.name != name) continue;
    const absl::Status status = command.run(argc - 2, argv + 2);
    if (!status.ok()) {
      std::fprintf(stderr, "bloomery %s: %s\n", argv[1], std::string(status.message()).c_str());
      if (bloomery::cli::ExitCodeFor(status) == bloomery::cli::kExitUsage) {
        std::fprintf(stderr, "(see bloomery %s --help)\n", argv[1]);
      }
    }
    return bloomery::cli::ExitCodeFor(status);
  }
  std::fprintf(stderr, "bloomery: unknown command \"%s\"\n\n", argv[1]);
  PrintUsage(stderr);
  return bloomery::cli::kExitUsage;
}
