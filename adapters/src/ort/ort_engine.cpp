// The `ort[@VERSION][:OPTIONS]` and `ort-web[@VERSION][:OPTIONS]` engines: ONNX Runtime (onnxruntime-node, or
// onnxruntime-web's wasm backend) in persistent Node.js workers, one per concurrent run and one pool per
// engine (so per release); a session per prepared model and requested output set, loaded once per worker.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <list>
#include <mutex>
#include <sstream>
#include <utility>

#include "core/mapped_file.h"
#include "core/model_io.h"
#include "adapters/engine_spec.h"
#include "adapters/process.h"
#include "external/output_model.h"
#include "ort/ort_worker.h"
#include "factories/engine_factories.h"
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
  // "onnxruntime-node 1.16.3", as the first worker said; whether it passes float16 tensors to
  // JavaScript, and when not, what it said when tried.
  const std::string& version() const { return version_; }
  bool passes_float16() const { return float16_refusal_.empty(); }
  const std::string& float16_refusal() const { return float16_refusal_; }
  // The execution provider the sessions ask for ("cpu"; onnxruntime-web: "wasm").
  std::string provider() const { return config_.package == OrtPackage::Web ? "wasm" : config_.options.provider; }
  const std::filesystem::path& folder() const { return config_.install_folder; }
  void set_version(std::string version) { version_ = std::move(version); }
  void set_float16_refusal(std::string refusal) { float16_refusal_ = std::move(refusal); }

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
  std::string version_;          // set once, before the engine runs anything
  std::string float16_refusal_;  // likewise; empty: float16 tensors pass
  WorkerPool<OrtWorker> pool_;
  uint32_t next_session_ = 1;  // guarded by the pool's lock
};

// The worker's message, as a one-line engine error (with the release's limit, when it is one).
Error ort_error(const std::string& message) {
  std::string line = message;
  std::replace(line.begin(), line.end(), '\n', ' ');
  Error e = make_error("ONNX Runtime: " + line);
  e.limit = ort_limit(message);
  // A type reduce's worker has no typed array for is the tool's limit, never a verdict on the model.
  if (e.limit.rfind("reduce's worker", 0) == 0) e.kind = ErrorKind::Setup;
  return e;
}

class OrtPrepared : public PreparedModel {
 public:
  OrtPrepared(const Model& model, std::shared_ptr<OrtWorkers> pool) : model_(model), pool_(std::move(pool)) {}
  ~OrtPrepared() override {
    for (const auto& v : variants_) pool_->forget(v.session);
  }

  // Loads the model with its own outputs, so that a model ONNX Runtime refuses fails here.
  Status load() {
    if (!pool_->passes_float16()) {
      std::vector<ValueInfo> fed;  // inputs with an initializer (IR < 4 style weights) are not fed
      for (const auto& vi : model_.graph.inputs)
        if (std::none_of(model_.graph.initializers.begin(), model_.graph.initializers.end(),
                         [&](const Initializer& w) { return w.name == vi.name; }))
          fed.push_back(vi);
      REDUCE_TRY(check_float16(fed, "input"));
    }
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
      REDUCE_TRY(check_float16(model_.graph.outputs, "output"));
      REDUCE_ASSIGN(v.bytes, serialize_model(model_));
    } else {
      REDUCE_ASSIGN(Model with_outputs, model_with_outputs(model_, outputs));
      REDUCE_TRY(check_float16(with_outputs.graph.outputs, "value"));
      REDUCE_ASSIGN(v.bytes, serialize_model(with_outputs));
    }
    variants_.push_back(std::move(v));  // a list: pointers to variants stay valid
    return &variants_.back();
  }

  // A release that cannot hand float16 tensors to JavaScript refuses them, as the tool's limit
  // (ErrorKind::Setup: never a verdict on the model).
  Status check_float16(const std::vector<ValueInfo>& values, const char* what) const {
    if (pool_->passes_float16()) return {};
    for (const auto& v : values)
      if (v.type.is_tensor() && v.type.elem_type == static_cast<int32_t>(DType::Float16))
        return Error{{},
                     pool_->version() + " cannot pass float16 tensors to JavaScript (tried once: " +
                         pool_->float16_refusal() + "): " + what + " '" + v.name + "' is float16; use another release",
                     ErrorKind::Setup, 0, "its JavaScript binding cannot pass float16 tensors"};
    return {};
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
  std::string release() const override { return pool_->version() + " (" + pool_->provider() + ")"; }

  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    auto prepared = std::make_unique<OrtPrepared>(model, pool_);
    REDUCE_TRY(prepared->load());
    return std::unique_ptr<PreparedModel>(std::move(prepared));
  }

 private:
  std::string name_;
  std::shared_ptr<OrtWorkers> pool_;
};

