// run_process: fork+exec into a new process group that dies with this one, one pipe for stdout+stderr, time limit, group kill.
#include "adapters/process.h"

#include <algorithm>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iterator>
#include <random>
#include <thread>

extern char** environ;

namespace reduce {

std::string first_and_last_output_lines(const std::string& output, size_t first, size_t last) {
  // The output's non-blank lines, as positions: the first few and the last few are kept.
  std::vector<std::pair<size_t, size_t>> lines;
  for (size_t at = 0; at < output.size();) {
    const size_t end = std::min(output.find('\n', at), output.size());
    if (output.find_first_not_of(" \t\r", at) < end) lines.emplace_back(at, end);
    at = end + 1;
  }
  std::string joined;
  auto add = [&](size_t i) {
    const std::string line = last_output_lines(output.substr(lines[i].first, lines[i].second - lines[i].first), 1);
    joined += (joined.empty() ? "" : " | ") + line;
  };
  const size_t head = std::min(first, lines.size());
  const size_t tail_start = std::max(head, lines.size() > last ? lines.size() - last : 0);
  for (size_t i = 0; i < head; ++i) add(i);
  if (tail_start > head) joined += " | [...]";
  for (size_t i = tail_start; i < lines.size(); ++i) add(i);
  return joined;
}

namespace {

using Clock = std::chrono::steady_clock;

// Closes a descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

}  // namespace

std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& x : extra) replaced = replaced || x.substr(0, x.find('=')) == name;
    if (!replaced) env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

namespace {

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Whether the child has ended, without reaping it (so its pid, which is also the group id,
// stays reserved while we kill what is left of the group).
bool has_ended(pid_t pid) {
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) < 0)
    if (errno != EINTR) return true;
  return info.si_pid == pid;
}

// The environment entry that marks every process of one run: descendants inherit it, also those
// that leave the process group (setsid, a daemon's double fork), which a group kill misses. One
// name per run, so that a run inside a run (`batch` starting reductions) carries both marks.
std::string new_run_marker() {
  std::random_device random;
  std::string marker = "REDUCE_RUN_";
  char hex[9];
  for (int i = 0; i < 4; ++i) {
    std::snprintf(hex, sizeof hex, "%08x", random());
    marker += hex;
  }
  return marker + "=1";
}

// Whether /proc/PID/environ holds `entry` as a whole entry (processes of other users, and
// zombies, read as nothing).
bool environment_holds(const char* pid, const std::string& entry) {
  const std::string path = std::string("/proc/") + pid + "/environ";
  Fd fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (fd.fd < 0) return false;
  std::string text;
  char buffer[65536];
  constexpr size_t kMaxEnvironment = size_t{16} << 20;
  for (ssize_t n; text.size() < kMaxEnvironment && (n = ::read(fd.fd, buffer, sizeof buffer)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  for (size_t at = text.find(entry); at != std::string::npos; at = text.find(entry, at + 1))
    if ((at == 0 || text[at - 1] == '\0') && (at + entry.size() == text.size() || text[at + entry.size()] == '\0'))
      return true;
  return false;
}

// Kills every process marked with `entry`: what is left of a run after its group was killed.
// Rounds until none is found, since one may fork while the list is read.
void kill_marked(const std::string& entry) {
  const pid_t self = ::getpid();
  for (int round = 0; round < 20; ++round) {
    DIR* proc = ::opendir("/proc");
    if (!proc) return;
    bool found = false;
    while (const dirent* e = ::readdir(proc)) {
      if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
      const pid_t pid = static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10));
      if (pid == self || !environment_holds(e->d_name, entry)) continue;
      ::kill(pid, SIGKILL);
      found = true;
    }
    ::closedir(proc);
    if (!found) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(round < 5 ? 1 : 10));
  }
}

