// Reduction sessions: when candidates run with respect to the original model's check.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "engine/engine.h"
#include "reducer/parallelism.h"
#include "report/report.h"
#include "session/session.h"
#include "test_support.h"

namespace reduce {
namespace {

// As the executable's main: -j checks in flight beyond the cores of this machine.
const CheckParallelism kParallelism(64);

using testing::parse_model;
using testing::TempDir;

// Which runs overlapped the original's: the original's run (every node) waits a while for another
// run to start beside it, and counts those that did.
struct RunWatch {
  std::mutex mutex;
  std::condition_variable started;
  bool original_running = false;
  int runs = 0;
  int beside_original = 0;
};

// The reference with +1 on every float output of a model holding an Exp node: a mismatch that the
// reduction keeps down to that node.
class WatchedEngine : public Engine {
 public:
  WatchedEngine(const Graph& original, RunWatch& watch)
      : original_nodes_(original.nodes.size()), original_outputs_(original.outputs.size()), watch_(watch) {}
  std::string name() const override { return "watched"; }
  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    bool has_exp = false;
    for (const Node& n : model.graph.nodes) has_exp |= n.op_type == "Exp";
    REDUCE_ASSIGN(auto inner, make_reference_engine(1)->prepare(model));
    return std::unique_ptr<PreparedModel>(
        new Prepared(std::move(inner), has_exp, is_original(model.graph), watch_));
  }

 private:
  // Every node and the original's outputs only (a candidate of every node marks more outputs).
  bool is_original(const Graph& g) const {
    return g.nodes.size() == original_nodes_ && g.outputs.size() == original_outputs_;
  }

  class Prepared : public PreparedModel {
   public:
    Prepared(std::unique_ptr<PreparedModel> inner, bool corrupt, bool original, RunWatch& watch)
        : inner_(std::move(inner)), corrupt_(corrupt), original_(original), watch_(watch) {}
    Expected<TensorMap> run(const TensorMap& inputs, const RunOptions& options) override {
      {
        std::unique_lock<std::mutex> lock(watch_.mutex);
        ++watch_.runs;
        if (original_) {
          watch_.original_running = true;
          watch_.started.wait_for(lock, std::chrono::milliseconds(500), [&] { return watch_.beside_original > 0; });
          watch_.original_running = false;
        } else if (watch_.original_running) {
          ++watch_.beside_original;
          watch_.started.notify_all();
        }
      }
      RunOptions whole = options;  // every output back at once (this engine does not stream)
      whole.on_output = nullptr;
      REDUCE_ASSIGN(TensorMap out, inner_->run(inputs, whole));
      if (corrupt_)
        for (auto& [name, t] : out)
          for (float& x : t.mutable_data<float>()) x += 1;
      return out;
    }

   private:
    std::unique_ptr<PreparedModel> inner_;
    bool corrupt_, original_;
    RunWatch& watch_;
  };
  size_t original_nodes_, original_outputs_;
  RunWatch& watch_;
};

TEST(Session, WithAnEngineInThisProcessNoCandidateRunsBesideTheOriginal) {
  // The original is the largest model of a reduction: a candidate run beside it, in the same
  // process, would hold its own activations at the same time. With two jobs, candidates wait for
  // the original's verdict.
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
chain (float[2, 3] X) => (float[2, 3] Y)
{
  a = Relu(X)
  b = Exp(a)
  c = Neg(b)
  d = Abs(c)
  e = Sigmoid(d)
  Y = Tanh(e)
}
)");
  RunWatch watch;
  OracleOptions o;
  o.engine = "watched";
  o.engine_instance = std::make_shared<WatchedEngine>(m.graph, watch);
  o.slots = 2;
  std::vector<NamedTensor> inputs{{"X", Tensor::from_vector(DType::Float, {2, 3}, std::vector<float>{1, -2, 3, -4, 5, -6}).value()}};
  auto oracle = Oracle::create(m, inputs, o);
  ASSERT_TRUE(oracle.ok()) << oracle.error().message();
  TempDir dir;
  SessionOptions options;
  options.model_path = dir / "chain.onnx";
  options.out_dir = dir / "out";
  options.reduce.jobs = 2;
  const SessionOutcome outcome = run_session(**oracle, m, options, SessionConsole{}, std::stop_token{});
  ASSERT_EQ(outcome.status, SessionStatus::Reduced) << (outcome.error ? outcome.error->message() : "");
  ASSERT_TRUE(outcome.report.has_value());
  EXPECT_EQ(outcome.report->reduced_nodes, 1u);
  EXPECT_GT(watch.runs, 2);
  EXPECT_EQ(watch.beside_original, 0) << "a candidate ran while the original's check was running";
}

