// `isolated:SPEC`: runs an engine in worker processes (`reduce __worker`); a worker that dies is a crash.
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
#include <mutex>
#include <optional>
#include <thread>

#include "core/model_io.h"
#include "adapters/process.h"
#include "external/output_model.h"
#include "external/temp_folder.h"
#include "external/tensor_exchange.h"
#include "isolated/worker_protocol.h"
#include "spec/engine_factories.h"

namespace reduce {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// One worker process, talking over a socket (no SIGPIPE when it dies: MSG_NOSIGNAL), its
// stdout/stderr appended to a log file whose tail explains a crash.
class WorkerProcess {
 public:
  static Expected<std::unique_ptr<WorkerProcess>> start(const EngineEnvironment& environment) {
    REDUCE_ASSIGN(TempFolder folder, TempFolder::create("reduce-worker-"));
    const std::string program = environment.worker_program.empty() ? "/proc/self/exe" : environment.worker_program.string();
    const fs::path log = folder / "log";
    auto spawned = spawn_socket_worker({program, "__worker", "3"}, environment.env, log, false);
    if (!spawned) return Error{program, "cannot start the engine worker: " + spawned.error().what};
    auto worker = std::unique_ptr<WorkerProcess>(new WorkerProcess(std::move(folder), spawned->socket));
    worker->pid_ = spawned->pid;
    return worker;
  }

  ~WorkerProcess() {
    ::close(fd_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }

  // Sends a request and waits for the answer; a worker that dies or exceeds `timeout_seconds`
  // (0: none) gives a Crash or Timeout error and must not be used again (alive() is false). When
  // `cancel` becomes true the worker is asked to cancel its run (its commands are killed) and its
  // answer still awaited; a worker that does not answer within a grace period is stopped.
  Status request(const std::vector<std::string>& fields, double timeout_seconds, const std::atomic<bool>* cancel) {
    std::error_code ec;
    fs::resize_file(log_path(), 0, ec);
    const std::string line = worker_protocol::encode(fields);
    for (size_t done = 0; done < line.size();) {
      const ssize_t n = ::send(fd_, line.data() + done, line.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return ended();
      done += static_cast<size_t>(n);
    }
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds));
    std::string reply;
    std::optional<Clock::time_point> cancel_deadline;
    while (reply.empty() || reply.back() != '\n') {
      if (cancel && !cancel_deadline && cancel->load()) {
        const std::string cancel_line = worker_protocol::encode({"cancel"});
        ::send(fd_, cancel_line.data(), cancel_line.size(), MSG_NOSIGNAL);
        cancel_deadline = Clock::now() + std::chrono::seconds(kStopGraceSeconds);
      }
      if (cancel_deadline && Clock::now() >= *cancel_deadline) {
        stop();
        return make_error("cancelled");
      }
      int wait_ms = cancel ? kCancelPollMs : -1;
      if (timeout_seconds > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) return timed_out(timeout_seconds);
        wait_ms = static_cast<int>(std::min<int64_t>(left + 1, cancel ? kCancelPollMs : 60000));
      }
      pollfd p{fd_, POLLIN, 0};
      const int ready = ::poll(&p, 1, wait_ms);
      if (ready < 0 && errno != EINTR) return ended();
      if (ready <= 0) continue;
      char chunk[4096];
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return ended();
      reply.append(chunk, static_cast<size_t>(n));
    }
    reply.pop_back();
    const auto answer = worker_protocol::decode(reply);
    if (answer[0] == "ok") return {};
    if (answer[0] == "error" && answer.size() >= 2) return make_error(answer[1]);
    return make_error("engine worker: malformed reply");
  }

  bool alive() const { return pid_ > 0; }

 private:
  WorkerProcess(TempFolder folder, int fd) : folder_(std::move(folder)), fd_(fd) {}
  fs::path log_path() const { return folder_ / "log"; }

  // The worker closed the socket: it died. Its exit status says how.
  Error ended() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = 0;
    return worker_ended("engine", status, log_path());
  }

  // Ends the worker: shutting the socket down makes it cancel its run (the commands it started die
  // with their process groups) and exit; one that has not exited after a grace period (an
  // in-process engine that does not observe the cancel) is killed.
  void stop() {
    ::shutdown(fd_, SHUT_RDWR);
    const auto deadline = Clock::now() + std::chrono::seconds(kStopGraceSeconds);
    for (;;) {
      const pid_t ended = ::waitpid(pid_, nullptr, WNOHANG);
      if (ended == pid_ || (ended < 0 && errno != EINTR)) break;
      if (Clock::now() >= deadline) {
        ::kill(pid_, SIGKILL);
        while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
        }
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    pid_ = 0;
  }

  Error timed_out(double seconds) {
    stop();
    ProcessResult r;
    r.timed_out = true;
    ProcessOptions o;
    o.timeout_seconds = seconds;
    return Error{"", "engine run " + r.describe(o), ErrorKind::Timeout, SIGKILL};
  }

  static constexpr int kCancelPollMs = 20;
  static constexpr int kStopGraceSeconds = 1;
  TempFolder folder_;
  int fd_ = -1;
  pid_t pid_ = 0;
};