// A one-node probe model (ONNX text) loaded in a worker, and run on `feeds` when given: the first
// answer that is not OK (the load's), else the run's. The session is freed after.
Expected<OrtAnswer> run_probe(OrtWorkers& pool, const char* text, const TensorMap* feeds = nullptr) {
  REDUCE_ASSIGN(Model probe, parse_model_text(text));
  REDUCE_ASSIGN(std::string bytes, serialize_model(probe));
  REDUCE_ASSIGN(auto worker, pool.acquire());
  auto answer = worker->request(Frame::Load, 0, bytes, pool.timeout_seconds(), nullptr);
  if (!answer || answer->type != Frame::Ok) return answer;
  if (feeds) answer = worker->request(Frame::Run, 0, ort_protocol::encode_run(*feeds, {"y"}), pool.timeout_seconds(), nullptr);
  (void)worker->post(Frame::Free, 0);
  return answer;
}

// A one-node model every provider can load: a provider the package ships but this machine cannot
// use (WebGPU without an adapter) fails here, once, instead of on every candidate.
Status check_provider(OrtWorkers& pool) {
  REDUCE_ASSIGN(OrtAnswer answer, run_probe(pool, R"(<ir_version: 8, opset_import: ["" : 13]>
probe (float[1] x) => (float[1] y) { y = Identity(x) })"));
  if (answer.type == Frame::Error) return make_error("the execution provider cannot run here: " + answer.payload);
  return {};
}

// Whether the release passes float16 tensors across its JavaScript binding (onnxruntime-node before
// 1.17 refuses them, and some releases after too): a float16 Identity run once, with the answer kept
// in the release's folder (FLOAT16: the version, then "passes" or the refusal), so that the next
// process asks no more. Empty when they pass, else what the release said. A run that did not answer
// (the worker died or timed out) is not kept: it says nothing about the binding.
std::string float16_refusal(OrtWorkers& pool) {
  const std::filesystem::path cache = pool.folder() / "FLOAT16";
  std::error_code ec;
  if (std::filesystem::file_size(cache, ec) < 4096 && !ec) {
    std::ifstream in(cache);
    std::string version, answer;
    if (std::getline(in, version) && std::getline(in, answer) && version == pool.version() && !answer.empty())
      return answer == "passes" ? "" : answer;
  }
  TensorMap feeds;
  feeds.emplace("x", Tensor::from_vector(DType::Float16, {1}, std::vector<uint16_t>{0x3c00}).value());  // 1.0
  auto answer = run_probe(pool, R"(<ir_version: 8, opset_import: ["" : 13]>
probe (float16[1] x) => (float16[1] y) { y = Identity(x) })", &feeds);
  if (!answer) return "cannot be tried: " + answer.error().message();
  std::string refusal;
  if (answer->type == Frame::Error) {
    refusal = answer->payload.substr(0, 400);
    std::replace(refusal.begin(), refusal.end(), '\n', ' ');
  } else if (answer->type != Frame::Tensors) {
    refusal = "the worker sent a malformed answer";
  }
  // A folder it cannot write asks again next time.
  (void)write_file_atomic(cache, pool.version() + "\n" + (refusal.empty() ? "passes" : refusal) + "\n");
  return refusal;
}

// Whether an installed package still has its binary (a .node addon or a .wasm module): a folder left
// without it (an interrupted install, a cache cleaned by hand) is installed again, not used.
bool has_binary(const std::filesystem::path& package) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(package, ec); !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    // onnxruntime-node ships the addons of every platform: this one's counts (reduce runs on Linux).
    const auto ext = it->path().extension();
    const bool ours = ext == ".wasm" || (ext == ".node" && it->path().string().find("/linux/") != std::string::npos);
    if (ours && it->is_regular_file(ec)) return true;
  }
  return false;
}

// Megabytes a folder takes on disk (files only), said after an install.
uint64_t folder_megabytes(const std::filesystem::path& folder) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(folder, ec); !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) bytes += it->file_size(ec);
  return (bytes + (1u << 20) / 2) >> 20;
}

