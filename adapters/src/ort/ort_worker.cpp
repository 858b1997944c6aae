// OrtWorker: starts `node` on the embedded worker script (fd 3 a socket), exchanges frames with deadlines,
// and turns a death, a hang or a cancel into the error that says so.
#include "ort/ort_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include "adapters/process.h"

namespace reduce {

extern const char kOrtWorkerScript[];  // scripts/ort/ort_worker.js, embedded at build time

namespace fs = std::filesystem;
using ort_protocol::Frame;

namespace {

using Clock = std::chrono::steady_clock;

double now_seconds() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

constexpr int kCancelPollMs = 20;
// Starting Node and loading onnxruntime-node takes a fraction of a second; a machine under load may
// take longer, so the start gets at least this, whatever --timeout is.
constexpr double kStartSeconds = 60;

}  // namespace

Expected<std::unique_ptr<OrtWorker>> OrtWorker::start(const OrtWorkerConfig& config) {
  REDUCE_ASSIGN(TempFolder folder, TempFolder::create("reduce-ort-worker-"));
  const fs::path script = folder / "ort_worker.js";
  {
    std::ofstream out(script, std::ios::binary);
    out << kOrtWorkerScript;
    if (!out) return Error{script.string(), "cannot write the ONNX Runtime worker script"};
  }
  const fs::path log = folder / "log";
  // Arguments are paths and option words, never model data, and no shell sees them.
  std::vector<std::string> args{"node",
                                script.string(),
                                config.install_folder.string(),
                                std::string(to_string(config.options.optimization)),
                                std::to_string(config.threads),
                                config.options.provider};
  // Its own process group: a Ctrl-C at the terminal reaches reduce, which cancels runs itself.
  // What ONNX Runtime leaves in TMPDIR (session files, debug logs) goes into the worker's own
  // folder, removed with the worker.
  std::vector<std::string> env = config.env;
  env.push_back("TMPDIR=" + folder.path().string());
  auto spawned = spawn_socket_worker(args, env, log, true);
  if (!spawned) return make_error("cannot start node (Node.js, needed by the ort engine): " + spawned.error().what);
  auto worker = std::unique_ptr<OrtWorker>(new OrtWorker(std::move(folder), spawned->socket));
  worker->pid_ = spawned->pid;
  ::fcntl(worker->fd_, F_SETFL, ::fcntl(worker->fd_, F_GETFL) | O_NONBLOCK);  // our end only: deadlines need poll
  worker->started_ = now_seconds();
  worker->timeout_ = kStartSeconds;
  // Not a verdict: a worker that cannot start is an error of the set-up, whatever ended it.
  const auto cannot_start = [](const Error& e) { return make_error("cannot start the ONNX Runtime worker: " + e.what); };
  char head[ort_protocol::kHeaderBytes];
  if (Status s = worker->receive(head, sizeof head, nullptr); !s.ok()) return cannot_start(s.error());
  uint32_t type = 0;
  uint64_t bytes = 0;
  std::memcpy(&type, head, 4);
  std::memcpy(&bytes, head + 8, 8);
  if (bytes > 4096) return make_error("the ONNX Runtime worker sent a malformed greeting");
  std::string text(bytes, '\0');
  if (Status s = worker->receive(text.data(), text.size(), nullptr); !s.ok()) return cannot_start(s.error());
  if (static_cast<Frame>(type) == Frame::Error) return make_error(text);
  if (static_cast<Frame>(type) != Frame::Hello) return make_error("the ONNX Runtime worker sent a malformed greeting");
  worker->version_ = text;
  return worker;
}

OrtWorker::~OrtWorker() {
  ::close(fd_);
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

Expected<OrtAnswer> OrtWorker::request(Frame type, uint32_t id, std::string_view payload, double timeout_seconds,
                                       const std::atomic<bool>* cancel) {
  if (!alive()) return make_error("the ONNX Runtime worker has ended");
  std::error_code ec;
  fs::resize_file(folder_ / "log", 0, ec);  // what it prints from now on explains this request
  started_ = now_seconds();
  timeout_ = timeout_seconds;
  REDUCE_TRY(send_all(ort_protocol::header(type, id, payload.size()), cancel));
  REDUCE_TRY(send_all(payload, cancel));
  char head[ort_protocol::kHeaderBytes];
  REDUCE_TRY(receive(head, sizeof head, cancel));
  uint32_t answer = 0;
  uint64_t bytes = 0;
  std::memcpy(&answer, head, 4);
  std::memcpy(&bytes, head + 8, 8);
  if (bytes > ort_protocol::kMaxPayloadBytes) return killed(make_error("the ONNX Runtime worker sent a malformed frame"));
  OrtAnswer out{static_cast<Frame>(answer), std::string(bytes, '\0')};
  REDUCE_TRY(receive(out.payload.data(), out.payload.size(), cancel));
  return out;
}

Status OrtWorker::post(Frame type, uint32_t id) {
  if (!alive()) return {};
  started_ = now_seconds();
  timeout_ = kStartSeconds;  // the worker reads requests as soon as it is idle
  return send_all(ort_protocol::header(type, id, 0), nullptr);
}

// Waits up to `wait_ms` for the socket to be ready in `events`: 1 ready (or hung up), 0 not yet, -1 broken.
static int wait_ready(int fd, short events, int wait_ms) {
  pollfd p{fd, static_cast<short>(events | POLLRDHUP), 0};
  const int ready = ::poll(&p, 1, wait_ms);
  if (ready < 0) return errno == EINTR ? 0 : -1;
  return ready == 0 ? 0 : (p.revents & (events | POLLHUP | POLLERR | POLLRDHUP)) ? 1 : 0;
}

Status OrtWorker::send_all(std::string_view data, const std::atomic<bool>* cancel) {
  for (size_t done = 0; done < data.size();) {
    const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return died();
    if (cancel && cancel->load()) return killed(make_error("cancelled"));
    if (timeout_ > 0 && now_seconds() - started_ >= timeout_)
      return killed(Error{"", "", ErrorKind::Timeout, SIGKILL});
    if (wait_ready(fd_, POLLOUT, kCancelPollMs) < 0) return died();
  }
  return {};
}

Status OrtWorker::receive(char* data, size_t size, const std::atomic<bool>* cancel) {
  for (size_t done = 0; done < size;) {
    const ssize_t n = ::recv(fd_, data + done, size - done, 0);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return died();
    if (cancel && cancel->load()) return killed(make_error("cancelled"));
    if (timeout_ > 0 && now_seconds() - started_ >= timeout_)
      return killed(Error{"", "", ErrorKind::Timeout, SIGKILL});
    int wait_ms = cancel ? kCancelPollMs : -1;
    if (timeout_ > 0) {
      const double left_ms = (timeout_ - (now_seconds() - started_)) * 1000 + 1;
      wait_ms = static_cast<int>(std::max(1.0, wait_ms < 0 ? left_ms : std::min<double>(wait_ms, left_ms)));
    }
    if (wait_ready(fd_, POLLIN, wait_ms) < 0) return died();
  }
  return {};
}

Error OrtWorker::died() {
  int status = 0;
  while (pid_ > 0 && ::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  if (pid_ > 0) ::kill(-pid_, SIGKILL);  // anything left of its group
  pid_ = 0;
  return worker_ended("the ONNX Runtime worker", status, folder_ / "log");
}

Error OrtWorker::killed(Error why) {
  ::kill(-pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = 0;
  if (why.kind == ErrorKind::Timeout) {
    ProcessResult r;
    r.timed_out = true;
    ProcessOptions o;
    o.timeout_seconds = timeout_;
    why.what = "ONNX Runtime " + r.describe(o) + " (--timeout); its worker was killed";
  }
  return why;
}

}  // namespace reduce
