// Parsing of the oracle options and building the oracle from them.
#include "oracle_options.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iostream>
#include <sstream>
#include <thread>

#include "core/model_io.h"
#include "command.h"
#include "command_line.h"
#include "adapters/engine_spec.h"
#include "adapters/library_settings.h"
#include "input_options.h"
#include "cluster/mpi_launch.h"
#include "oracle/verdict_report.h"
#include "stop_on_signal.h"

namespace reduce::cli {

namespace po = boost::program_options;

namespace {

// A finite number >= 0 (NaN and infinity would decide verdicts wrongly).
Status check_finite_non_negative(const char* option, double value) {
  if (std::isfinite(value) && value >= 0) return {};
  std::ostringstream got;
  got << value;
  return Error{option, "must be a finite number >= 0 (got " + got.str() + ")"};
}

// "4G", "512M", "1.5G", "1048576": bytes, with K/M/G/T as powers of 1024; positive and finite.
Expected<uint64_t> parse_byte_size(const char* option, const std::string& text) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string suffix = text.substr(used);
  double scale = 1;
  if (suffix.size() == 1 || (suffix.size() == 2 && (suffix[1] == 'B' || suffix[1] == 'b'))) {
    switch (suffix[0]) {
      case 'K': case 'k': scale = 1024.0; break;
      case 'M': case 'm': scale = 1024.0 * 1024; break;
      case 'G': case 'g': scale = 1024.0 * 1024 * 1024; break;
      case 'T': case 't': scale = 1024.0 * 1024 * 1024 * 1024; break;
      default: used = 0;
    }
  } else if (!suffix.empty()) {
    used = 0;
  }
  const double bytes = value * scale;
  if (used == 0 || !std::isfinite(bytes) || bytes < 1 || bytes > 9.0e18)
    return Error{option, "expected a size such as 4G, 512M or 1048576 (bytes), got '" + text + "'"};
  return static_cast<uint64_t>(bytes);
}

}  // namespace

Status check_int_range(const char* option, int value, int lo, int hi) {
  if (value < lo || value > hi)
    return Error{option, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "] (got " + std::to_string(value) + ")"};
  return {};
}

po::options_description engine_kinds_group() {
  // A caption is printed as it is (an option's description is wrapped, cutting a long spec in two).
  return po::options_description("engine kinds (--engine SPEC, --reference SPEC):\n  " + engine_kinds_usage("\n  ") +
                                 "\n  (each kind's OPTIONS: docs/engine.md, `reduce run --help`)");
}

void add_oracle_options(po::options_description& opts) {
  // Sections, as `reduce help CMD` prints them after the command's own options.
  po::options_description engine("engine (what runs the model, and how)");
  engine.add_options()
      ("engine", po::value<std::string>()->default_value("ref"),
       "engine under test, a spec of one of the kinds listed below (check: also a list of releases, ort@A,ort@B,...); "
       "needed unless --expected, --reference or --float-model gives the expected values")
      ("reference", po::value<std::string>()->default_value("ref"), "engine that gives the expected values (e.g. ort@1.30.0 for a model ref cannot run, or another release)")
      ("slot-env", po::value<std::vector<std::string>>()->multitoken(),
       "NAME=VALUE for external runs; {slot} is the slot number (e.g. CUDA_VISIBLE_DEVICES={slot}), {rank} and {local_rank} the MPI rank (e.g. CUDA_VISIBLE_DEVICES={local_rank})")
      ("no-timing-cache", "trt: no TensorRT timing cache shared by the engine builds of this command (each build times its tactics anew)")
      ("repeat", po::value<int>()->default_value(1),
       "flaky engines: run every candidate N times and take the majority verdict (1..1000; default 1)")
      ("slots", po::value<int>()->default_value(0),
       "concurrent engine slots, numbered from 0 for {slot} (0: the number of jobs, or of cores; at most 1024)")
      ("threads", po::value<int>()->default_value(0), "threads per in-process engine run (0: all cores; at most 1024)")
      ("memory-budget", po::value<double>()->default_value(8),
       "MiB of small reference values kept in memory; values of 1 MiB or more, and the rest, are spilled to disk and mapped");
  add_run_limit_options(engine);
  engine.add(engine_kinds_group());
  po::options_description tolerance("tolerance (when outputs differ, and when a failure is the same)");
  tolerance.add_options()
      ("expected", po::value<std::vector<std::string>>()->composing(),
       "expected values of the --inputs samples, one per sample (Polygraphy --save-outputs .json, .npz, .npy, .pb, "
       "test_data_set_N folders): the graph outputs, or any values they name, are taken from it instead of the reference")
      ("atol", po::value<double>(), "absolute tolerance (default 1e-4; fp16 engines and float16 outputs 1e-2, bf16 engines and bfloat16 outputs 5e-2)")
      ("rtol", po::value<double>(), "relative tolerance (default 1e-3; fp16 engines and float16 outputs 1e-2, bf16 engines and bfloat16 outputs 5e-2)")
      ("check-error-stat", po::value<std::string>()->default_value("elemwise"),
       "statistic that decides a mismatch: elemwise, max, mean, median, quantile")
      ("error-quantile", po::value<double>()->default_value(0.99, "0.99"), "quantile for --check-error-stat quantile")
      ("fail-regex", po::value<std::vector<std::string>>()->multitoken()->composing(),
       "RE...: a failure is the same when the engine's message (or script output) matches any of these regexes "
       "(repeatable; check: scripts without --fail-code: a match fails even on exit 0, as in Polygraphy). "
       "RE2 syntax, searched anywhere in linear time: no backreferences or lookaround; ^ and $ are the whole "
       "output's ends ((?m) for lines, (?i) ignores case); docs/oracle.md")
      ("fail-code", po::value<std::vector<int>>()->multitoken()->composing(),
       "check: exit codes that mean 'fails' (default: any non-zero); with --fail-regex a regex must match too")
      ("ignore-fail-code", po::value<std::vector<int>>()->multitoken()->composing(), "check: exit codes that never mean 'fails'");
  opts.add(engine).add(tolerance);
}