// The release's folder, installed now when it is not there yet (the embedded install.sh, once: it
// locks the folder, and the next engine finds it filled). A folder the user chose with
// REDUCE_ORT_DIR is theirs: plain `ort` is never installed into it.
Expected<std::filesystem::path> release_folder(const std::string& name, const OrtOptions& options, OrtPackage package,
                                               const EngineEnvironment& environment) {
  const std::filesystem::path folder = ort_release_folder(package, options.release, environment.env, environment.cache_folder);
  const std::string_view pkg = package_name(package);
  std::error_code ec;
  // REFUSED: install.sh found the release unusable here; it says why again, without the network.
  if (std::filesystem::exists(folder / "node_modules" / pkg / "package.json", ec) &&
      !std::filesystem::exists(folder / "REFUSED", ec) && has_binary(folder / "node_modules" / pkg))
    return folder;
  const bool default_release = options.release.empty() || options.release == kOrtDefaultRelease;
  if (package == OrtPackage::Node && default_release && ort_folder_is_chosen(environment.env))
    return Error{name, "onnxruntime-node is not installed in " + folder.string() +
                           " (REDUCE_ORT_DIR names it: unset REDUCE_ORT_DIR and reduce installs it into its cache folder, or run `npm install onnxruntime-node@" +
                           std::string(kOrtDefaultRelease) + "` in that folder)"};
  const std::string release(options.release.empty() ? kOrtDefaultRelease : std::string_view(options.release));
  const std::string word = (package == OrtPackage::Web ? "web@" : "") + release;
  ProcessOptions run;  // npm's output is kept: its last error line is the message
  run.timeout_seconds = 1800;
  // Said as it starts, not after minutes of silence (a refusal remembered in the folder installs nothing).
  const bool refused = std::filesystem::exists(folder / "REFUSED", ec);
  if (!refused)
    environment.note(name + ": installing " + std::string(pkg) + "@" + release + " from npm into " + folder.string() +
                     " (once; a release takes 90 to 300 MB on disk; --cache-dir or REDUCE_CACHE_DIR choose the folder;"
                     " reduce waits for it to end, Ctrl-C included)");
  const auto command = ort_install_command(word, folder);
  auto installed = run_process(command, run);
  if (!installed) return Error{name, "cannot run bash for the release installer: " + installed.error().what};
  if (installed->exited_ok()) {
    if (!refused)
      environment.note(name + ": installed " + std::string(pkg) + "@" + release + " (" + std::to_string(folder_megabytes(folder)) + " MB)");
    return folder;
  }
  // The script's own line ("error: onnxruntime-node@1.8.0: ... cannot be used offline"), else how it ended.
  const std::string& out = installed->output;
  const size_t at = out.rfind("error: ");
  if (at == std::string::npos) {
    // Another program's message (npm, a shell): its last line says more than the exit code.
    std::string last;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);)
      if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
    return Error{name, "cannot install " + std::string(pkg) + "@" + release + ": install.sh " + installed->describe(run) +
                           (last.empty() ? "" : ": " + last.substr(0, 400))};
  }
  const size_t end = std::min(out.find('\n', at), out.size());
  return Error{name, out.substr(at + 7, end - at - 7)};
}

}  // namespace

Expected<std::unique_ptr<Engine>> make_ort_engine(const OrtOptions& options, OrtPackage package,
                                                  const EngineEnvironment& environment) {
  EngineSpec spec;
  spec.kind = package == OrtPackage::Web ? EngineKind::OrtWeb : EngineKind::Ort;
  spec.ort = options;
  const std::string name = to_string(spec);
  OrtWorkerConfig config;
  REDUCE_ASSIGN(config.install_folder, release_folder(name, options, package, environment));
  config.package = package;
  config.options = options;
  config.threads = options.threads ? options.threads : environment.threads;
  config.env = environment.env;
  auto pool = std::make_shared<OrtWorkers>(std::move(config), environment.timeout_seconds);
  // The first worker starts now: a missing `node` or provider is a one-line error before any check,
  // and the worker stays for the first run.
  {
    auto worker = pool->acquire();
    if (!worker) return Error{name, worker.error().what};
    const std::string& version = (*worker)->version();
    if (!options.release.empty() && version != std::string(package_name(package)) + " " + options.release)
      return Error{name, "the folder " + ort_release_folder(package, options.release, environment.env, environment.cache_folder).string() +
                             " holds " + version + ", not " + options.release};
    pool->set_version(version);
  }
  pool->set_float16_refusal(float16_refusal(*pool));
  if (options.provider != "cpu")
    if (Status s = check_provider(*pool); !s.ok()) return Error{name, s.error().what};
  return std::unique_ptr<Engine>(std::make_unique<OrtEngine>(name, std::move(pool)));
}

}  // namespace reduce
