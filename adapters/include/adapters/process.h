// Running external programs without a shell: argv as given, time limit, captured output, clean kill.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <string_view>
#include <string>
#include <vector>

#include "core/status.h"

namespace reduce {

struct ProcessOptions {
  // Seconds before the process group is killed (SIGTERM, then SIGKILL after `kill_grace_seconds`); 0: none.
  double timeout_seconds = 0;
  double kill_grace_seconds = 1;
  // "NAME=VALUE" entries added to (or replacing in) this process's environment.
  std::vector<std::string> env;
  // Folder the program starts in; empty: the current one.
  std::filesystem::path working_directory;
  // stdout and stderr (interleaved, as a terminal shows them) are kept up to this many bytes: the
  // first half and the last half of it (errors come last), a line between saying what was left out.
  size_t max_output_bytes = size_t{1} << 20;
  // When set and it becomes true, the process group is killed at once (stale speculative work).
  const std::atomic<bool>* cancel = nullptr;
  // On cancel, SIGTERM first and SIGKILL after `kill_grace_seconds`, so that the program can save
  // its work (a reduction writing its bundle), instead of SIGKILL at once.
  bool terminate_on_cancel = false;
  // The program writes to this process's stdout and stderr (its progress is seen live); nothing is
  // captured in ProcessResult::output.
  bool show_output = false;
  // The output is captured (ProcessResult::output) and also written to this process's stderr as it
  // comes: seen live, and read afterwards (`reduce batch` takes a reduction's "failure:" line).
  bool echo_output = false;
};

struct ProcessResult {
  int exit_code = -1;      // when the program exited; -1 when a signal ended it
  int signal = 0;          // the signal that ended it (also set after a timeout kill)
  bool timed_out = false;  // the time limit was reached and the group was killed
  bool cancelled = false;  // ProcessOptions::cancel was set and the group was killed
  std::string output;      // stdout + stderr: its first and last max_output_bytes / 2
  bool output_truncated = false;
  double seconds = 0;

  bool exited_ok() const { return exit_code == 0 && signal == 0 && !timed_out; }
  // The signal that ended the program, or N when it exited with 128+N (how a shell reports the
  // command it waited for was killed by signal N); 0 otherwise. A timeout is not a crash.
  int crash_signal() const;
  // "exit code 3", "killed by signal 11 (Segmentation fault)", "timed out after 2 s".
  std::string describe(const ProcessOptions& options) const;
};

// Runs argv[0] (searched in PATH when it has no '/') in its own process group and waits for it,
// or for the time limit. Thread-safe; the child inherits no descriptors but stdin (/dev/null)
// and the capture pipe. Errors: empty argv, a program that cannot be started.
Expected<ProcessResult> run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// A worker process that talks over a socket: its descriptor 3 is one end of a new socket pair,
// stdin is /dev/null, stdout and stderr are appended to `log`, and nothing else is inherited.
// With `own_group` it runs in its own process group with default signal handling (as run_process
// does), so a Ctrl-C at the terminal reaches only this process, which stops it itself.
struct SpawnedWorker {
  pid_t pid = 0;
  int socket = -1;  // this process's end (close-on-exec); the caller closes it
};
// argv[0] is searched in PATH when it has no '/'. Errors name the program.
Expected<SpawnedWorker> spawn_socket_worker(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                            const std::filesystem::path& log, bool own_group);

// The last `max_lines` non-empty lines of a program's output, trimmed: the part of stderr that
// usually says what went wrong, as one line (lines joined with " | "); each line is cut after
// 400 characters (" [line truncated]").
std::string last_output_lines(const std::string& output, size_t max_lines = 3);
// A dying process's output for its crash message: the first `first` non-blank lines (where Node.js
// says FATAL ERROR, where an abort names its assertion) and the last `last` (the frames, the signal),
// joined as last_output_lines joins them, with " | [...] | " where lines were left out.
std::string first_and_last_output_lines(const std::string& output, size_t first = 3, size_t last = 5);

// This process's environment with `extra` "NAME=VALUE" entries added or replacing same-named ones.
std::vector<std::string> environment_with(const std::vector<std::string>& extra);

// Name of a signal ("SIGSEGV"), or "signal N".
std::string signal_name(int signal);

// How a process died, as a Crash error (with the signal): "WHO killed by SIGSEGV: TAIL", or with
// signal 0 "WHO exited with code 3: TAIL" (TAIL: the last lines it printed, may be empty). The one
// wording of a death the adapters give (commands, isolated workers, ONNX Runtime's).
Error process_died(std::string_view who, int signal, int exit_code, std::string_view tail);

}  // namespace reduce
