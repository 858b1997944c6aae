// Writes the large-activation models of issue 20's measurements: an elementwise chain over
// [1, C, H, W] floats (every value the size of the input, tiny weights) with one broadcast-batch1
// trigger (a 1x1 Conv gate, Sigmoid, Mul([1,C,H,W], [1,1,H,W])) in the middle.
// usage: large_activations_model OUT.onnx [NODES (203)] [C (8)] [H=W (512)]
#include <cstdio>
#include <string>

#include "core/model_io.h"
#include "graph_builder.h"

using namespace reduce;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: large_activations_model OUT.onnx [NODES] [C] [H=W]\n");
    return 2;
  }
  const size_t nodes = argc > 2 ? std::stoul(argv[2]) : 203;
  const int64_t c = argc > 3 ? std::stoll(argv[3]) : 8, side = argc > 4 ? std::stoll(argv[4]) : 512;
  if (nodes < 4) {
    std::fprintf(stderr, "NODES must be at least 4 (the trigger takes 3)\n");
    return 2;
  }
  corpus::GraphBuilder b("large_chain");
  corpus::Random rng(1);
  const Shape shape{1, c, side, side};
  corpus::Value h = b.input("x", shape);
  const char* ops[] = {"Add", "Mul", "Tanh", "Relu"};
  const size_t chain = nodes - 3, trigger_at = chain / 2;
  for (size_t i = 0; i < chain; ++i) {
    if (i == trigger_at) {
      b.begin_block();
      auto w = b.uniform_weight("w", {1, c, 1, 1}, rng, -1.0, 1.0);
      auto logits = b.node("Conv", {h.name, w.name}, {1, 1, side, side}, {corpus::ints_attribute("kernel_shape", {1, 1})});
      auto gate = b.node("Sigmoid", {logits.name}, {1, 1, side, side});
      h = b.node("Mul", {h.name, gate.name}, shape);
      b.mark_minimal();
    }
    b.begin_block();
    const std::string op = ops[i % 4];
    if (op == "Add") h = b.node(op, {h.name, b.scalar("a", 0.01f).name}, shape);
    else if (op == "Mul") h = b.node(op, {h.name, b.scalar("m", 0.99f).name}, shape);
    else h = b.node(op, {h.name}, shape);
  }
  b.output(h);
  const Model model = b.finish("elementwise chain with a broadcast-batch1 gate (bench/large_models.sh)");
  if (Status s = save_model(model, argv[1]); !s) {
    std::fprintf(stderr, "%s\n", s.error().message().c_str());
    return 1;
  }
  std::printf("%s: %zu nodes, [1,%lld,%lld,%lld] float values (%.0f MB each)\n", argv[1], model.graph.nodes.size(),
              static_cast<long long>(c), static_cast<long long>(side), static_cast<long long>(side),
              4.0 * static_cast<double>(c * side * side) / 1e6);
  return 0;
}
