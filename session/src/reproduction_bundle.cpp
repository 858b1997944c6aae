// The bundle's standalone part: the model as the engine under test ran it (converted for a typed
// engine), inputs.npz/expected.npz, and the engine's own reproduction scripts (adapters/reproduction.h).
#include "reproduction_bundle.h"

#include <algorithm>
#include <system_error>

#include "adapters/engine_spec.h"
#include "adapters/reproduction.h"
#include "core/mapped_file.h"
#include "core/model_io.h"
#include "core/precision_conversion.h"
#include "core/tensor_file.h"
#include "stored_reproducer.h"

namespace reduce {

namespace fs = std::filesystem;

namespace {

// `model_fp16.onnx` / `model_bf16.onnx`: the reproducer converted as the typed engine converts each
// model it runs (adapters/src/typed/typed_engine.cpp: the same conversion, the keep set's nodes
// present left in FP32), so that the inner engine fails on the file as it is.
Status write_converted_model(const fs::path& dir, const EngineSpec& spec, DType to,
                             const CandidateRun& run, ReductionReport& report) {
  MixedPrecisionOptions options;
  options.to = to;
  for (const auto& name : spec.precision_owner().fp32().present_in(run.model.graph)) options.keep_nodes.insert(name);
  REDUCE_ASSIGN(MixedPrecisionModel converted, convert_to_mixed_precision(run.model, options));
  const std::string stem = to == DType::BFloat16 ? "model_bf16" : "model_fp16";
  // Saved as model.onnx is (its weights converted here, so none views the original's data).
  SaveOptions so = bundle_save_options(converted.model, BundleWeights::Own);
  if (so.weights == SaveOptions::Weights::External) so.external_file = stem + ".data";
  REDUCE_TRY(save_model(converted.model, dir / (stem + ".onnx"), so));
  std::error_code ec;
  if (so.weights == SaveOptions::Weights::Inline) fs::remove(dir / (stem + ".data"), ec);
  report.reproducer_model = stem + ".onnx";
  // The engine that runs the converted file: the typed wrapper's inner spec (TensorRT 11's preset
  // converts by itself: the same spec, which takes the typed model as it is).
  report.reproducer_engine = to_string(spec.typed_model_runner());
  return {};
}

// inputs.npz and expected.npz (stored, not deflated: repro.mjs reads them without a zip library).
Status write_npz_data(const fs::path& dir, const CandidateRun& run, ReductionReport& report) {
  Status s = write_npz(dir / "inputs.npz", run.inputs, false);
  if (s.ok()) s = write_npz(dir / "expected.npz", run.expected, false);
  std::error_code ec;
  if (!s.ok()) {
    fs::remove(dir / "inputs.npz", ec);
    fs::remove(dir / "expected.npz", ec);
    report.reproduction_note = "inputs.npz, expected.npz and the scripts that read them: " + s.error().what;
    return {};
  }
  report.reproduction_data = {"inputs.npz", "expected.npz"};
  return {};
}

ReproductionContext context_of(const Oracle& oracle, const EngineSpec& spec, const CandidateRun& run,
                               const Verdict& verdict, const ReductionReport& report) {
  ReproductionContext c;
  c.model_file = report.reproducer_model;
  for (const auto& in : run.inputs) c.inputs.push_back(in.name);
  const Tolerance& tol = oracle.options().tolerance;
  for (const auto& e : run.expected) {
    const Tolerance t = tol.for_element_type(e.tensor.dtype());
    c.outputs.push_back({e.name, t.atol, t.rtol});
  }
  c.stat = to_string(tol.stat);
  c.quantile = tol.quantile;
  c.failure = to_string(verdict.signature.kind);
  c.npz = !report.reproduction_data.empty();
  c.polygraphy_files = report.polygraphy_files;
  c.reduce_check = reduce_check_line(report);
  c.fp32_nodes = spec.precision_owner().fp32().present_in(run.model.graph);
  return c;
}

}  // namespace

bool wants_polygraphy_files(const std::string& engine) {
  auto spec = parse_engine_spec(engine);
  return spec && reproduction_needs_polygraphy_files(*spec);
}

Status write_reproduction(const fs::path& dir, const Oracle& oracle, const CandidateRun& run, const Verdict& verdict,
                          ReductionReport& report) {
  report.reproducer_model = "model.onnx";
  report.reproducer_engine = oracle.options().engine;
  report.reproduction_scripts.clear();
  report.reproduction_data.clear();
  report.reproduction_note.clear();
  auto spec = parse_engine_spec(oracle.options().engine);
  if (!spec) return {};  // an engine given as an object (embedding, tests): no spec to script
  if (const auto to = oracle.engine_converts_to()) REDUCE_TRY(write_converted_model(dir, *spec, *to, run, report));
  REDUCE_TRY(write_npz_data(dir, run, report));
  const ReproductionContext context = context_of(oracle, *spec, run, verdict, report);
  std::vector<std::string> written;
  for (const ReproductionFile& f : reproduction_files(*spec, context)) {
    REDUCE_TRY(write_file_atomic(dir / f.name, f.text));
    std::error_code ec;
    if (f.executable) fs::permissions(dir / f.name, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                                      fs::perm_options::add, ec);
    written.push_back(f.name);
    if (f.name != "compare.py") report.reproduction_scripts.push_back(f.name);
  }
  // Scripts and converted models of an earlier bundle in this folder that this one lacks would mislead.
  std::vector<std::string> stale = reproduction_file_names();
  const std::string kept = report.reproducer_model.substr(0, report.reproducer_model.find('.'));
  for (const std::string stem : {"model_fp16", "model_bf16"})
    if (stem != kept) stale.insert(stale.end(), {stem + ".onnx", stem + ".data"});
  for (const auto& name : stale)
    if (std::find(written.begin(), written.end(), name) == written.end()) {
      std::error_code ec;
      fs::remove(dir / name, ec);
    }
  return {};
}

}  // namespace reduce
