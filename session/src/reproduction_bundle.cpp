// The bundle's standalone part: the model as the engine under test ran it (converted for a typed
// engine), the data its scripts read (inputs/, expected/), and the engine's own reproduction scripts
// (adapters/reproduction.h).
#include "reproduction_bundle.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <system_error>

#include "adapters/engine_spec.h"
#include "adapters/reproduction.h"
#include "core/dtype.h"
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

// What the scripts read: the bundle's inputs/ and expected/ (one copy of each tensor; TensorProto
// files repro.py and repro.mjs read without onnx), when every tensor there has a type they read
// (numpy's and ONNX Runtime's: not bfloat16, float8, int4 or strings).
Status check_script_data(const fs::path& dir, const CandidateRun& run, ReductionReport& report) {
  // .npz copies of the same tensors written by earlier releases of reduce into this bundle.
  std::error_code ec;
  for (const char* stale : {"inputs.npz", "expected.npz"}) fs::remove(dir / stale, ec);
  static const DType kRead[] = {DType::Float,  DType::UInt8,  DType::Int8,    DType::UInt16, DType::Int16,  DType::Int32,
                                DType::Int64,  DType::Bool,   DType::Float16, DType::Double, DType::UInt32, DType::UInt64};
  for (const auto* list : {&run.inputs, &run.expected})
    for (const auto& t : *list)
      if (std::find(std::begin(kRead), std::end(kRead), t.tensor.dtype()) == std::end(kRead)) {
        report.reproduction_note = "the scripts that read inputs/ and expected/: '" + t.name + "' is " +
                                   std::string(dtype_name(t.tensor.dtype())) + ", which numpy and ONNX Runtime's bindings do not hold";
        return {};
      }
  report.reproduction_data = {"inputs/", "expected/"};
  return {};
}

// What a script must see to exit 1: the target the reduction kept (its normalized message as a
// pattern), or with --fail-regex the regexes themselves, which then decide for any failure.
RecordedFailure recorded_failure(const Oracle& oracle, const EngineSpec& spec, const Verdict& verdict) {
  const FailureSignature& target = oracle.target().is_set() ? oracle.target().signature() : verdict.signature;
  RecordedFailure r;
  r.kind = to_string(target.kind);
  r.message = shown_message(verdict.signature.message.empty() ? target.message : verdict.signature.message);
  r.signal = target.signal;
  r.magnitude = target.magnitude;
  r.exit_code = target.exit_code;
  if (target.kind == FailureKind::Shape) r.shape = target.normalized;
  const auto& regexes = oracle.options().fail_regexes;
  if (!regexes.empty()) {
    r.patterns = regexes;
    r.any_kind = true;
  } else if (target.kind == FailureKind::Error && spec.gives_values() && !target.normalized.empty()) {
    r.patterns = {message_pattern(target.normalized)};
  }
  return r;
}

// The environment a command engine ran with that a maintainer's shell would lack: --slot-env (as
// slot 0 has it) and the module paths of Node.js and Python.
std::vector<std::pair<std::string, std::string>> command_environment(const EngineEnvironment& environment) {
  std::vector<std::pair<std::string, std::string>> env;
  for (const std::string& entry : environment.env) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string name = entry.substr(0, eq);  // a shell variable name, or not carried
    if (std::isdigit(static_cast<unsigned char>(name[0])) ||
        !std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
      continue;
    std::string value = entry.substr(eq + 1);
    for (size_t at; (at = value.find("{slot}")) != std::string::npos;) value.replace(at, 6, "0");
    env.emplace_back(name, std::move(value));
  }
  for (const char* name : {"NODE_PATH", "PYTHONPATH"})
    if (const char* value = std::getenv(name); value && *value &&
        std::none_of(env.begin(), env.end(), [&](const auto& e) { return e.first == name; }))
      env.emplace_back(name, value);
  return env;
}