// Reads what the pipe holds now (non-blocking); returns false at end of file.
// The output as kept: its first half of the budget and its last half (build errors and tracebacks
// come last), with one line saying how much of the middle was left out.
class OutputCapture {
 public:
  explicit OutputCapture(size_t max_bytes) : head_max_(max_bytes / 2), tail_max_(max_bytes - max_bytes / 2) {}
  void append(const char* data, size_t n) {
    const size_t to_head = std::min(n, head_max_ - std::min(head_max_, head_.size()));
    head_.append(data, to_head);
    data += to_head;
    n -= to_head;
    if (n == 0) return;
    tail_.append(data, n);
    if (tail_.size() > 2 * tail_max_ + 65536) trim();  // amortized: the tail is cut once it doubled
  }
  // Moves what was kept into `result`.
  void finish(ProcessResult& result) {
    trim();
    result.output = std::move(head_);
    if (left_out_ > 0) {
      result.output_truncated = true;
      result.output += "\n[... " + std::to_string(left_out_) + " bytes of output left out ...]\n";
    }
    result.output += tail_;
  }

 private:
  void trim() {
    if (tail_.size() <= tail_max_) return;
    left_out_ += tail_.size() - tail_max_;
    tail_.erase(0, tail_.size() - tail_max_);
  }
  size_t head_max_, tail_max_;
  std::string head_, tail_;
  uint64_t left_out_ = 0;
};

bool drain(int fd, OutputCapture& capture, bool echo) {
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) return false;
    if (n < 0) return errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK;
    for (ssize_t at = 0, w = 0; echo && at < n; at += w)
      if ((w = ::write(2, buffer + at, static_cast<size_t>(n - at))) <= 0) break;
    capture.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

std::string signal_name(int signal) {
  if (const char* abbrev = sigabbrev_np(signal)) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(signal);
}

Error process_died(std::string_view who, int signal, int exit_code, std::string_view tail) {
  const std::string how = signal ? "killed by " + signal_name(signal) : "exited with code " + std::to_string(exit_code);
  return Error{"", std::string(who) + " " + how + (tail.empty() ? "" : ": " + std::string(tail)), ErrorKind::Crash, signal};
}

int ProcessResult::crash_signal() const {
  if (timed_out) return 0;
  if (signal) return signal;
  return exit_code > 128 && exit_code < 128 + 32 ? exit_code - 128 : 0;
}

std::string ProcessResult::describe(const ProcessOptions& options) const {
  if (timed_out) {
    std::string s = std::to_string(options.timeout_seconds);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return "timed out after " + s + " s";
  }
  if (signal) return "killed by " + signal_name(signal);
  return "exit code " + std::to_string(exit_code);
}

std::string last_output_lines(const std::string& output, size_t max_lines) {
  std::vector<std::string> lines;
  size_t end = output.size();
  while (end > 0 && lines.size() < max_lines) {
    const size_t start = output.rfind('\n', end - 1);
    const size_t from = start == std::string::npos ? 0 : start + 1;
    std::string line = output.substr(from, end - from);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos) {
      line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
      // A program may write megabytes on one line: the message (and the failure signature made
      // from it) keeps its start.
      constexpr size_t kMaxLineChars = 400;
      if (line.size() > kMaxLineChars) line = line.substr(0, kMaxLineChars) + " [line truncated]";
      lines.insert(lines.begin(), line);
    }
    if (start == std::string::npos) break;
    end = start;
  }
  std::string joined;
  for (const auto& l : lines) joined += (joined.empty() ? "" : " | ") + l;
  return joined;
}

