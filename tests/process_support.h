// Running programs from tests without a shell: argv passed as is, stdout/stderr captured.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <string>
#include <vector>

#include "test_support.h"

extern char** environ;

namespace reduce::testing {

struct ProcessRun {
  int exit_code = -1;  // 128 + signal when killed by a signal
  std::string out;
  std::string err;
};

// Runs argv[0] (searched in PATH) with the given arguments and waits for it.
inline ProcessRun run_process(const std::vector<std::string>& argv) {
  TempDir io;
  const std::string out = (io / "out").string(), err = (io / "err").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  ProcessRun r;
  if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&actions);
  r.out = read_bytes(out);
  r.err = read_bytes(err);
  return r;
}

// `reduce` wrote its bundle: exit 0, or 8 when the reproducer's error is FP16/BF16 rounding (the
// exact reduced-precision reference fails the same way; report.json `rounding`).
inline bool bundle_written(const ProcessRun& r) { return r.exit_code == 0 || r.exit_code == 8; }

// Runs the `reduce` executable of this build.
inline ProcessRun run_reduce(const std::vector<std::string>& args) {
  std::vector<std::string> argv{std::string(REDUCE_BINARY_DIR) + "/reduce"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv);
}

}  // namespace reduce::testing
