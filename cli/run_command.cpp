// `reduce run MODEL`: runs a model on an engine with given or seeded random inputs, saves the outputs.
#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "command.h"
#include "adapters/library_settings.h"
#include "command_line.h"
#include "json_output.h"
#include "oracle_options.h"
#include "core/model_io.h"
#include "core/tensor_set.h"
#include "engine/engine.h"
#include "adapters/engine_spec.h"
#include "engine/optimized.h"
#include "input_options.h"
#include "oracle/inputs.h"
#include "oracle/verdict_report.h"
#include "stop_on_signal.h"
#include "core/polygraphy_json.h"
#include "tensor_summary.h"

namespace reduce::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

// Writes tensors as <prefix>_K.pb (named) and <prefix>_K.npy; bfloat16 has no .npy form.
Status save_tensors(const fs::path& dir, const std::string& prefix, const std::vector<NamedTensor>& tensors,
                    const std::string& format) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{dir.string(), "cannot create folder: " + ec.message()};
  for (size_t k = 0; k < tensors.size(); ++k) {
    const std::string stem = prefix + "_" + std::to_string(k);
    if (format != "npy") REDUCE_TRY(write_tensor_pb(dir / (stem + ".pb"), tensors[k].name, tensors[k].tensor));
    // numpy has no bfloat16: such tensors are always saved as .pb.
    if (format != "pb" && tensors[k].tensor.dtype() != DType::BFloat16)
      REDUCE_TRY(write_npy(dir / (stem + ".npy"), tensors[k].tensor));
    else if (format == "npy")
      REDUCE_TRY(write_tensor_pb(dir / (stem + ".pb"), tensors[k].name, tensors[k].tensor));
  }
  return {};
}

// The engine specs, passes and faults, for --help.
std::string engine_help() {
  std::string out = "\nengines (--engine):\n";
  for (const auto& [spec, help] : engine_spec_help()) out += "  " + spec + ": " + help + "\n";
  out += "opt passes (no-NAME disables one):\n";
  for (const auto& [name, help] : optimized_passes()) out += "  " + name + ": " + help + "\n";
  out += "opt faults (fault=NAME[+NAME...]):\n";
  for (const auto& f : faults()) out += "  " + std::string(f.name) + ": " + std::string(f.help) + "\n";
  return out;
}

po::options_description run_options() {
  po::options_description opts(
      "usage: reduce run MODEL [options]\n\n"
      "Runs MODEL on an engine and prints each output's type, shape and statistics. Inputs come from\n"
      "--inputs, otherwise they are seeded random values (floats uniform in [-1,1), integers in [0,9] or\n"
      "the indices an axis takes, bools 0/1; see --input-range; an input without a shape or read as a shape\n"
      "is refused). --save-outputs writes output_K.pb and output_K.npy.\n" + engine_help() +
      "\noptions");
  opts.add_options()("help,h", "show this help")
      ("model", po::value<std::string>(), "the model (.onnx or .onnxtxt)")
      ("engine", po::value<std::string>()->default_value("ref"), "engine spec, of one of the kinds above");
  add_input_options(opts);
  opts.add_options()
      ("outputs", po::value<std::vector<std::string>>()->multitoken(),
       "values to return instead of the graph outputs (any value of the graph)")
      ("save-outputs", po::value<std::string>(), "folder for output_K.pb and output_K.npy")
      ("save-format", po::value<std::string>()->default_value("both"),
       "files --save-outputs/--save-inputs write: pb, npy or both (an engine wrapper needs only one), or "
       "polygraphy: each is then one Polygraphy JSON file (--save-inputs: a list of feed dicts; --save-outputs: "
       "RunResults), one iteration per input sample")
      ("save-inputs", po::value<std::string>(), "folder for the inputs used, as input_K.pb and input_K.npy")
      ("threads", po::value<int>()->default_value(0), "worker threads (0: all cores; at most 1024)")
      ("repeat", po::value<int>()->default_value(1), "run this many times; prints the median time")
      ("json", "print one JSON document on stdout instead of text: schema, command, model, engine, and per sample "
               "its source, outputs (name, dtype, shape, elements, min, max, mean, nan, inf) and seconds per run");
  add_run_limit_options(opts);
  add_output_options(opts, "the engine's preparation time and every run's time on stderr (with --repeat)");
  return opts;
}

