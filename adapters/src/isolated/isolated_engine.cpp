// `isolated:SPEC`: runs an engine in worker processes (`reduce __worker`); a worker that dies is a crash.
#include <atomic>

#include "core/model_io.h"
#include "external/output_model.h"
#include "external/temp_folder.h"
#include "external/tensor_exchange.h"
#include "isolated/worker_protocol.h"
#include "factories/engine_factories.h"
#include "workers/worker_pool.h"
#include "workers/worker_process.h"

namespace reduce {

namespace fs = std::filesystem;

namespace {

// One `reduce __worker` process on its line protocol.
class IsolatedWorker {
 public:
  static Expected<std::unique_ptr<IsolatedWorker>> start(const EngineEnvironment& environment) {
    REDUCE_ASSIGN(TempFolder folder, TempFolder::create("reduce-worker-"));
    WorkerProcess::Options options;
    const std::string program =
        environment.worker_program.empty() ? "/proc/self/exe" : environment.worker_program.string();
    options.argv = {program, "__worker", "3"};
    options.env = environment.env;
    options.who = "engine";
    options.timeout_subject = "engine run";
    // A cancelled worker kills the commands of its run and answers; one that does not (an
    // in-process engine that does not observe the cancel) is stopped after the grace period.
    options.cancel_message = worker_protocol::encode({"cancel"});
    options.grace_seconds = 1;
    auto process = WorkerProcess::start(std::move(folder), std::move(options));
    if (!process) return Error{program, "cannot start the engine worker: " + process.error().what};
    return std::unique_ptr<IsolatedWorker>(new IsolatedWorker(std::move(process).value()));
  }

  // Sends a request and waits for its answer (ok, or the engine's error).
  Status request(const std::vector<std::string>& fields, double timeout_seconds, const std::atomic<bool>* cancel) {
    process_->begin(timeout_seconds);
    REDUCE_TRY(process_->send(worker_protocol::encode(fields), cancel));
    REDUCE_ASSIGN(std::string reply, process_->receive_line(cancel));
    const auto answer = worker_protocol::decode(reply);
    if (answer[0] == "ok") return {};
    if (answer[0] == "error" && answer.size() >= 2) return make_error(answer[1]);
    return make_error("engine worker: malformed reply");
  }

  bool alive() const { return process_->alive(); }

 private:
  explicit IsolatedWorker(std::unique_ptr<WorkerProcess> process) : process_(std::move(process)) {}
  std::unique_ptr<WorkerProcess> process_;
};

// Idle workers, shared by every model prepared on one isolated engine; as many as runs in flight.
class IsolatedWorkers {
 public:
  explicit IsolatedWorkers(EngineEnvironment environment)
      : environment_(std::move(environment)), pool_([this] { return IsolatedWorker::start(environment_); }) {}
  const EngineEnvironment& environment() const { return environment_; }

  Status request(const std::vector<std::string>& fields, const std::atomic<bool>* cancel = nullptr) {
    REDUCE_ASSIGN(auto worker, pool_.acquire());
    return worker->request(fields, environment_.timeout_seconds, cancel);
  }

 private:
  const EngineEnvironment environment_;
  WorkerPool<IsolatedWorker> pool_;
};

class IsolatedPrepared : public PreparedModel {
 public:
  IsolatedPrepared(const Model& model, std::string spec, std::shared_ptr<IsolatedWorkers> pool, TempFolder folder)
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
  std::shared_ptr<IsolatedWorkers> pool_;
  TempFolder folder_;
};

class IsolatedEngine : public Engine {
 public:
  IsolatedEngine(std::string spec, std::string name, std::string release, const EngineEnvironment& environment)
      : spec_(std::move(spec)), name_(std::move(name)), release_(std::move(release)),
        pool_(std::make_shared<IsolatedWorkers>(environment)) {}
  std::string name() const override { return name_; }
  std::string release() const override { return release_; }

  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    REDUCE_ASSIGN(TempFolder folder, TempFolder::create("reduce-isolated-model-"));
    REDUCE_TRY(as_setup(save_model(model, folder / "model.onnx")));
    auto prepared = std::make_unique<IsolatedPrepared>(model, spec_, pool_, std::move(folder));
    REDUCE_TRY(prepared->load());
    return std::unique_ptr<PreparedModel>(std::move(prepared));
  }

 private:
  std::string spec_, name_, release_;
  std::shared_ptr<IsolatedWorkers> pool_;
};

}  // namespace

Expected<std::unique_ptr<Engine>> make_isolated_engine(std::string_view inner_spec, const EngineEnvironment& environment,
                                                       std::string release) {
  // `opencv` is isolated by default; its in-process form runs inside the worker.
  const std::string name = inner_spec == "opencv-inprocess" ? "opencv" : "isolated:" + std::string(inner_spec);
  if (inner_spec.substr(0, 8) == "isolated") return Error{name, "an isolated engine is already isolated"};
  // The inner spec is built by the worker (which may know engines this process does not, as the
  // tests' worker does); an unknown one fails at prepare() with the worker's message.
  return std::unique_ptr<Engine>(std::make_unique<IsolatedEngine>(std::string(inner_spec), name, std::move(release), environment));
}

}  // namespace reduce
