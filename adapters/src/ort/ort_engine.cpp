// The `ort[:OPTIONS]` engine: ONNX Runtime (onnxruntime-node) in persistent Node.js workers, one per
// concurrent run; a session per prepared model and requested output set, loaded once per worker.
#include <algorithm>
#include <list>
#include <mutex>
#include <utility>

#include "core/model_io.h"
#include "adapters/engine_spec.h"
#include "external/output_model.h"
#include "ort/ort_worker.h"
#include "spec/engine_factories.h"
#include "workers/worker_pool.h"

namespace reduce {

namespace {

using ort_protocol::Frame;

// The workers of one engine and the sessions each holds. A dead, hung or cancelled worker is
// dropped when its lease ends, and the next run starts a fresh one.
class OrtWorkers {
 public:
  using Lease = WorkerPool<OrtWorker>::Lease;

  OrtWorkers(OrtWorkerConfig config, double timeout_seconds)
      : config_(std::move(config)), timeout_seconds_(timeout_seconds), pool_([this] { return OrtWorker::start(config_); }) {}

  double timeout_seconds() const { return timeout_seconds_; }

  // A worker that has freed the sessions whose prepared models are gone.
  Expected<Lease> acquire() {
    for (;;) {
      REDUCE_ASSIGN(Lease worker, pool_.acquire());
      const auto to_free = pool_.locked([&] { return std::exchange(worker->to_free, {}); });
      for (uint32_t id : to_free) (void)worker->post(Frame::Free, id);
      if (worker->alive()) return worker;
    }  // it died while idle: dropped, and the next one is tried
  }

  uint32_t new_session_id() {
    return pool_.locked([&] { return next_session_++; });
  }
  bool holds(OrtWorker& worker, uint32_t session) {
    return pool_.locked([&] { return std::find(worker.sessions.begin(), worker.sessions.end(), session) != worker.sessions.end(); });
  }
  void loaded(OrtWorker& worker, uint32_t session) {
    pool_.locked([&] { worker.sessions.push_back(session); });
  }
  // The session's prepared model is gone: every worker holding it drops it before its next request.
  void forget(uint32_t session) {
    pool_.for_each([&](OrtWorker& w) {
      if (std::erase(w.sessions, session)) w.to_free.push_back(session);
    });
  }

 private:
  const OrtWorkerConfig config_;
  const double timeout_seconds_;
  WorkerPool<OrtWorker> pool_;
  uint32_t next_session_ = 1;  // guarded by the pool's lock
};

// The worker's message, as a one-line engine error.
Error ort_error(const std::string& message) {
  std::string line = message;
  std::replace(line.begin(), line.end(), '\n', ' ');
  return make_error("ONNX Runtime: " + line);
}

class OrtPrepared : public PreparedModel {
 public:
  OrtPrepared(const Model& model, std::shared_ptr<OrtWorkers> pool) : model_(model), pool_(std::move(pool)) {}
  ~OrtPrepared() override {
    for (const auto& v : variants_) pool_->forget(v.session);
  }

  // Loads the model with its own outputs, so that a model ONNX Runtime refuses fails here.
  Status load() {
    REDUCE_ASSIGN(const Variant* variant, variant_for(requested_outputs(model_, {})));
    REDUCE_ASSIGN(auto worker, pool_->acquire());
    return ensure_loaded(*worker, *variant);
  }

  Expected<TensorMap> run(const TensorMap& inputs, const RunOptions& options) override {
    const std::vector<std::string> outputs = requested_outputs(model_, options.outputs);
    REDUCE_ASSIGN(const Variant* variant, variant_for(outputs));
    const std::string request = ort_protocol::encode_run(inputs, outputs);
    auto answer = [&]() -> Expected<OrtAnswer> {
      REDUCE_ASSIGN(auto worker, pool_->acquire());
      REDUCE_TRY(ensure_loaded(*worker, *variant, options.cancel));
      return worker->request(Frame::Run, variant->session, request, pool_->timeout_seconds(), options.cancel);
    }();
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
  Status ensure_loaded(OrtWorker& worker, const Variant& variant, const std::atomic<bool>* cancel = nullptr) {
    if (pool_->holds(worker, variant.session)) return {};
    REDUCE_ASSIGN(OrtAnswer answer,
                  worker.request(Frame::Load, variant.session, variant.bytes, pool_->timeout_seconds(), cancel));
    if (answer.type == Frame::Error) return ort_error(answer.payload);
    if (answer.type != Frame::Ok) return make_error("the ONNX Runtime worker sent a malformed answer");
    pool_->loaded(worker, variant.session);
    return {};
  }

  const Model& model_;
  std::shared_ptr<OrtWorkers> pool_;
  std::mutex mutex_;
  std::list<Variant> variants_;
};

class OrtEngine : public Engine {
 public:
  OrtEngine(std::string name, std::shared_ptr<OrtWorkers> pool) : name_(std::move(name)), pool_(std::move(pool)) {}
  std::string name() const override { return name_; }

  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    auto prepared = std::make_unique<OrtPrepared>(model, pool_);
    REDUCE_TRY(prepared->load());
    return std::unique_ptr<PreparedModel>(std::move(prepared));
  }

 private:
  std::string name_;
  std::shared_ptr<OrtWorkers> pool_;
};

// A one-node model every provider can load: a provider the package ships but this machine cannot
// use (WebGPU without an adapter) fails here, once, instead of on every candidate.
Status check_provider(OrtWorkers& pool) {
  REDUCE_ASSIGN(Model probe, parse_model_text(R"(<ir_version: 8, opset_import: ["" : 13]>
probe (float[1] x) => (float[1] y) { y = Identity(x) })"));
  REDUCE_ASSIGN(std::string bytes, serialize_model(probe));
  REDUCE_ASSIGN(auto worker, pool.acquire());
  auto answer = worker->request(Frame::Load, 0, bytes, pool.timeout_seconds(), nullptr);
  if (answer && answer->type == Frame::Ok) (void)worker->post(Frame::Free, 0);
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
  auto pool = std::make_shared<OrtWorkers>(std::move(config), environment.timeout_seconds);
  // The first worker starts now: a missing `node` or provider is a one-line error before any check,
  // and the worker stays for the first run.
  {
    auto worker = pool->acquire();
    if (!worker) return Error{name, worker.error().what};
  }
  if (options.provider != "cpu")
    if (Status s = check_provider(*pool); !s.ok()) return Error{name, s.error().what};
  return std::unique_ptr<Engine>(std::make_unique<OrtEngine>(name, std::move(pool)));
}

}  // namespace reduce