// The reference, except that every Exp's output comes out flat ([2,3] -> [6]), as from a kernel that
// drops its input's shape: every output after an Exp has another shape than the reference's.
class FlatExpEngine : public Engine {
 public:
  std::string name() const override { return "flat-exp"; }
  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    auto copy = std::make_unique<Model>(model);
    std::vector<Node> flattening;
    for (Node& n : copy->graph.nodes) {
      if (n.op_type != "Exp") continue;
      Node reshape;
      reshape.op_type = "Reshape";
      reshape.inputs = {n.outputs[0] + "__shaped", "__flat"};
      reshape.outputs = {n.outputs[0]};
      n.outputs[0] += "__shaped";
      flattening.push_back(std::move(reshape));
    }
    for (Node& n : flattening) copy->graph.nodes.push_back(std::move(n));
    copy->graph.initializers.push_back({"__flat", Tensor::from_vector(DType::Int64, {1}, std::vector<int64_t>{-1}).value(), "", {}});
    REDUCE_ASSIGN(auto inner, make_reference_engine(1)->prepare(*copy));
    return std::unique_ptr<PreparedModel>(new Prepared(std::move(copy), std::move(inner)));
  }

 private:
  class Prepared : public PreparedModel {
   public:
    Prepared(std::unique_ptr<Model> m, std::unique_ptr<PreparedModel> inner) : model_(std::move(m)), inner_(std::move(inner)) {}
    Expected<TensorMap> run(const TensorMap& inputs, const RunOptions& options) override { return inner_->run(inputs, options); }

   private:
    std::unique_ptr<Model> model_;
    std::unique_ptr<PreparedModel> inner_;
  };
};

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A shape failure is kept as a mismatch is, down to the culprit, although the reproducer's output
// is the culprit's own value (another name, another wrong shape) instead of the model's.
TEST(Session, AShapeFailureIsReducedToItsCulpritAndReportedAsShape) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
chain (float[2, 3] X) => (float[1, 2, 3] Y)
<int64[1] axes = {0}>
{
  a = Relu(X)
  b = Exp(a)
  c = Neg(b)
  Y = Unsqueeze(c, axes)
}
)");
  OracleOptions o;
  o.engine = "flat-exp";
  o.engine_instance = std::make_shared<FlatExpEngine>();
  std::vector<NamedTensor> inputs{{"X", Tensor::from_vector(DType::Float, {2, 3}, std::vector<float>{1, -2, 3, -4, 5, -6}).value()}};
  auto oracle = Oracle::create(m, inputs, o);
  ASSERT_TRUE(oracle.ok()) << oracle.error().message();
  TempDir dir;
  SessionOptions options;
  options.model_path = dir / "chain.onnx";
  options.out_dir = dir / "out";
  const SessionOutcome outcome = run_session(**oracle, m, options, SessionConsole{}, std::stop_token{});
  ASSERT_EQ(outcome.status, SessionStatus::Reduced) << (outcome.error ? outcome.error->message() : "");
  const ReductionReport& r = *outcome.report;
  EXPECT_EQ(r.reduced_nodes, 1u);
  EXPECT_EQ(r.reduced_op_types.begin()->first, "Exp");
  EXPECT_EQ(r.failure.to_string(), "shape: output `Y` is float[1,6] on the engine, float[1,2,3] on the reference");
  EXPECT_EQ(r.reduced_failure.to_string(), "shape: output `b` is float[6] on the engine, float[2,3] on the reference");
  EXPECT_NE(read_text(options.out_dir / "report.json").find("\"kind\": \"shape\""), std::string::npos);
  EXPECT_NE(read_text(options.out_dir / "report.md").find("# shape on `flat-exp`"), std::string::npos);
  EXPECT_EQ(bucket_record(r, "").failure, "shape: shape differs");
}

}  // namespace
}  // namespace reduce
