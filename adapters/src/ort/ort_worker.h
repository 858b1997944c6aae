// OrtWorker: one Node.js process running the ONNX Runtime worker script, and the frames it exchanges.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "adapters/ort.h"
#include "external/temp_folder.h"
#include "ort/ort_protocol.h"

namespace reduce {

// How to start workers: where ONNX Runtime is, its session options, the environment of the process.
struct OrtWorkerConfig {
  std::filesystem::path install_folder;
  OrtOptions options;
  int threads = 0;
  std::vector<std::string> env;  // extra NAME=VALUE entries (--slot-env)
};

struct OrtAnswer {
  ort_protocol::Frame type;
  std::string payload;
};

class OrtWorker {
 public:
  // Starts `node` on the embedded worker script and waits for its HELLO (an ERROR there, e.g. a
  // provider the package lacks, is the error; a worker that dies says what it printed).
  static Expected<std::unique_ptr<OrtWorker>> start(const OrtWorkerConfig& config);
  ~OrtWorker();
  OrtWorker(const OrtWorker&) = delete;
  OrtWorker& operator=(const OrtWorker&) = delete;

  // Sends one frame and waits for the answer. A worker that dies is ErrorKind::Crash (with its
  // signal and last lines), one past `timeout_seconds` (0: none) is killed and ErrorKind::Timeout,
  // and one whose run is cancelled is killed ("cancelled"); after any of these alive() is false.
  Expected<OrtAnswer> request(ort_protocol::Frame type, uint32_t id, std::string_view payload, double timeout_seconds,
                              const std::atomic<bool>* cancel);
  // Sends a frame that has no answer (FREE).
  Status post(ort_protocol::Frame type, uint32_t id);

  bool alive() const { return pid_ > 0; }
  const std::string& version() const { return version_; }

 private:
  OrtWorker(TempFolder folder, int fd) : folder_(std::move(folder)), fd_(fd) {}
  // Both observe the current request's deadline (started_ + timeout_) and the cancel flag.
  Status send_all(std::string_view data, const std::atomic<bool>* cancel);
  Status receive(char* data, size_t size, const std::atomic<bool>* cancel);
  // What a wait ended with when the worker can no longer be used: it died, timed out or was cancelled.
  Error died();
  Error killed(Error why);

  TempFolder folder_;
  int fd_ = -1;
  pid_t pid_ = 0;
  std::string version_;
  double started_ = 0;  // steady clock seconds of the current request's start (for deadlines)
  double timeout_ = 0;
};

}  // namespace reduce