// The files a small reproducer's scripts carry (ReproductionContext::embedded): the model as the
// engine ran it and the files of inputs/ and expected/, when together they are small and the weights
// are inline.
std::vector<std::pair<std::string, std::string>> embedded_files(const fs::path& dir, const ReductionReport& report) {
  const std::string model = report.reproducer_model;
  const std::string stem = model.substr(0, model.rfind('.'));
  std::error_code ec;
  if (report.reproduction_data.empty() || fs::exists(dir / (stem + ".data"), ec)) return {};
  std::vector<std::string> names{model};
  for (const char* folder : {"inputs", "expected"}) {
    std::vector<std::string> in_folder;
    for (const auto& e : fs::directory_iterator(dir / folder, ec))
      if (e.path().extension() == ".pb") in_folder.push_back(std::string(folder) + "/" + e.path().filename().string());
    std::sort(in_folder.begin(), in_folder.end());
    names.insert(names.end(), in_folder.begin(), in_folder.end());
  }
  std::vector<std::pair<std::string, std::string>> files;
  size_t bytes = 0;
  for (const std::string& name : names) {
    const uintmax_t size = fs::file_size(dir / name, ec);
    if (ec || (bytes += size) > ReproductionContext::kEmbeddedBytes) return {};
    auto read = read_file(dir / name, ReproductionContext::kEmbeddedBytes);
    if (!read) return {};
    files.emplace_back(name, std::move(*read));
  }
  return files;
}

ReproductionContext context_of(const fs::path& dir, const Oracle& oracle, const EngineSpec& spec, const CandidateRun& run,
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
  c.recorded = recorded_failure(oracle, spec, verdict);
  c.engine_release = report.engine_release;
  const OracleOptions& o = oracle.options();
  c.timeout_seconds = o.environment.timeout_seconds;
  c.fail_codes = o.fail_codes;
  c.ignore_fail_codes = o.ignore_fail_codes;
  c.environment = command_environment(o.environment);
  c.embedded = embedded_files(dir, report);
  c.script_data = !report.reproduction_data.empty();
  c.polygraphy_files = report.polygraphy_files;
  c.reduce_check = reduce_check_line(report);
  c.fp32_nodes = spec.precision_owner().fp32().present_in(run.model.graph);
  return c;
}

}  // namespace

Status write_issue(const fs::path& dir, ReductionReport& report) {
  report.reproduction_issue.clear();
  std::string script;
  for (const char* name : {"repro.mjs", "repro.py", "repro.sh"})
    if (script.empty() && std::find(report.reproduction_scripts.begin(), report.reproduction_scripts.end(), name) !=
                              report.reproduction_scripts.end())
      script = name;
  std::error_code ec;
  std::string text;
  if (!script.empty())
    if (auto read = read_file(dir / script)) text = std::move(*read);
  const std::string issue = script.empty() ? std::string() : issue_markdown(report, script, text, report.reproduction_standalone);
  if (issue.empty()) {
    fs::remove(dir / "issue.md", ec);
    return {};
  }
  REDUCE_TRY(write_file_atomic(dir / "issue.md", issue));
  report.reproduction_issue = "issue.md";
  return {};
}

bool wants_polygraphy_files(const Oracle& oracle) {
  return oracle.spec() && reproduction_needs_polygraphy_files(*oracle.spec());
}

Status write_reproduction(const fs::path& dir, const Oracle& oracle, const CandidateRun& run, const Verdict& verdict,
                          ReductionReport& report) {
  report.reproducer_model = "model.onnx";
  report.reproducer_engine = oracle.options().engine;
  report.reproduction_scripts.clear();
  report.reproduction_data.clear();
  report.reproduction_note.clear();
  report.reproduction_standalone = false;
  report.bundle_engine.clear();
  if (!oracle.spec()) return {};  // an engine given as an object (embedding, tests): no spec to script
  const EngineSpec& spec = *oracle.spec();
  if (const std::string in_bundle = bundle_engine_spec(spec); in_bundle != to_string(spec)) report.bundle_engine = in_bundle;
  if (const auto to = oracle.engine_converts_to()) REDUCE_TRY(write_converted_model(dir, spec, *to, run, report));
  REDUCE_TRY(check_script_data(dir, run, report));
  const ReproductionContext context = context_of(dir, oracle, spec, run, verdict, report);
  report.reproduction_standalone = !context.embedded.empty();
  std::vector<std::string> written;
  std::error_code ec;
  fs::remove_all(dir / "engine", ec);  // an earlier run's carried programs (written again below when still used)
  for (const ReproductionFile& f : reproduction_files(spec, context)) {
    if (const fs::path parent = (dir / f.name).parent_path(); parent != dir) {
      fs::create_directories(parent, ec);
      if (ec) return Error{parent.string(), "cannot create folder: " + ec.message()};
    }
    REDUCE_TRY(write_file_atomic(dir / f.name, f.text));
    if (f.executable) fs::permissions(dir / f.name, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                                      fs::perm_options::add, ec);
    written.push_back(f.name);
    if (f.name != "compare.py" && !f.name.starts_with("engine/")) report.reproduction_scripts.push_back(f.name);
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
