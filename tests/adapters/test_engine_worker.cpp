// A worker for isolated-engine tests: `reduce __worker` plus engines that crash or hang on purpose.
//   test-crash:SIGNAL   returns its input X as Y, but raises SIGNAL when X[0] is negative
//   test-hang           never returns from a run
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>

#include "adapters/engine_spec.h"
#include "adapters/isolated_worker.h"

namespace {

using namespace reduce;

class MisbehavingPrepared : public PreparedModel {
 public:
  explicit MisbehavingPrepared(int signal) : signal_(signal) {}
  Expected<TensorMap> run(const TensorMap& inputs, const RunOptions&) override {
    if (signal_ == 0)
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    const Tensor& x = inputs.at("X");
    if (x.data<float>()[0] < 0) {
      std::signal(signal_, SIG_DFL);  // sanitizer builds catch SIGSEGV themselves and exit(1)
      std::raise(signal_);
    }
    return TensorMap{{"Y", x}};
  }

 private:
  int signal_;
};

class MisbehavingEngine : public Engine {
 public:
  explicit MisbehavingEngine(int signal) : signal_(signal) {}
  std::string name() const override { return "misbehaving"; }
  Expected<std::unique_ptr<PreparedModel>> prepare(const Model&) override {
    return std::unique_ptr<PreparedModel>(std::make_unique<MisbehavingPrepared>(signal_));
  }

 private:
  int signal_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != "__worker") return 2;
  return serve_engine_worker(std::atoi(argv[2]), [](std::string_view spec, int threads) -> Expected<std::unique_ptr<Engine>> {
    if (spec.substr(0, 11) == "test-crash:")
      return std::unique_ptr<Engine>(std::make_unique<MisbehavingEngine>(std::atoi(std::string(spec.substr(11)).c_str())));
    if (spec == "test-hang") return std::unique_ptr<Engine>(std::make_unique<MisbehavingEngine>(0));
    EngineEnvironment environment;
    environment.threads = threads;
    return make_engine(spec, environment);
  });
}
