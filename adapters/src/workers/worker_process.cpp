// WorkerProcess: spawning, deadline- and cancel-aware socket exchanges, and the stop/kill/reap of a helper process.
#include "workers/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "adapters/process.h"

namespace reduce {

namespace fs = std::filesystem;

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// How often a wait looks at the cancel flag.
constexpr int kCancelPollMs = 20;

void reap(pid_t pid, int* status = nullptr) {
  while (::waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
}

// How a worker ended, from its wait status and the last lines of its log.
Error worker_ended(std::string_view who, int wait_status, const fs::path& log_path) {
  std::ifstream in(log_path, std::ios::binary);
  const std::string log{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const int signal = WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0;
  const int exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
  return process_died(who, signal, exit_code, first_and_last_output_lines(log));
}

}  // namespace

Expected<std::unique_ptr<WorkerProcess>> WorkerProcess::start(TempFolder folder, Options options) {
  auto spawned = spawn_socket_worker(options.argv, options.env, folder / "log", options.own_group);
  if (!spawned) return spawned.error();
  auto worker = std::unique_ptr<WorkerProcess>(new WorkerProcess(std::move(folder), std::move(options)));
  worker->fd_ = spawned->socket;
  worker->pid_ = spawned->pid;
  // Our end only: every wait is a poll with the deadline and the cancel flag in view.
  ::fcntl(worker->fd_, F_SETFL, ::fcntl(worker->fd_, F_GETFL) | O_NONBLOCK);
  worker->started_ = now_seconds();
  return worker;
}

WorkerProcess::~WorkerProcess() {
  ::close(fd_);
  if (pid_ > 0) kill_now();
}

void WorkerProcess::begin(double timeout_seconds) {
  std::error_code ec;
  fs::resize_file(folder_ / "log", 0, ec);
  started_ = now_seconds();
  timeout_ = timeout_seconds;
  cancel_deadline_ = 0;
}

Status WorkerProcess::send(std::string_view data, const std::atomic<bool>* cancel) {
  if (!alive()) return make_error(options_.who + " has ended");
  for (size_t done = 0; done < data.size();) {
    const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return died();
    REDUCE_TRY(wait(POLLOUT, cancel, false));
  }
  return {};
}

Status WorkerProcess::receive(char* data, size_t size, const std::atomic<bool>* cancel) {
  if (!alive()) return make_error(options_.who + " has ended");
  size_t done = std::min(size, pending_.size());
  std::copy_n(pending_.begin(), done, data);
  pending_.erase(0, done);
  while (done < size) {
    const ssize_t n = ::recv(fd_, data + done, size - done, 0);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return died();
    REDUCE_TRY(wait(POLLIN, cancel, true));
  }
  return {};
}

Expected<std::string> WorkerProcess::receive_line(const std::atomic<bool>* cancel) {
  if (!alive()) return make_error(options_.who + " has ended");
  for (;;) {
    if (const size_t end = pending_.find('\n'); end != std::string::npos) {
      std::string line = pending_.substr(0, end);
      pending_.erase(0, end + 1);
      return line;
    }
    char chunk[4096];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n > 0) {
      pending_.append(chunk, static_cast<size_t>(n));
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return died();
    REDUCE_TRY(wait(POLLIN, cancel, true));
  }
}

Status WorkerProcess::wait(short events, const std::atomic<bool>* cancel, bool may_send_cancel) {
  const bool cancelled = cancel && cancel->load();
  if (cancelled && options_.cancel_message.empty()) return stop(make_error("cancelled"));
  if (cancelled && may_send_cancel && cancel_deadline_ == 0) {
    // Best effort: a worker that cannot take it is stopped when the grace period ends.
    (void)::send(fd_, options_.cancel_message.data(), options_.cancel_message.size(), MSG_NOSIGNAL);
    cancel_deadline_ = now_seconds() + options_.grace_seconds;
  }
  const double now = now_seconds();
  if (cancel_deadline_ > 0 && now >= cancel_deadline_) return stop(make_error("cancelled"));
  if (timeout_ > 0 && now - started_ >= timeout_) {
    ProcessResult r;
    r.timed_out = true;
    ProcessOptions o;
    o.timeout_seconds = timeout_;
    return stop(Error{"", options_.timeout_subject + " " + r.describe(o) + options_.timeout_note, ErrorKind::Timeout,
                      SIGKILL});
  }
  double wait_ms = cancel ? kCancelPollMs : -1;
  if (timeout_ > 0) {
    const double left_ms = (timeout_ - (now - started_)) * 1000 + 1;
    wait_ms = std::max(1.0, wait_ms < 0 ? left_ms : std::min(wait_ms, left_ms));
  }
  pollfd p{fd_, static_cast<short>(events | POLLRDHUP), 0};
  if (::poll(&p, 1, static_cast<int>(std::min(wait_ms, 1e9))) < 0 && errno != EINTR) return died();
  return {};
}

// The socket closed or broke: the worker is ending. Its exit status says how.
Error WorkerProcess::died() {
  int status = 0;
  reap(pid_, &status);
  if (options_.own_group) ::kill(-pid_, SIGKILL);  // anything left of its group
  pid_ = 0;
  return worker_ended(options_.who, status, folder_ / "log");
}

// Shutting the socket down makes a worker that reads it cancel its run and exit; one that has not
// exited after the grace period (an engine that does not observe the cancel) is killed.
Error WorkerProcess::stop(Error why) {
  if (!alive()) return why;
  ::shutdown(fd_, SHUT_RDWR);
  const double deadline = now_seconds() + options_.grace_seconds;
  while (now_seconds() < deadline) {
    const pid_t ended = ::waitpid(pid_, nullptr, WNOHANG);
    if (ended == pid_ || (ended < 0 && errno != EINTR)) {
      if (options_.own_group) ::kill(-pid_, SIGKILL);
      pid_ = 0;
      return why;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill_now();
  return why;
}

void WorkerProcess::kill_now() {
  ::kill(options_.own_group ? -pid_ : pid_, SIGKILL);
  reap(pid_);
  pid_ = 0;
}

}  // namespace reduce
