// The `ort[:OPTIONS]` engine: ONNX Runtime (onnxruntime-node) in persistent Node.js workers, one per
// concurrent run; a session per prepared model and requested output set, loaded once per worker.
#include <algorithm>
#include <list>
#include <mutex>

#include "core/model_io.h"
#include "adapters/engine_spec.h"
#include "external/output_model.h"
#include "ort/ort_worker.h"
#include "spec/engine_factories.h"

namespace reduce {

namespace {

using ort_protocol::Frame;

// A worker and the sessions it holds (guarded by the pool's mutex).
struct PooledWorker {
  std::unique_ptr<OrtWorker> process;
  std::vector<uint32_t> sessions;  // loaded in this process
  std::vector<uint32_t> to_free;   // loaded, but their prepared model is gone: FREE before the next request
};

// The workers of one engine. A run takes an idle worker (or starts one) and gives it back when it
// is still alive; a dead, hung or cancelled worker is dropped and the next run starts a fresh one.
class OrtWorkerPool {
 public:
  OrtWorkerPool(OrtWorkerConfig config, double timeout_seconds)
      : config_(std::move(config)), timeout_seconds_(timeout_seconds) {}

  double timeout_seconds() const { return timeout_seconds_; }

  Expected<std::shared_ptr<PooledWorker>> acquire() {
    for (;;) {
      std::shared_ptr<PooledWorker> worker;
      std::vector<uint32_t> to_free;
      {
        std::lock_guard lock(mutex_);
        if (idle_.empty()) break;
        worker = std::move(idle_.back());
        idle_.pop_back();
        to_free.swap(worker->to_free);
      }
      for (uint32_t id : to_free) (void)worker->process->post(Frame::Free, id);
      if (worker->process->alive()) return worker;
      release(std::move(worker));  // it died while idle: forgotten, and the next one is tried
    }
    REDUCE_ASSIGN(auto process, OrtWorker::start(config_));
    auto worker = std::make_shared<PooledWorker>();
    worker->process = std::move(process);
    std::lock_guard lock(mutex_);
    all_.push_back(worker);
    return worker;
  }

  void release(std::shared_ptr<PooledWorker> worker) {
    std::lock_guard lock(mutex_);
    if (worker->process->alive()) {
      idle_.push_back(std::move(worker));
    } else {
      std::erase(all_, worker);
    }
  }

  uint32_t new_session_id() {
    std::lock_guard lock(mutex_);
    return next_session_++;
  }
  bool holds(const PooledWorker& worker, uint32_t session) {
    std::lock_guard lock(mutex_);
    return std::find(worker.sessions.begin(), worker.sessions.end(), session) != worker.sessions.end();
  }
  void loaded(PooledWorker& worker, uint32_t session) {
    std::lock_guard lock(mutex_);
    worker.sessions.push_back(session);
  }
  // The session's prepared model is gone: every worker holding it drops it before its next request.
  void forget(uint32_t session) {
    std::lock_guard lock(mutex_);
    for (auto& w : all_)
      if (std::erase(w->sessions, session)) w->to_free.push_back(session);
  }

 private:
  const OrtWorkerConfig config_;
  const double timeout_seconds_;
  std::mutex mutex_;
  std::vector<std::shared_ptr<PooledWorker>> idle_, all_;
  uint32_t next_session_ = 1;
};

// The worker's message, as a one-line engine error.
Error ort_error(const std::string& message) {
  std::string line = message;
  std::replace(line.begin(), line.end(), '\n', ' ');
  return make_error("ONNX Runtime: " + line);
}

class OrtPrepared : public PreparedModel {
 public:
  OrtPrepared(const Model& model, std::shared_ptr<OrtWorkerPool> pool) : model_(model), pool_(std::move(pool)) {}
  ~OrtPrepared() override {
    for (const auto& v : variants_) pool_->forget(v.session);
  }

  // Loads the model with its own outputs, so that a model ONNX Runtime refuses fails here.
  Status load() {
    REDUCE_ASSIGN(const Variant* variant, variant_for(requested_outputs(model_, {})));
    REDUCE_ASSIGN(auto worker, pool_->acquire());
    Status loaded = ensure_loaded(*worker, *variant);
    pool_->release(std::move(worker));
    return loaded;
  }

  Expected<TensorMap> run(const TensorMap& inputs, const RunOptions& options) override {
    const std::vector<std::string> outputs = requested_outputs(model_, options.outputs);
    REDUCE_ASSIGN(const Variant* variant, variant_for(outputs));
    const std::string request = ort_protocol::encode_run(inputs, outputs);
    REDUCE_ASSIGN(auto worker, pool_->acquire());
    auto answer = [&]() -> Expected<OrtAnswer> {
      REDUCE_TRY(ensure_loaded(*worker, *variant, options.cancel));
      return worker->process->request(Frame::Run, variant->session, request, pool_->timeout_seconds(), options.cancel);
    }();
    pool_->release(std::move(worker));
    if (!answer) return answer.error();
    if (answer->type == Frame::Error) return ort_error(answer->payload);
    if (answer->type != Frame::Tensors) return make_error("the ONNX Runtime worker sent a malformed answer");
    REDUCE_ASSIGN(TensorMap values, ort_protocol::decode_tensors(answer->payload));
    for (const auto& name : outputs)
      if (!values.count(name)) return make_error("ONNX Runtime returned no value for output '" + name + "'");
    return values;
  }

