// OrtWorker: `node` on the embedded worker script, in a WorkerProcess (which keeps the deadlines and
// tells deaths, hangs and cancels), exchanging the frames of ort_protocol.h.
#include "ort/ort_worker.h"

#include <cstring>
#include <fstream>

namespace reduce {

extern const char kOrtWorkerScript[];  // scripts/ort/ort_worker.js, embedded at build time

namespace fs = std::filesystem;
using ort_protocol::Frame;

namespace {

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
  WorkerProcess::Options options;
  // Arguments are paths and option words, never model data, and no shell sees them.
  options.argv = {"node",
                  script.string(),
                  config.install_folder.string(),
                  std::string(to_string(config.options.optimization)),
                  std::to_string(config.threads),
                  config.package == OrtPackage::Web ? std::string("wasm") : config.options.provider,
                  std::string(package_name(config.package))};
  // What ONNX Runtime leaves in TMPDIR (session files, debug logs) goes into the worker's own
  // folder, removed with the worker.
  options.env = config.env;
  options.env.push_back("TMPDIR=" + folder.path().string());
  // Its own process group: a Ctrl-C at the terminal reaches reduce, which cancels runs itself.
  options.own_group = true;
  options.who = "the ONNX Runtime worker";
  options.timeout_subject = "ONNX Runtime";
  options.timeout_note = " (--timeout); its worker was killed";
  auto process = WorkerProcess::start(std::move(folder), std::move(options));
  if (!process) return make_error("cannot start node (Node.js, needed by the ort engine): " + process.error().what);
  auto worker = std::unique_ptr<OrtWorker>(new OrtWorker(std::move(process).value()));
  worker->process_->begin(kStartSeconds);
  // Not a verdict: a worker that cannot start is an error of the set-up, whatever ended it.
  auto hello = worker->receive_frame(nullptr, 4096);
  if (!hello) return make_error("cannot start the ONNX Runtime worker: " + hello.error().what);
  if (hello->type == Frame::Error) return make_error(hello->payload);
  if (hello->type != Frame::Hello)
    return make_error("the ONNX Runtime worker sent a malformed greeting");
  worker->version_ = hello->payload;
  return worker;
}

Expected<OrtAnswer> OrtWorker::request(Frame type, uint32_t id, std::string_view payload, double timeout_seconds,
                                       const std::atomic<bool>* cancel) {
  process_->begin(timeout_seconds);
  REDUCE_TRY(process_->send(ort_protocol::header(type, id, payload.size()), cancel));
  REDUCE_TRY(process_->send(payload, cancel));
  return receive_frame(cancel);
}

Status OrtWorker::post(Frame type, uint32_t id) {
  if (!alive()) return {};
  process_->begin(kStartSeconds);  // the worker reads requests as soon as it is idle
  return process_->send(ort_protocol::header(type, id, 0), nullptr);
}

Expected<OrtAnswer> OrtWorker::receive_frame(const std::atomic<bool>* cancel, uint64_t max_bytes) {
  char head[ort_protocol::kHeaderBytes];
  REDUCE_TRY(process_->receive(head, sizeof head, cancel));
  uint32_t type = 0;
  uint64_t bytes = 0;
  std::memcpy(&type, head, 4);
  std::memcpy(&bytes, head + 8, 8);
  // A worker that speaks nonsense is not used again.
  if (bytes > max_bytes) return process_->stop(make_error("the ONNX Runtime worker sent a malformed frame"));
  OrtAnswer out{static_cast<Frame>(type), std::string(bytes, '\0')};
  REDUCE_TRY(process_->receive(out.payload.data(), out.payload.size(), cancel));
  return out;
}

}  // namespace reduce
