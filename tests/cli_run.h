// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_run.h: runs the real `bloomery` binary (path in $BLOOMERY_CLI, set by tests/meson.build) for
// the CLI's test files: posix_spawn with stdin, stdout and stderr as files in one scratch
// directory per test binary, so no pipe can fill up and stall the child.
#ifndef BLOOMERY_TESTS_CLI_RUN_H_
#define BLOOMERY_TESTS_CLI_RUN_H_

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "temp_dir.h"

extern char** environ;

namespace bloomery::cli_run {

using testing::TempDir;

inline TempDir& Scratch() {
  static TempDir dir;
  return dir;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

inline void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  REQUIRE(out.good());
}

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// A started `bloomery` process; Wait collects it.
struct Spawned {
  pid_t pid = 0;
  std::string base;  // its stdin/stdout/stderr files are base + ".in", ".out", ".err"
};

// Starts `bloomery args...` with `input` on stdin. stdin, stdout and stderr are files, so no pipe
// can fill up and stall the child.
// `stdout_path` replaces the captured stdout (e.g. "/dev/full"; `out` is then empty); `env` is
// added to this process's environment. SIGINT and SIGTERM start at their default action, whatever
// this process inherited (a background job of a shell ignores SIGINT).
inline Spawned Spawn(const std::vector<std::string>& args, const std::string& input = "",
                     const std::string& stdout_path = "",
                     const std::vector<std::string>& env = {}) {
  const char* exe = std::getenv("BLOOMERY_CLI");
  REQUIRE_MESSAGE(exe != nullptr, "set BLOOMERY_CLI to the bloomery binary");
  static int counter = 0;
  const std::string base = Scratch().File("run" + std::to_string(counter++));
  WriteFile(base + ".in", input);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, (base + ".in").c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(
      &actions, 1, stdout_path.empty() ? (base + ".out").c_str() : stdout_path.c_str(),
      O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (base + ".err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> storage = {exe};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage(env);
  for (char** e = environ; *e != nullptr; ++e) env_storage.emplace_back(*e);
  std::vector<char*> envp;
  for (std::string& entry : env_storage) envp.push_back(entry.data());
  envp.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, exe, &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  REQUIRE(spawned == 0);
  return {pid, base};
}

inline RunResult Wait(const Spawned& child) {
  int status = 0;
  REQUIRE(waitpid(child.pid, &status, 0) == child.pid);
  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = ReadFile(child.base + ".out");
  result.err = ReadFile(child.base + ".err");
  return result;
}

inline RunResult Run(const std::vector<std::string>& args, const std::string& input = "",
                     const std::string& stdout_path = "") {
  return Wait(Spawn(args, input, stdout_path));
}

inline bool Contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace bloomery::cli_run

#endif  // BLOOMERY_TESTS_CLI_RUN_H_