namespace {

// What a child gets before it runs its program: its descriptors, folder, group and signals.
struct ChildSetup {
  int stdout_fd = -1;     // dup'ed to 1 (and 2 when `stderr_too`); -1: this process's own
  bool stderr_too = true;
  std::string stdout_file;  // else: opened for appending as 1, and 2 (a worker's log)
  int socket_fd = -1;     // dup'ed to 3 (a worker's end of its socket pair)
  std::string directory;  // chdir first; empty: this process's
  bool own_group = true;  // its own process group, and the signal handling a fresh program expects
  // SIGKILL when the thread that starts it ends, also when this process is killed by SIGKILL (which
  // nothing can catch): only for a child that thread waits for until it ends (run_process).
  bool die_with_parent = false;
};

// The file execve runs: `program` when it names a path, else the first executable match in this
// process's PATH (what posix_spawnp and a shell do); an errno when there is none.
int resolve_program(const std::string& program, std::string& path) {
  if (program.find('/') != std::string::npos) {
    path = program;
    return 0;
  }
  const char* env_path = ::getenv("PATH");
  const std::string dirs = env_path ? env_path : "/usr/local/bin:/usr/bin:/bin";
  int error = ENOENT;
  for (size_t from = 0;;) {
    const size_t colon = dirs.find(':', from);
    const std::string dir = dirs.substr(from, colon == std::string::npos ? std::string::npos : colon - from);
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    struct stat st{};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (::access(candidate.c_str(), X_OK) == 0) {
        path = candidate;
        return 0;
      }
      error = EACCES;
    }
    if (colon == std::string::npos) return error;
    from = colon + 1;
  }
}

// In the child, between fork and exec: async-signal-safe calls only (other threads of this
// process may hold locks the child would wait for forever). Reports an errno on `report` and
// ends when a step fails.
[[noreturn]] void become(const ChildSetup& setup, pid_t parent, int report, const char* path, char* const* argv,
                         char* const* envp) {
  auto fail = [&report](int error) {  // by reference: `report` moves below
    while (::write(report, &error, sizeof error) < 0 && errno == EINTR) {
    }
    ::_exit(127);
  };
  if (setup.die_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent ended before the line above
  }
  if (setup.own_group) {
    ::setpgid(0, 0);
    struct sigaction fresh{};
    fresh.sa_handler = SIG_DFL;
    for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) ::sigaction(s, &fresh, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
  }
  // Every descriptor the program gets is first moved above those it gets (a source may be 0-3
  // itself), then put in place; the report pipe stays there, close-on-exec.
  auto high = [&](int fd) {
    const int moved = fd < 0 ? -1 : ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
    if (fd >= 0 && moved < 0) fail(errno);
    return moved;
  };
  report = high(report);
  int out = high(setup.stdout_fd);
  if (!setup.stdout_file.empty()) {
    const int log = ::open(setup.stdout_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log < 0) fail(errno);
    out = high(log);
  }
  const int socket = high(setup.socket_fd);
  const int null = high(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (::dup2(null, 0) < 0) fail(errno);
  if (out >= 0 && (::dup2(out, 1) < 0 || (setup.stderr_too && ::dup2(out, 2) < 0))) fail(errno);
  if (socket >= 0 && ::dup2(socket, 3) < 0) fail(errno);
  // Descriptors other threads opened without O_CLOEXEC must not leak into the program either.
  const unsigned first_closed = socket >= 0 ? 4 : 3, kept = static_cast<unsigned>(report);
  if (::syscall(SYS_close_range, first_closed, kept - 1, 0) != 0 || ::syscall(SYS_close_range, kept + 1, ~0U, 0) != 0)
    fail(errno);
  if (!setup.directory.empty() && ::chdir(setup.directory.c_str()) != 0) fail(errno);
  ::execve(path, argv, envp);
  fail(errno);
}

// Starts `args[0]` as `setup` says; the errno of a program that cannot start (not found, not
// executable, a folder that is not there), read back from the child before it runs anything.
int start_child(pid_t& pid, const ChildSetup& setup, std::vector<std::string> args, std::vector<std::string> env) {
  std::string path;
  if (const int error = resolve_program(args[0], path)) return error;
  std::vector<char*> c_args = c_strings(args), c_env = c_strings(env);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return errno;
  const pid_t parent = ::getpid();
  pid = ::fork();
  if (pid == 0) become(setup, parent, report[1], path.c_str(), c_args.data(), c_env.data());
  const int fork_error = pid < 0 ? errno : 0;
  ::close(report[1]);
  int error = fork_error;
  if (pid > 0) {
    ssize_t n;
    while ((n = ::read(report[0], &error, sizeof error)) < 0 && errno == EINTR) {
    }
    if (n != static_cast<ssize_t>(sizeof error)) error = 0;  // exec closed the pipe: it runs
    if (error != 0)
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
  }
  ::close(report[0]);
  return error;
}

}  // namespace

