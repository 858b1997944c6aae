// Writes the large models of issue 20's measurements (corpus/generator/large_chain.h):
//   large_activations_model OUT.onnx [NODES (203)] [C (8)] [H=W (512)]
//     an elementwise chain over [1, C, H, W] floats with a broadcast-batch1 trigger;
//   large_activations_model --weights OUT.onnx [WEIGHTS (16)] [SIDE (4096)]
//     a MatMul chain with WEIGHTS float[SIDE, SIDE] weights kept in external data (OUT.data).
#include <cstdio>
#include <cstring>
#include <string>

#include "core/model_io.h"
#include "large_chain.h"

using namespace reduce;

int main(int argc, char** argv) {
  const bool weights = argc > 1 && std::strcmp(argv[1], "--weights") == 0;
  if (weights) --argc, ++argv;
  if (argc < 2) {
    std::fprintf(stderr, "usage: large_activations_model OUT.onnx [NODES] [C] [H=W]\n"
                         "       large_activations_model --weights OUT.onnx [WEIGHTS] [SIDE]\n");
    return 2;
  }
  Model model;
  SaveOptions so;
  if (weights) {
    const size_t count = argc > 2 ? std::stoul(argv[2]) : 16;
    const int64_t side = argc > 3 ? std::stoll(argv[3]) : 4096;
    if (count < 2 || side < 1) {
      std::fprintf(stderr, "WEIGHTS must be at least 2 and SIDE at least 1\n");
      return 2;
    }
    model = corpus::large_weights_chain(count, side);
    so.weights = SaveOptions::Weights::External;
  } else {
    const size_t nodes = argc > 2 ? std::stoul(argv[2]) : 203;
    const int64_t c = argc > 3 ? std::stoll(argv[3]) : 8, side = argc > 4 ? std::stoll(argv[4]) : 512;
    if (nodes < 4) {
      std::fprintf(stderr, "NODES must be at least 4 (the trigger takes 3)\n");
      return 2;
    }
    model = corpus::large_activation_chain(nodes, c, side);
  }
  if (Status s = save_model(model, argv[1], so); !s) {
    std::fprintf(stderr, "%s\n", s.error().message().c_str());
    return 1;
  }
  uint64_t weight_bytes = 0;
  for (const auto& init : model.graph.initializers) weight_bytes += init.tensor.byte_size();
  std::printf("%s: %zu nodes, %.0f MB of weights\n", argv[1], model.graph.nodes.size(), static_cast<double>(weight_bytes) / 1e6);
  return 0;
}