 private:
  // The model with one set of requested values as its outputs, as ONNX Runtime loads it.
  struct Variant {
    std::vector<std::string> outputs;
    std::string bytes;
    uint32_t session = 0;
  };

  Expected<const Variant*> variant_for(const std::vector<std::string>& outputs) {
    std::lock_guard lock(mutex_);
    for (const auto& v : variants_)
      if (v.outputs == outputs) return &v;
    Variant v{outputs, {}, pool_->new_session_id()};
    if (are_graph_outputs(model_, outputs)) {
      REDUCE_ASSIGN(v.bytes, serialize_model(model_));
    } else {
      REDUCE_ASSIGN(Model with_outputs, model_with_outputs(model_, outputs));
      REDUCE_ASSIGN(v.bytes, serialize_model(with_outputs));
    }
    variants_.push_back(std::move(v));  // a list: pointers to variants stay valid
    return &variants_.back();
  }

  // The variant's session in this worker, created on first use (after a restart, again).
  Status ensure_loaded(PooledWorker& worker, const Variant& variant, const std::atomic<bool>* cancel = nullptr) {
    if (pool_->holds(worker, variant.session)) return {};
    REDUCE_ASSIGN(OrtAnswer answer,
                  worker.process->request(Frame::Load, variant.session, variant.bytes, pool_->timeout_seconds(), cancel));
    if (answer.type == Frame::Error) return ort_error(answer.payload);
    if (answer.type != Frame::Ok) return make_error("the ONNX Runtime worker sent a malformed answer");
    pool_->loaded(worker, variant.session);
    return {};
  }

  const Model& model_;
  std::shared_ptr<OrtWorkerPool> pool_;
  std::mutex mutex_;
  std::list<Variant> variants_;
};

class OrtEngine : public Engine {
 public:
  OrtEngine(std::string name, std::shared_ptr<OrtWorkerPool> pool) : name_(std::move(name)), pool_(std::move(pool)) {}
  std::string name() const override { return name_; }

  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    auto prepared = std::make_unique<OrtPrepared>(model, pool_);
    REDUCE_TRY(prepared->load());
    return std::unique_ptr<PreparedModel>(std::move(prepared));
  }

 private:
  std::string name_;
  std::shared_ptr<OrtWorkerPool> pool_;
};

// A one-node model every provider can load: a provider the package ships but this machine cannot
// use (WebGPU without an adapter) fails here, once, instead of on every candidate.
Status check_provider(OrtWorkerPool& pool) {
  REDUCE_ASSIGN(Model probe, parse_model_text(R"(<ir_version: 8, opset_import: ["" : 13]>
probe (float[1] x) => (float[1] y) { y = Identity(x) })"));
  REDUCE_ASSIGN(std::string bytes, serialize_model(probe));
  REDUCE_ASSIGN(auto worker, pool.acquire());
  auto answer = worker->process->request(Frame::Load, 0, bytes, pool.timeout_seconds(), nullptr);
  if (answer && answer->type == Frame::Ok) (void)worker->process->post(Frame::Free, 0);
  pool.release(std::move(worker));
  if (!answer) return answer.error();
  if (answer->type == Frame::Error) return make_error("the execution provider cannot run here: " + answer->payload);
  return {};
}

}  // namespace

Expected<std::unique_ptr<Engine>> make_ort_engine(const OrtOptions& options, const EngineEnvironment& environment) {
  EngineSpec spec;
  spec.kind = EngineKind::Ort;
  spec.ort = options;
  const std::string name = to_string(spec);
  OrtWorkerConfig config;
  config.install_folder = ort_install_folder(environment.env);
  config.options = options;
  config.threads = options.threads ? options.threads : environment.threads;
  config.env = environment.env;
  std::error_code ec;
  if (!std::filesystem::exists(config.install_folder / "node_modules" / "onnxruntime-node" / "package.json", ec))
    return Error{name, "onnxruntime-node is not installed in " + config.install_folder.string() +
                           " (run scripts/ort/install.sh, or set REDUCE_ORT_DIR to the folder it filled)"};
  auto pool = std::make_shared<OrtWorkerPool>(std::move(config), environment.timeout_seconds);
  // The first worker starts now: a missing `node` or provider is a one-line error before any check,
  // and the worker stays for the first run.
  {
    auto worker = pool->acquire();
    if (!worker) return Error{name, worker.error().what};
    pool->release(std::move(*worker));
  }
  if (options.provider != "cpu")
    if (Status s = check_provider(*pool); !s.ok()) return Error{name, s.error().what};
  return std::unique_ptr<Engine>(std::make_unique<OrtEngine>(name, std::move(pool)));
}

}  // namespace reduce