void add_run_limit_options(po::options_description& opts) {
  opts.add_options()
      ("timeout", po::value<double>()->default_value(kDefaultTimeoutSeconds),
       "seconds per engine run, in-process engines included (0: none; at most 604800); a run over it is a 'timeout'")
      ("max-memory", po::value<std::string>(),
       "memory one in-process engine run may hold in computed values, e.g. 4G, 512M (K, M, G, T: powers of 1024; default: no limit)")
      ("cache-dir", po::value<std::string>(),
       "DIR: where engine releases from npm (ort, ort@VERSION, ort-web) are installed on first use "
       "(default: $REDUCE_CACHE_DIR, else $XDG_CACHE_HOME/reduce, else ~/.cache/reduce)");
}

Status run_limits_from(const po::variables_map& vm, EngineEnvironment& environment) {
  environment.timeout_seconds = vm["timeout"].as<double>();
  REDUCE_TRY(check_finite_non_negative("--timeout", environment.timeout_seconds));
  if (environment.timeout_seconds > kMaxTimeoutSeconds)
    return Error{"--timeout", "must be at most " + std::to_string(static_cast<int>(kMaxTimeoutSeconds)) + " s (one week; 0: no limit)"};
  REDUCE_ASSIGN(environment.max_memory_bytes, max_memory_from(vm));
  if (vm.count("cache-dir")) {
    const std::string dir = vm["cache-dir"].as<std::string>();
    if (dir.empty()) return Error{"--cache-dir", "needs a folder"};
    // Absolute: workers and installs may start in other folders.
    environment.cache_folder = std::filesystem::absolute(dir);
  }
  environment.on_note = console_from(vm).note_sink();
  return {};
}

Expected<uint64_t> max_memory_from(const po::variables_map& vm) {
  if (!vm.count("max-memory")) return uint64_t{0};
  return parse_byte_size("--max-memory", vm["max-memory"].as<std::string>());
}

Expected<EngineSpec> engine_spec_option(const char* option, std::string_view spec) {
  auto parsed = parse_engine_spec(spec);
  if (!parsed) return Error{option, parsed.error().message()};
  return parsed;
}

Status check_fp32_nodes_of(const std::string& spec, const Model& model, const std::string& model_path) {
  auto parsed = engine_spec_option("--engine", spec);
  if (!parsed) return {};  // reported where the options are read
  if (Status s = check_fp32_nodes(parsed->fp32(), model.graph); !s.ok()) return s.error().at(model_path);
  return {};
}

Status require_engine(const po::variables_map& vm) {
  // The reference against itself shows nothing: --engine is needed unless the expected values come
  // from elsewhere (--expected, another --reference, a float model).
  if (vm["engine"].defaulted() && vm["reference"].defaulted() && !vm.count("expected") && !vm.count("float-model"))
    return Error{"--engine", "name the engine under test, e.g. --engine ort, --engine trt:fp16, --engine opencv or "
                             "--engine 'cmd:./run.sh {model} {inputs} {outputs}' (every kind: `reduce help run`); "
                             "without it reduce would compare its reference engine with itself"};
  return {};
}

