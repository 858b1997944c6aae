// Error of the optimized engine in fp16 and bf16 against the reference engine on the real npm models:
// prints the Markdown table of bench/RESULTS.md. Usage: opt_precision_bench [MODEL_CACHE] (default .cache/models).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "engine/engine.h"
#include "core/model_io.h"
#include "adapters/engine_spec.h"
#include "oracle/inputs.h"

namespace fs = std::filesystem;
using namespace reduce;

namespace {

struct Case {
  std::string label;
  std::string file;
  std::vector<std::pair<std::string, Shape>> shapes;
  std::map<std::string, ValueRange, std::less<>> ranges;
};

// The inputs of tests/adapters/ort_crosscheck_test.cpp (seed 2026).
const std::vector<Case> kCases = {
    {"ppocr_det", "ppocr_det.onnx", {{"x", {1, 3, 640, 640}}}, {}},
    {"ppocr_rec", "ppocr_rec.onnx", {{"x", {1, 3, 48, 320}}}, {}},
    {"ppocr_cls", "ppocr_cls.onnx", {{"x", {1, 3, 48, 192}}}, {}},
    {"oww_hello_deepa", "oww_hello_deepa.onnx", {}, {}},
    {"oww_hello_deepa_old", "oww_hello_deepa_old.onnx", {}, {}},
    {"oww_namaste_deepa", "oww_namaste_deepa.onnx", {}, {}},
    {"silero_vad_v5", "silero_vad_v5.onnx", {{"input", {1, 512}}, {"state", {2, 1, 128}}},
     {{"state", {0, 0}}, {"sr", {16000, 16000}}}},
};

Expected<TensorMap> run(const std::string& spec, const Model& model, const TensorMap& feed) {
  REDUCE_ASSIGN(auto engine, make_engine(spec));
  REDUCE_ASSIGN(auto prepared, engine->prepare(model));
  return prepared->run(feed);
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  reduce::tune_allocator_for_engines();  // as the `reduce` executable runs them
  const fs::path cache = argc > 1 ? fs::path(argv[1]) : fs::path(".cache/models");
  std::cout << "| model | output | precision | max abs err | max abs err / max abs ref | mean abs err | max abs ref | non-finite |\n"
               "|---|---|---|---|---|---|---|---|\n";
  for (const Case& c : kCases) {
    auto model = load_model(cache / c.file);
    if (!model) {
      std::cerr << "error: " << model.error().message() << "\n";
      return 1;
    }
    for (const auto& [name, shape] : c.shapes)
      if (Status s = set_input_shape(*model, name, shape); !s.ok()) {
        std::cerr << "error: " << s.error().message() << "\n";
        return 1;
      }
    RandomInputOptions options;
    options.seed = 2026;
    options.ranges = c.ranges;
    auto inputs = make_random_inputs(model->graph, options);
    if (!inputs) {
      std::cerr << "error: " << inputs.error().message() << "\n";
      return 1;
    }
    TensorMap feed;
    for (const auto& t : *inputs) feed[t.name] = t.tensor;
    auto ref = run("ref", *model, feed);
    if (!ref) {
      std::cerr << "error: ref: " << ref.error().message() << "\n";
      return 1;
    }
    for (const std::string precision : {"fp16", "bf16"}) {
      auto out = run("opt:" + precision, *model, feed);
      if (!out) {
        std::cerr << "error: opt:" << precision << ": " << out.error().message() << "\n";
        return 1;
      }
      for (const auto& vi : model->graph.outputs) {
        const Tensor& r = ref->at(vi.name);
        const Tensor& o = out->at(vi.name);
        double max_ref = 0, max_err = 0, sum_err = 0;
        uint64_t non_finite = 0, finite = 0;
        for (uint64_t i = 0; i < r.elements(); ++i) {
          const double a = r.element_as_double(i), b = o.element_as_double(i);
          max_ref = std::max(max_ref, std::abs(a));
          if (!std::isfinite(b)) {
            ++non_finite;
            continue;
          }
          const double e = std::abs(a - b);
          max_err = std::max(max_err, e);
          sum_err += e;
          ++finite;
        }
        std::cout << "| " << c.label << " | " << vi.name << " " << shape_to_string(r.shape()) << " | " << precision
                  << " | " << fmt(max_err) << " | " << fmt(max_ref > 0 ? max_err / max_ref : 0) << " | "
                  << fmt(finite ? sum_err / static_cast<double>(finite) : 0) << " | " << fmt(max_ref) << " | "
                  << non_finite << " |\n";
      }
    }
  }
  return 0;
}
