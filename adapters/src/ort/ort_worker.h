// OrtWorker: one Node.js process running the ONNX Runtime worker script, and the frames it exchanges.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "adapters/ort.h"
#include "external/temp_folder.h"
#include "ort/ort_protocol.h"
#include "workers/worker_process.h"

namespace reduce {

// How to start workers: where ONNX Runtime is, its session options, the environment of the process.
struct OrtWorkerConfig {
  std::filesystem::path install_folder;
  OrtPackage package = OrtPackage::Node;  // which npm package the folder holds
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

  // Sends one frame and waits for the answer. A worker that dies is ErrorKind::Crash (with its
  // signal and last lines), one past `timeout_seconds` (0: none) is killed and ErrorKind::Timeout,
  // and one whose run is cancelled is killed ("cancelled"); after any of these alive() is false.
  Expected<OrtAnswer> request(ort_protocol::Frame type, uint32_t id, std::string_view payload, double timeout_seconds,
                              const std::atomic<bool>* cancel);
  // Sends a frame that has no answer (FREE).
  Status post(ort_protocol::Frame type, uint32_t id);

  bool alive() const { return process_->alive(); }
  const std::string& version() const { return version_; }

  // The sessions this worker holds (guarded by the pool's lock).
  std::vector<uint32_t> sessions;  // loaded in this process
  std::vector<uint32_t> to_free;   // loaded, but their prepared model is gone: FREE before the next request

 private:
  explicit OrtWorker(std::unique_ptr<WorkerProcess> process) : process_(std::move(process)) {}
  Expected<OrtAnswer> receive_frame(const std::atomic<bool>* cancel,
                                    uint64_t max_bytes = ort_protocol::kMaxPayloadBytes);

  std::unique_ptr<WorkerProcess> process_;
  std::string version_;
};

}  // namespace reduce