Expected<OracleOptions> oracle_options_from(const po::variables_map& vm) {
  OracleOptions o;
  o.engine = vm["engine"].as<std::string>();
  o.reference = vm["reference"].as<std::string>();
  // Both specs are checked here, before the model is loaded or any engine runs.
  REDUCE_ASSIGN(const EngineSpec engine, engine_spec_option("--engine", o.engine));
  REDUCE_TRY(engine_spec_option("--reference", o.reference));
  o.tolerance = default_tolerance(engine.precision());
  if (vm.count("atol")) o.tolerance.atol = vm["atol"].as<double>();
  if (vm.count("rtol")) o.tolerance.rtol = vm["rtol"].as<double>();
  // Tolerances given are the user's for every output; only the defaults follow the element type.
  if (vm.count("atol") || vm.count("rtol")) o.tolerance.by_element_type = false;
  REDUCE_TRY(check_finite_non_negative("--atol", o.tolerance.atol));
  REDUCE_TRY(check_finite_non_negative("--rtol", o.tolerance.rtol));
  REDUCE_ASSIGN(o.tolerance.stat, parse_error_stat(vm["check-error-stat"].as<std::string>()));
  o.tolerance.quantile = vm["error-quantile"].as<double>();
  if (!(o.tolerance.quantile >= 0 && o.tolerance.quantile <= 1)) return make_error("--error-quantile must be in [0, 1]");
  if (vm.count("fail-regex")) o.fail_regexes = vm["fail-regex"].as<std::vector<std::string>>();
  if (vm.count("fail-code")) o.fail_codes = vm["fail-code"].as<std::vector<int>>();
  if (vm.count("ignore-fail-code")) o.ignore_fail_codes = vm["ignore-fail-code"].as<std::vector<int>>();
  // An exit code is 0..255: another value would never match, silently.
  for (const auto& [flag, codes] : {std::pair{"--fail-code", &o.fail_codes}, std::pair{"--ignore-fail-code", &o.ignore_fail_codes}})
    for (int c : *codes)
      if (c < 0 || c > 255) return Error{flag, std::to_string(c) + " is not an exit code (0..255)"};
  REDUCE_TRY(run_limits_from(vm, o.environment));
  if (vm.count("slot-env")) o.environment.env = vm["slot-env"].as<std::vector<std::string>>();
  cluster::substitute_rank(o.environment.env, cluster::mpi_launch_from_environment());
  for (const auto& e : o.environment.env) {
    if (e.find('=') == std::string::npos || e.front() == '=') return make_error("--slot-env '" + e + "': expected NAME=VALUE");
    // A misspelt placeholder would reach the engine as it is: `{word}` must be one reduce fills.
    for (size_t open = e.find('{'); open != std::string::npos; open = e.find('{', open + 1)) {
      const size_t close = e.find('}', open);
      if (close == std::string::npos) break;
      const std::string word = e.substr(open + 1, close - open - 1);
      const bool identifier = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      });
      if (identifier && word != "slot")
        return make_error("--slot-env '" + e + "': unknown placeholder {" + word + "} (known: {slot}, {rank}, {local_rank})");
    }
  }
  o.environment.threads = vm["threads"].as<int>();
  REDUCE_TRY(check_int_range("--threads", o.environment.threads, 0, kMaxParallel));
  configure_engine_libraries(o.environment.threads);  // process-wide: the command's, once
  o.repeat = vm["repeat"].as<int>();
  REDUCE_TRY(check_int_range("--repeat", o.repeat, 1, kMaxConfirm));
  o.slots = vm["slots"].as<int>();
  REDUCE_TRY(check_int_range("--slots", o.slots, 0, kMaxParallel));
  o.exclusive_slots = o.slots > 0;  // given: it bounds the engine runs at once
  if (vm.count("jobs")) REDUCE_TRY(check_int_range("-j", vm["jobs"].as<int>(), 0, kMaxParallel));
  if (o.slots == 0 && vm.count("jobs") && vm["jobs"].as<int>() > 0) o.slots = vm["jobs"].as<int>();
  if (o.slots == 0) o.slots = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const double mib = vm["memory-budget"].as<double>();
  REDUCE_TRY(check_finite_non_negative("--memory-budget", mib));
  if (mib > 1024.0 * 1024 * 1024) return Error{"--memory-budget", "must be at most 1073741824 MiB"};
  o.record.memory_budget = static_cast<uint64_t>(mib * 1024 * 1024);
  // --max-memory bounds the reference values kept in memory too; the rest goes to the spill file.
  if (o.environment.max_memory_bytes > 0) o.record.memory_budget = std::min(o.record.memory_budget, o.environment.max_memory_bytes);
  // One ledger per command: every oracle it makes (samples) and every run charges it.
  o.environment.ledger = std::make_shared<MemoryLedger>();
  // One pool of timing cache files per command, made empty: its folder appears at the first build.
  if (!vm.count("no-timing-cache")) o.environment.timing_caches = std::make_shared<TimingCachePool>();
  o.record.ledger = o.environment.ledger;
  if (console_from(vm).verbose())
    o.on_engine_run = [](size_t nodes, const Verdict& v) { print_stderr_line(engine_run_line(nodes, v)); };
  return o;
}