// Runs `repeat` times (or until a run fails); the time of each run goes to `seconds`.
Expected<TensorMap> timed_runs(PreparedModel& prepared, const TensorMap& feed, const RunOptions& options, int repeat,
                               std::vector<double>& seconds) {
  Expected<TensorMap> result = TensorMap{};
  for (int r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    result = prepared.run(feed, options);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (!result) break;
  }
  return result;
}

// Prints each output and the (median) time per run (`seconds` sorted); returns the outputs in order.
std::vector<NamedTensor> print_outputs(const std::vector<std::string>& names, const TensorMap& result,
                                       const std::string& spec, const std::vector<double>& seconds) {
  std::vector<NamedTensor> outputs;
  for (const auto& name : names) {
    print_tensor(name, result.at(name), std::cout);
    outputs.push_back({name, result.at(name)});
  }
  const size_t repeat = seconds.size();
  std::cout << "engine " << spec << ": " << (repeat > 1 ? "median " : "") << seconds[repeat / 2] * 1e3
            << " ms per run (" << repeat << " run" << (repeat > 1 ? "s" : "") << ")\n";
  return outputs;
}

// What `reduce run` was asked for, checked before anything is loaded or run.
struct RunRequest {
  fs::path model_path;
  std::string spec;
  std::string format;  // pb, npy, both or polygraphy
  int repeat = 1;
  std::unique_ptr<Engine> engine;
};

Expected<RunRequest> run_request_from(const po::variables_map& vm) {
  RunRequest r;
  r.model_path = vm["model"].as<std::string>();
  r.spec = vm["engine"].as<std::string>();
  EngineEnvironment environment;
  environment.threads = vm["threads"].as<int>();
  REDUCE_TRY(check_int_range("--threads", environment.threads, 0, kMaxParallel));
  configure_engine_libraries(environment.threads);  // process-wide: the command's, once
  REDUCE_TRY(run_limits_from(vm, environment));
  auto engine = make_engine(r.spec, environment);
  if (!engine) return Error{"run", engine.error().message()};
  r.engine = std::move(*engine);
  r.repeat = vm["repeat"].as<int>();
  if (r.repeat < 1) return Error{"run", "--repeat must be at least 1"};
  r.format = vm["save-format"].as<std::string>();
  if (r.format != "pb" && r.format != "npy" && r.format != "both" && r.format != "polygraphy")
    return Error{"run", "--save-format must be pb, npy, both or polygraphy, not '" + r.format + "'"};
  return r;
}

// Where sample `k` of `count` is saved under a --save-* folder: the folder itself for one sample,
// else its test_data_set_K (the ONNX test data layout, which --inputs reads back as samples).
fs::path sample_folder(const std::string& dir, size_t k, size_t count) {
  return count == 1 ? fs::path(dir) : fs::path(dir) / ("test_data_set_" + std::to_string(k));
}

// The model with its input samples (given or seeded), the inputs saved when asked.
Expected<std::pair<Model, std::vector<InputSample>>> load_with_inputs(const po::variables_map& vm, const RunRequest& r) {
  REDUCE_ASSIGN(Model model, load_model(r.model_path));
  REDUCE_TRY(check_fp32_nodes_of(r.spec, model, r.model_path.string()));
  REDUCE_ASSIGN(std::vector<InputSample> samples, prepare_input_samples(vm, model, r.model_path));
  if (vm.count("save-inputs") && r.format == "polygraphy") {
    std::vector<std::vector<NamedTensor>> iterations;
    for (const auto& sample : samples) iterations.push_back(sample.inputs);
    REDUCE_TRY(write_polygraphy_inputs(vm["save-inputs"].as<std::string>(), iterations));
  } else if (vm.count("save-inputs"))
    for (size_t k = 0; k < samples.size(); ++k)
      REDUCE_TRY(save_tensors(sample_folder(vm["save-inputs"].as<std::string>(), k, samples.size()), "input",
                              samples[k].inputs, r.format));
  return std::pair{std::move(model), std::move(samples)};
}

