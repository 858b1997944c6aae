// serve_engine_worker: the request loop of `reduce __worker`, keeping recently used models prepared.
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <list>
#include <thread>

#include "core/model_io.h"
#include "core/tensor_set.h"
#include "adapters/isolated_worker.h"
#include "external/tensor_exchange.h"
#include "isolated/worker_protocol.h"

namespace reduce {

namespace {

// A model loaded and prepared for one engine spec.
struct LoadedModel {
  std::string spec;
  int threads = 0;
  std::string path;
  std::unique_ptr<Model> model;  // stable address: the prepared model refers to it
  std::unique_ptr<Engine> engine;
  std::unique_ptr<PreparedModel> prepared;
};

class Worker {
 public:
  Worker(int fd, const EngineFactory& make) : fd_(fd), make_(make) {}

  int serve() {
    std::string line;
    while (read_line(line)) {
      const auto fields = worker_protocol::decode(line);
      if (fields[0] == "cancel") continue;  // it came after the run it called off had ended
      const Status status = handle(fields);
      const std::string reply = status.ok() ? worker_protocol::encode({"ok"})
                                            : worker_protocol::encode({"error", status.error().message()});
      if (!write_all(reply)) return 1;
    }
    return 0;
  }

 private:
  Status handle(const std::vector<std::string>& f) {
    if (f.size() >= 4 && f[0] == "load") {
      REDUCE_TRY(load(f[1], std::atoi(f[2].c_str()), f[3]));
      return {};
    }
    if (f.size() >= 6 && f[0] == "run") {
      REDUCE_ASSIGN(LoadedModel * loaded, load(f[1], std::atoi(f[2].c_str()), f[3]));
      TensorMap feed;
      std::error_code ec;
      if (!std::filesystem::is_empty(f[4], ec)) {  // a model may take no inputs at all
        REDUCE_ASSIGN(auto inputs, read_tensor_set(f[4], "input"));
        for (auto& t : inputs) feed[t.name] = std::move(t.tensor);
      }
      RunOptions options;
      options.outputs.assign(f.begin() + 6, f.end());
      REDUCE_ASSIGN(TensorMap values, run_watched(*loaded->prepared, feed, options));
      if (options.outputs.empty())
        for (const auto& vi : loaded->model->graph.outputs) options.outputs.push_back(vi.name);
      return write_output_folder(f[5], options.outputs, values);
    }
    return make_error("worker: malformed request");
  }

  // Runs while watching the socket: anything that arrives during a run (a `cancel` line, or the end
  // of the stream when the isolated engine stops this worker or ends) cancels it, and the run's
  // cancel flag kills the commands the engine started (external engines kill their process groups).
  Expected<TensorMap> run_watched(PreparedModel& prepared, const TensorMap& feed, RunOptions options) {
    const int done = ::eventfd(0, EFD_CLOEXEC);
    if (done < 0) return prepared.run(feed, options);
    std::atomic<bool> cancel{false};
    options.cancel = &cancel;
    std::thread watcher([&] {
      pollfd p[2] = {{fd_, POLLIN | POLLRDHUP, 0}, {done, POLLIN, 0}};
      while (::poll(p, 2, -1) < 0 && errno == EINTR) {
      }
      if (p[0].revents != 0) cancel.store(true);
    });
    auto result = prepared.run(feed, options);
    const uint64_t one = 1;
    while (::write(done, &one, sizeof one) < 0 && errno == EINTR) {
    }
    watcher.join();
    ::close(done);
    return result;
  }

  // The prepared model for (spec, path), most recently used first; a few stay loaded.
  Expected<LoadedModel*> load(const std::string& spec, int threads, const std::string& path) {
    for (auto it = loaded_.begin(); it != loaded_.end(); ++it)
      if (it->spec == spec && it->threads == threads && it->path == path) {
        loaded_.splice(loaded_.begin(), loaded_, it);
        return &loaded_.front();
      }
    LoadedModel entry{spec, threads, path, nullptr, nullptr, nullptr};
    REDUCE_ASSIGN(Model model, load_model(path));
    entry.model = std::make_unique<Model>(std::move(model));
    REDUCE_ASSIGN(entry.engine, make_(spec, threads));
    REDUCE_ASSIGN(entry.prepared, entry.engine->prepare(*entry.model));
    loaded_.push_front(std::move(entry));
    if (loaded_.size() > kKeepLoaded) loaded_.pop_back();
    return &loaded_.front();
  }

  bool read_line(std::string& line) {
    for (;;) {
      if (const size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return true;
      }
      char chunk[4096];
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  bool write_all(const std::string& data) {
    for (size_t done = 0; done < data.size();) {
      const ssize_t n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  static constexpr size_t kKeepLoaded = 4;
  int fd_;
  const EngineFactory& make_;
  std::string buffer_;
  std::list<LoadedModel> loaded_;
};

}  // namespace

int serve_engine_worker(int socket_fd, const EngineFactory& make) { return Worker(socket_fd, make).serve(); }

}  // namespace reduce