std::string engine_run_line(size_t nodes, const Verdict& v) {
  std::ostringstream line;
  line.precision(3);
  line << "engine run: " << nodes << " node" << (nodes == 1 ? "" : "s") << ", " << v.seconds * 1e3 << " ms";
  if (v.runs > 1) line << " (" << v.runs << " runs, " << v.failing_runs << " failing)";
  line << ": "
       << (v.cancelled ? std::string("cancelled")
           : v.invalid ? "INVALID (" + v.invalid_reason + ")"
           : v.signature.fails() ? "FAIL (" + v.signature.to_string() + ")" : std::string("PASS"));
  return line.str();
}

Expected<SampleOracles> load_and_create_oracles(const po::variables_map& vm, const std::filesystem::path& model_path,
                                                Model& model, SampleUse use, std::stop_token stop,
                                                const ExpectedFromInputs& expected_from) {
  REDUCE_ASSIGN(OracleOptions options, oracle_options_from(vm));
  const CancelOnStop cancel(stop);  // a stop abandons the reference run and the samples' checks
  options.record.cancel = cancel.flag();
  REDUCE_ASSIGN(model, load_model(model_path));
  // A node name names one node, in reports, sets of nodes and reproducers alike (every rank renames
  // the same way).
  const size_t shared = make_node_names_unique(model, false).duplicates;
  if (shared > 0 && cluster::mpi_launch_from_environment().rank == 0)
    console_from(vm).note(model_path.string() + ": " + std::to_string(shared) +
                          " nodes have a name an earlier node has; they are renamed NAME_K, so that every name means one node");
  REDUCE_TRY(check_fp32_nodes_of(options.engine, model, model_path.string()));
  REDUCE_ASSIGN(auto samples, prepare_input_samples(vm, model, model_path));
  REDUCE_ASSIGN(auto expected, read_expected_samples(vm, model, samples.size()));
  // After the errors of the options, the model and the data files, before the reference runs.
  // precision (KeepAll) asks once it knows the model: a Q/DQ model is compared with its folded self.
  if (use != SampleUse::KeepAll) REDUCE_TRY(require_engine(vm));
  bool computed = false;
  if (expected_from) {
    REDUCE_ASSIGN(auto from, expected_from(model, samples));
    computed = !from.empty();
    if (computed) expected = std::move(from);
  }
  // Expected values the command computed differ from the reference's on purpose (a float model's).
  const auto warn = [computed](const std::string& line) {
    if (!computed) std::cerr << "warning: " << line << "\n";
  };
  REDUCE_ASSIGN(SampleOracles out, create_sample_oracles(model, model_path.string(), std::move(samples), std::move(expected),
                                                         std::move(options), use, cancel.flag(), warn));
  out.renamed_nodes = shared;
  return out;
}

bool inputs_are_random(const SampleOracles& samples) {
  return samples.sources.size() == 1 && samples.sources[0].rfind("seed ", 0) == 0;
}

void print_random_inputs_note(const SampleOracles& samples, std::ostream& out) {
  if (!inputs_are_random(samples)) return;
  out << "inputs: random (" << samples.sources[0] << "); random values can exaggerate or hide a failure: "
      << "--inputs FILE gives real data (.npz, .npy, .pb, a test_data_set_N folder, Polygraphy's .json), "
         "--input-range NAME:LO,HI bounds the random values (indices, masks)\n";
}

void print_samples(const SampleOracles& samples, std::ostream& out) {
  if (samples.sources.size() < 2) return;
  out << "samples: " << samples.sources.size() << ", going on with #" << samples.chosen << "\n";
  for (size_t i = 0; i < samples.sources.size(); ++i) {
    const auto& v = samples.verdicts[i];
    out << "  #" << i << " " << samples.sources[i] << ": "
        << (!v ? std::string("not checked")
               : v->invalid ? "INVALID (" + v->invalid_reason + ")"
               : v->signature.fails() ? "FAIL (" + std::string(to_string(v->signature.kind)) + ")" : std::string("PASS"))
        << "\n";
  }
}

std::variant<SampleOracles, int> open_oracle(const po::variables_map& vm, const std::string& model_path, Model& model,
                                             SampleUse use, std::stop_token stop, const ExpectedFromInputs& expected_from) {
  auto samples = load_and_create_oracles(vm, model_path, model, use, stop, expected_from);
  if (stop.stop_requested()) return interrupted();
  if (!samples) {
    std::cerr << "error: " << samples.error().message() << "\n";
    return kExitUsage;
  }
  // The header says what ran on what: with -q only the answer follows.
  if (console_from(vm).quiet()) return std::move(*samples);
  print_oracle_header(model_path, model, samples->main(), std::cout);
  print_samples(*samples, std::cout);
  print_random_inputs_note(*samples, std::cout);
  return std::move(*samples);
}

}  // namespace reduce::cli