int usage_error(const Error& error) {
  std::cerr << "error: " << error.message() << "\n";
  return kExitUsage;
}

}  // namespace

int run_command(const std::vector<std::string>& args, std::stop_token stop) {
  const po::options_description opts = run_options();
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (auto done = parse_command_line(args, "run", opts, pos, vm, "model", "MODEL")) return *done;
  auto request = run_request_from(vm);
  if (!request) return usage_error(request.error());
  JsonOutput json(vm.count("json") > 0, "run");
  json.doc()["model"] = request->model_path.string();
  json.doc()["engine"] = request->spec;
  Json sample_docs = Json::array();
  const CancelOnStop cancel(stop);
  auto loaded = load_with_inputs(vm, *request);
  if (cancel.requested()) return interrupted();
  if (!loaded) return usage_error(loaded.error());
  const auto& [model, samples] = *loaded;
  const std::string where = request->model_path.string();
  const Console console = console_from(vm);
  const auto prepare_start = std::chrono::steady_clock::now();
  auto prepared = request->engine->prepare(model);
  console.detail("prepare: " + format_number(1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - prepare_start).count()) +
                 " ms");
  if (!prepared) {
    std::cerr << "error: " << prepared.error().at(where).message() << "\n";
    json.doc()["error"] = prepared.error().at(where).message();
    return json.print(kExitFailure);
  }
  RunOptions run_options;
  run_options.cancel = cancel.flag();
  if (vm.count("outputs")) run_options.outputs = vm["outputs"].as<std::vector<std::string>>();
  if (run_options.outputs.empty())
    for (const auto& vi : model.graph.outputs) run_options.outputs.push_back(vi.name);
  std::vector<std::vector<NamedTensor>> output_iterations;  // --save-format polygraphy
  for (size_t k = 0; k < samples.size(); ++k) {
    if (samples.size() > 1) std::cout << (k ? "\n" : "") << "sample #" << k << ": " << samples[k].source << "\n";
    TensorMap feed;
    for (const auto& t : samples[k].inputs) feed[t.name] = t.tensor;
    std::vector<double> seconds;
    Expected<TensorMap> result = timed_runs(**prepared, feed, run_options, request->repeat, seconds);
    if (cancel.requested()) return interrupted();
    for (size_t r = 0; r < seconds.size(); ++r)
      console.detail("run " + std::to_string(r + 1) + (samples.size() > 1 ? " of sample #" + std::to_string(k) : "") + ": " +
                     format_number(seconds[r] * 1e3) + " ms");
    if (!result) {
      const std::string message = result.error().at(samples.size() > 1 ? samples[k].source : where).message();
      std::cerr << "error: " << message << "\n";
      json.doc()["error"] = message;  // the engine ran and failed: an answer, unlike a usage error
      return json.print(kExitFailure);
    }
    std::sort(seconds.begin(), seconds.end());
    std::vector<NamedTensor> outputs = print_outputs(run_options.outputs, *result, request->spec, seconds);
    Json output_docs = Json::array();
    for (const auto& o : outputs) output_docs.push_back(tensor_json(o.name, o.tensor));
    sample_docs.push_back({{"source", samples[k].source}, {"outputs", output_docs},
                           {"seconds", {{"median", seconds[seconds.size() / 2]}, {"runs", seconds.size()}}}});
    json.doc()["samples"] = sample_docs;
    if (request->format == "polygraphy") {
      output_iterations.push_back(std::move(outputs));
      continue;
    }
    if (vm.count("save-outputs"))
      if (Status s = save_tensors(sample_folder(vm["save-outputs"].as<std::string>(), k, samples.size()), "output",
                                  outputs, request->format);
          !s.ok())
        return usage_error(s.error());
  }
  // Polygraphy's RunResults: one file, one iteration per sample, the engine spec as the runner.
  if (vm.count("save-outputs") && request->format == "polygraphy")
    if (Status s = write_polygraphy_outputs(vm["save-outputs"].as<std::string>(), "reduce-" + request->spec, output_iterations);
        !s.ok())
      return usage_error(s.error());
  return json.print(kExitOk);
}

}  // namespace reduce::cli