Expected<SpawnedWorker> spawn_socket_worker(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                            const std::filesystem::path& log, bool own_group) {
  if (argv.empty() || argv[0].empty()) return make_error("spawn_socket_worker: no program given");
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return Error{argv[0], std::string("cannot create a socket pair: ") + std::strerror(errno)};
  Fd theirs{fds[1]};
  ChildSetup setup;
  setup.stdout_file = log.string();
  setup.socket_fd = theirs.fd;
  setup.own_group = own_group;
  SpawnedWorker worker;
  const int error = start_child(worker.pid, setup, argv, environment_with(env));
  if (error != 0) {
    ::close(fds[0]);
    return Error{argv[0], std::strerror(error)};
  }
  worker.socket = fds[0];
  return worker;
}

Expected<ProcessResult> run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty() || argv[0].empty()) return make_error("run_process: no program given");
  const std::string program = argv[0];
  int fds[2] = {-1, -1};
  if (!options.show_output && ::pipe2(fds, O_CLOEXEC) != 0)
    return Error{program, std::string("cannot create a pipe: ") + std::strerror(errno)};
  Fd read_end{fds[0]}, write_end{fds[1]};

  ChildSetup setup;
  if (!options.show_output) setup.stdout_fd = write_end.fd;
  setup.directory = options.working_directory.string();
  setup.die_with_parent = true;  // this thread waits for it below
  const auto start = Clock::now();
  pid_t pid = 0;
  const std::string marker = new_run_marker();
  std::vector<std::string> env = options.env;
  env.push_back(marker);
  const int spawn_error = start_child(pid, setup, argv, environment_with(env));
  write_end.reset();
  if (spawn_error != 0) return Error{program, std::string("cannot start: ") + std::strerror(spawn_error)};
  if (!options.show_output) ::fcntl(read_end.fd, F_SETFL, ::fcntl(read_end.fd, F_GETFL) | O_NONBLOCK);

  ProcessResult result;
  OutputCapture capture(options.max_output_bytes);
  const bool limited = options.timeout_seconds > 0;
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(limited ? options.timeout_seconds : 0));
  const auto grace = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.kill_grace_seconds));
  bool pipe_open = !options.show_output, terminated = false, killed = false;
  Clock::time_point kill_at{};  // after a SIGTERM: when SIGKILL follows
  int idle_ms = 1;
  while (!has_ended(pid)) {
    const auto now = Clock::now();
    if (options.cancel && !result.cancelled && options.cancel->load()) {
      result.cancelled = true;
      if (options.terminate_on_cancel && !terminated) {
        ::kill(-pid, SIGTERM);
        terminated = true;
        kill_at = now + grace;
      } else if (!options.terminate_on_cancel) {
        ::kill(-pid, SIGKILL);
        killed = true;
      }
    }
    if (limited && !terminated && now >= deadline) {
      ::kill(-pid, SIGTERM);
      terminated = true;
      kill_at = now + grace;
      result.timed_out = true;
    }
    if (terminated && !killed && now >= kill_at) {
      ::kill(-pid, SIGKILL);
      killed = true;
    }
    // Wait for output, or poll the child's state at a growing interval once the pipe is closed.
    int wait_ms = pipe_open ? 20 : idle_ms;
    if ((limited || terminated) && !killed) {
      const auto until = terminated ? kill_at : deadline;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
      wait_ms = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(wait_ms, left)));
    }
    if (pipe_open) {
      pollfd p{read_end.fd, POLLIN, 0};
      if (::poll(&p, 1, wait_ms) > 0) pipe_open = drain(read_end.fd, capture, options.echo_output);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
      idle_ms = std::min(idle_ms * 2, 20);
    }
  }
  // The leader is gone: what is left of its group (background children) goes with it, and so do
  // descendants that left the group (a `setsid` grandchild).
  ::kill(-pid, SIGKILL);
  kill_marked(marker);
  if (pipe_open) drain(read_end.fd, capture, options.echo_output);
  capture.finish(result);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace reduce
