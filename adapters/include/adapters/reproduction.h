// Reproductions in the engine's own terms: the scripts a bundle holds so that the people who fix the
// engine see the failure without reduce (ONNX Runtime in Python and Node.js, OpenCV's cv2.dnn,
// TensorRT's tools, the user's own command or check script, `reduce check` for our own engines).
#pragma once

#include <string>
#include <vector>

#include "adapters/engine_spec.h"

namespace reduce {

// One output of the reproducer and the tolerance it is compared with (the reduction's, after
// Tolerance::for_element_type).
struct ReproductionOutput {
  std::string name;
  double atol = 0, rtol = 0;
};

// What a bundle gives its scripts. Paths are relative to the bundle folder, where the scripts lie.
struct ReproductionContext {
  std::string model_file = "model.onnx";  // the model as the engine under test runs it
  std::vector<std::string> inputs;        // graph inputs in order: inputs/input_K.pb, entries of inputs.npz
  std::vector<ReproductionOutput> outputs;  // compared with expected/ (expected.npz)
  std::string stat = "elemwise";          // --check-error-stat: elemwise, max, mean, median, quantile
  double quantile = 0.99;
  std::string failure;                    // what the reduction saw: mismatch, nonfinite, error, crash, timeout
  bool npz = false;                       // inputs.npz and expected.npz are in the bundle
  bool polygraphy_files = false;          // inputs.json and expected.json are in the bundle
  std::string reduce_check;               // the `reduce check` line that reproduces with reduce
  std::vector<std::string> fp32_nodes;    // nodes the engine keeps in FP32 that the reproducer has
};

// A file of a reproduction: its name in the bundle, its text, and whether it is a program to run.
struct ReproductionFile {
  std::string name;
  std::string text;
  bool executable = true;
};

// The names every reproduction file may have (a bundle removes those of an earlier run it does
// not write again).
const std::vector<std::string>& reproduction_file_names();

// Whether the engine reads Polygraphy's files (TensorRT; a cmd: template with {inputs_json}): its
// bundle then holds inputs.json and expected.json, which its repro.sh passes to the tool.
bool reproduction_needs_polygraphy_files(const EngineSpec& spec);

// The scripts that reproduce the failure of `spec`'s engine on the bundle's model: what the kind of
// the spec gives (engines.def), the wrappers' inner kind (`isolated:`, `fp16:`, whose context names
// the converted model). Each prints what it sees and exits 1 when the model fails, 0 when it passes.
// Engines the scripts cannot drive without reduce, and scripts that would read a missing .npz
// (context.npz false), give way to `repro.sh` with the `reduce check` line.
std::vector<ReproductionFile> reproduction_files(const EngineSpec& spec, const ReproductionContext& context);

}  // namespace reduce
