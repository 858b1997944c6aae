// Reproductions in the engine's own terms: the scripts a bundle holds so that the people who fix the
// engine see the failure without reduce (ONNX Runtime in Python and Node.js, OpenCV's cv2.dnn,
// TensorRT's tools, the user's own command or check script, `reduce check` for our own engines).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "adapters/engine_spec.h"

namespace reduce {

// One output of the reproducer and the tolerance it is compared with (the reduction's, after
// Tolerance::for_element_type).
struct ReproductionOutput {
  std::string name;
  double atol = 0, rtol = 0;
};

// The failure a script must see again to exit 1, in terms a script can apply (reduce's same-failure
// rule, docs/oracle.md): the kind, and what tells failures of that kind apart.
struct RecordedFailure {
  std::string kind;                   // mismatch, nonfinite, shape, error, crash, timeout
  std::string message;                // as the engine gave it (shown beside a failure of another way)
  // error (and, with --fail-regex, any kind): regexes in the syntax Python's re and JavaScript's
  // RegExp share, one of which the engine's message must contain; empty: any message.
  std::vector<std::string> patterns;
  bool any_kind = false;              // --fail-regex: a failure of any kind whose message matches
  std::string shape;                  // shape: what differs ("shape differs", "element type differs", ...)
  int signal = 0;                     // crash: the signal
  int exit_code = 0;                  // check: the failing exit code (0: any failing code)
  int magnitude = 0;                  // mismatch: decimal order of error / tolerance; the same from one order below
};

// A regex that finds a message whose normalized form is `normalized` (oracle/signature.h): the
// masks (<name>, <path>, <addr>, <n>) match anything, whitespace runs any whitespace, the rest is
// literal. At most `max_literal` characters of literal text are kept (the start of the message).
std::string message_pattern(const std::string& normalized, size_t max_literal = 400);

// What a bundle gives its scripts. Paths are relative to the bundle folder, where the scripts lie.
struct ReproductionContext {
  std::string model_file = "model.onnx";  // the model as the engine under test runs it
  std::vector<std::string> inputs;        // graph inputs in order: inputs/input_K.pb
  std::vector<ReproductionOutput> outputs;  // compared with expected/ (output_K.pb)
  std::string stat = "elemwise";          // --check-error-stat: elemwise, max, mean, median, quantile
  double quantile = 0.99;
  std::string failure;                    // what the reduction saw: mismatch, nonfinite, error, crash, timeout
  RecordedFailure recorded;               // what exit 1 needs
  std::string engine_release;             // the engine reduce ran, as it names itself ("onnxruntime-node 1.16.3"; "": unknown)
  double timeout_seconds = 0;             // the engine's time limit per run (0: none): longer is a timeout
  // check: the pass rule (--fail-regex, --fail-code, --ignore-fail-code; docs/oracle.md).
  std::vector<int> fail_codes, ignore_fail_codes;
  // Environment a cmd:/check: command ran with that a maintainer's shell lacks (--slot-env,
  // NODE_PATH, PYTHONPATH): set by repro.sh.
  std::vector<std::pair<std::string, std::string>> environment;
  // A small reproducer's files (the model as the engine ran it, inputs/input_K.pb, expected/output_K.pb: name and
  // bytes) that repro.py and repro.mjs carry, so that one of them pasted alone into an issue
  // reproduces; empty when they are larger than kEmbeddedBytes or the model has external data.
  std::vector<std::pair<std::string, std::string>> embedded;
  static constexpr size_t kEmbeddedBytes = 24 * 1024;  // a script stays under GitHub's 65 536 characters
  bool script_data = false;               // inputs/ and expected/ hold only types the scripts read
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

// The spec as it runs from the bundle's folder (report.md's `reduce check` line): a cmd:/check:
// template's programs named by a relative path are named where the bundle carries them
// (engine/NAME); any other spec as to_string gives it.
std::string bundle_engine_spec(const EngineSpec& spec);

// Whether the engine reads Polygraphy's files (TensorRT; a cmd: template with {inputs_json}): its
// bundle then holds inputs.json and expected.json, which its repro.sh passes to the tool.
bool reproduction_needs_polygraphy_files(const EngineSpec& spec);

// The scripts that reproduce the failure of `spec`'s engine on the bundle's model: what the kind of
// the spec gives (engines.def), the wrappers' inner kind (`isolated:`, `fp16:`, whose context names
// the converted model). Each prints what it sees and exits by one contract (docs/reference.md,
// "Reproduction scripts"): 1 the engine ran and failed the way `context.recorded` says, 0 it passed,
// 3 it failed another way, 2 it could not run (a runtime, program or file missing).
// Engines the scripts cannot drive without reduce, and scripts that would read tensors they cannot
// (context.script_data false), give way to `repro.sh` with the `reduce check` line.
std::vector<ReproductionFile> reproduction_files(const EngineSpec& spec, const ReproductionContext& context);

}  // namespace reduce
