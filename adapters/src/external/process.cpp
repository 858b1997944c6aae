// run_process: posix_spawn into a new process group, one pipe for stdout+stderr, time limit, group kill.
#include "adapters/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
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
bool drain(int fd, ProcessResult& result, size_t max_bytes, bool echo) {
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) return false;
    if (n < 0) return errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK;
    for (ssize_t at = 0, w = 0; echo && at < n; at += w)
      if ((w = ::write(2, buffer + at, static_cast<size_t>(n - at))) <= 0) break;
    const size_t room = max_bytes - std::min(max_bytes, result.output.size());
    result.output.append(buffer, std::min(room, static_cast<size_t>(n)));
    if (static_cast<size_t>(n) > room) result.output_truncated = true;
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

// Children run in their own process group with the signal handling a fresh program expects.
struct ChildAttributes {
  posix_spawnattr_t attributes;
  explicit ChildAttributes(bool own_group) {
    posix_spawnattr_init(&attributes);
    if (!own_group) return;
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) sigaddset(&defaults, s);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  ~ChildAttributes() { posix_spawnattr_destroy(&attributes); }
  ChildAttributes(const ChildAttributes&) = delete;
  ChildAttributes& operator=(const ChildAttributes&) = delete;
};

int spawn(pid_t& pid, const std::string& program, const posix_spawn_file_actions_t& actions, const ChildAttributes& child,
          std::vector<std::string> args, std::vector<std::string> env) {
  std::vector<char*> c_args = c_strings(args), c_env = c_strings(env);
  return program.find('/') == std::string::npos
             ? posix_spawnp(&pid, program.c_str(), &actions, &child.attributes, c_args.data(), c_env.data())
             : posix_spawn(&pid, program.c_str(), &actions, &child.attributes, c_args.data(), c_env.data());
}

}  // namespace

Expected<SpawnedWorker> spawn_socket_worker(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                            const std::filesystem::path& log, bool own_group) {
  if (argv.empty() || argv[0].empty()) return make_error("spawn_socket_worker: no program given");
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    return Error{argv[0], std::string("cannot create a socket pair: ") + std::strerror(errno)};
  Fd theirs{fds[1]};
  const std::string log_path = log.string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_adddup2(&actions, theirs.fd, 3);
  posix_spawn_file_actions_addclosefrom_np(&actions, 4);
  const ChildAttributes child(own_group);
  SpawnedWorker worker;
  const int error = spawn(worker.pid, argv[0], actions, child, argv, environment_with(env));
  posix_spawn_file_actions_destroy(&actions);
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

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (!options.show_output) {
    posix_spawn_file_actions_adddup2(&actions, write_end.fd, 1);
    posix_spawn_file_actions_adddup2(&actions, write_end.fd, 2);
  }
  // Descriptors other threads opened without O_CLOEXEC must not leak into the child either.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  const std::string cwd = options.working_directory.string();
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());

  const ChildAttributes child(true);
  const auto start = Clock::now();
  pid_t pid = 0;
  const std::string marker = new_run_marker();
  std::vector<std::string> env = options.env;
  env.push_back(marker);
  const int spawn_error = spawn(pid, program, actions, child, argv, environment_with(env));
  posix_spawn_file_actions_destroy(&actions);
  write_end.reset();
  if (spawn_error != 0) return Error{program, std::string("cannot start: ") + std::strerror(spawn_error)};
  if (!options.show_output) ::fcntl(read_end.fd, F_SETFL, ::fcntl(read_end.fd, F_GETFL) | O_NONBLOCK);

  ProcessResult result;
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
      if (::poll(&p, 1, wait_ms) > 0) pipe_open = drain(read_end.fd, result, options.max_output_bytes, options.echo_output);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
      idle_ms = std::min(idle_ms * 2, 20);
    }
  }
  // The leader is gone: what is left of its group (background children) goes with it, and so do
  // descendants that left the group (a `setsid` grandchild).
  ::kill(-pid, SIGKILL);
  kill_marked(marker);
  if (pipe_open) drain(read_end.fd, result, options.max_output_bytes, options.echo_output);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace reduce