// Idle workers, shared by every model prepared on one isolated engine; as many as runs in flight.
class WorkerPool {
 public:
  explicit WorkerPool(EngineEnvironment environment) : environment_(std::move(environment)) {}
  const EngineEnvironment& environment() const { return environment_; }

  Status request(const std::vector<std::string>& fields, const std::atomic<bool>* cancel = nullptr) {
    std::unique_ptr<WorkerProcess> worker;
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        worker = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (!worker) {
      auto started = WorkerProcess::start(environment_);
      if (!started) return started.error();
      worker = std::move(started).value();
    }
    Status status = worker->request(fields, environment_.timeout_seconds, cancel);
    if (worker->alive()) {
      std::lock_guard lock(mutex_);
      idle_.push_back(std::move(worker));
    }
    return status;
  }

 private:
  const EngineEnvironment environment_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<WorkerProcess>> idle_;
};

class IsolatedPrepared : public PreparedModel {
 public:
  IsolatedPrepared(const Model& model, std::string spec, std::shared_ptr<WorkerPool> pool, TempFolder folder)
      : model_(model), spec_(std::move(spec)), pool_(std::move(pool)), folder_(std::move(folder)) {}

  Status load() { return pool_->request({"load", spec_, threads(), model_path()}); }

  Expected<TensorMap> run(const TensorMap& inputs, const RunOptions& options) override {
    const std::vector<std::string> outputs = requested_outputs(model_, options.outputs);
    REDUCE_ASSIGN(TempFolder run, TempFolder::create("reduce-isolated-run-"));
    std::error_code ec;
    fs::create_directory(run / "inputs", ec);
    fs::create_directory(run / "outputs", ec);
    if (ec) return Error{run.path().string(), "cannot create folder: " + ec.message()};
    REDUCE_TRY(write_input_folder(run / "inputs", model_.graph, inputs));
    std::vector<std::string> request{"run", spec_, threads(), model_path(), (run / "inputs").string(),
                                     (run / "outputs").string()};
    request.insert(request.end(), outputs.begin(), outputs.end());
    REDUCE_TRY(pool_->request(request, options.cancel));
    return read_output_folder(run / "outputs", outputs, "the engine worker");
  }

 private:
  std::string model_path() const { return (folder_ / "model.onnx").string(); }
  std::string threads() const { return std::to_string(pool_->environment().threads); }

  const Model& model_;
  const std::string spec_;
  std::shared_ptr<WorkerPool> pool_;
  TempFolder folder_;
};

class IsolatedEngine : public Engine {
 public:
  IsolatedEngine(std::string spec, std::string name, const EngineEnvironment& environment)
      : spec_(std::move(spec)), name_(std::move(name)), pool_(std::make_shared<WorkerPool>(environment)) {}
  std::string name() const override { return name_; }

  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    REDUCE_ASSIGN(TempFolder folder, TempFolder::create("reduce-isolated-model-"));
    REDUCE_TRY(as_setup(save_model(model, folder / "model.onnx")));
    auto prepared = std::make_unique<IsolatedPrepared>(model, spec_, pool_, std::move(folder));
    REDUCE_TRY(prepared->load());
    return std::unique_ptr<PreparedModel>(std::move(prepared));
  }

 private:
  std::string spec_, name_;
  std::shared_ptr<WorkerPool> pool_;
};

}  // namespace

Expected<std::unique_ptr<Engine>> make_isolated_engine(std::string_view inner_spec, const EngineEnvironment& environment) {
  // `opencv` is isolated by default; its in-process form runs inside the worker.
  const std::string name = inner_spec == "opencv-inprocess" ? "opencv" : "isolated:" + std::string(inner_spec);
  if (inner_spec.substr(0, 8) == "isolated") return Error{name, "an isolated engine is already isolated"};
  // The inner spec is built by the worker (which may know engines this process does not, as the
  // tests' worker does); an unknown one fails at prepare() with the worker's message.
  return std::unique_ptr<Engine>(std::make_unique<IsolatedEngine>(std::string(inner_spec), name, environment));
}

}  // namespace reduce
