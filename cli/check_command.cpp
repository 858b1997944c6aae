// `reduce check MODEL --engine SPEC`: runs the model on the engine under test and on the reference,
// prints the verdict and failure signature. Exit 0 passes, 1 fails, 2 usage or input error.
#include <boost/program_options.hpp>

#include <iostream>

#include "command.h"
#include "command_line.h"
#include "input_options.h"
#include "json_output.h"
#include "oracle/diagnosis.h"
#include "oracle/layer_comparison.h"
#include "oracle/release_scan.h"
#include "oracle_options.h"
#include "reduce_arguments.h"
#include "oracle/verdict_report.h"
#include "stop_on_signal.h"

namespace reduce::cli {

namespace po = boost::program_options;

namespace {


void print_binding_diagnosis(Oracle& oracle, const Verdict& verdict, const std::atomic<bool>* cancel,
                             std::ostream& out) {
  if (!compares_outputs(verdict.signature.kind)) return;
  auto mapping = diagnose_input_binding(oracle, cancel);
  if (!mapping) return;
  out << "diagnosis: engine binds inputs in a different order than declared; it agrees with the reference when";
  bool first = true;
  for (const auto& [input, given] : *mapping) {
    out << (first ? " " : ", ") << "'" << input << "' receives the values of '" << given << "'";
    first = false;
  }
  out << "\n";
}

// The --diagnose table: one line per variant, then what the failure depends on.
void print_diagnosis(const Diagnosis& d, std::ostream& out) {
  out << "\n## diagnosis (variants of the model on the engine under test)\n\n"
      << "| depends on | variant | verdict | what it means |\n|---|---|---|---|\n";
  for (const auto& l : d.lines)
    out << "| " << l.dependency << " | " << l.variant << " | " << l.verdict << " | " << l.meaning << " |\n";
  auto listed = [&out](const std::vector<std::string>& names) {
    for (size_t k = 0; k < names.size(); ++k) out << (k ? ", " : "") << names[k];
  };
  const auto deps = d.depends_on();
  out << "\ndepends on: ";
  listed(deps);
  if (deps.empty()) out << "none of the variants (every variant still fails, or does not apply)";
  out << "\n";
  if (const auto open = d.inconclusive(); !open.empty()) {
    out << "inconclusive (the variant fails another way): ";
    listed(open);
    out << "\n";
  }
}

// `--engine ort@A,ort@B,...`: one verdict line per release against the same reference values (recorded
// once), then every change between them. A release that cannot be installed or built is a line too,
// and the scan goes on.
int check_releases(const po::variables_map& vm, const std::string& model_path, const std::vector<std::string>& specs,
                   std::stop_token stop, JsonOutput& json) {
  const CancelOnStop cancel(stop);
  po::variables_map values_only = vm;  // the oracle records the reference; each release is an engine of the scan
  values_only.at("engine").value() = std::string("ref");
  Model model;  // outlives the oracle
  auto samples = load_and_create_oracles(values_only, model_path, model, SampleUse::CheckAll, stop);
  if (stop.stop_requested()) return interrupted();
  if (!samples) {
    std::cerr << "error: " << samples.error().message() << "\n";
    return kExitUsage;
  }
  Oracle& oracle = samples->main();
  const auto releases = make_release_engines(specs, oracle.options().environment);
  if (stop.stop_requested()) return interrupted();
  const std::vector<ReleaseVerdict> scan = scan_releases(oracle, releases, cancel.flag());
  if (stop.stop_requested()) return interrupted();
  for (const ReleaseVerdict& r : scan) std::cout << r.spec << ": " << r.line() << "\n";
  Json rows = Json::array();
  for (const ReleaseVerdict& r : scan)
    rows.push_back({{"engine", r.spec}, {"status", r.line()}, {"verdict", r.verdict ? verdict_json(*r.verdict) : Json()}});
  json.doc()["releases"] = rows;
  // The reduction it prints runs as printed: the user's options go with it (the engine, reference
  // and model are its own).
  std::cout << release_scan_summary(scan, model_path, reduce_options_given(vm, {"engine", "reference", "model", "output"}))
            << "\n";
  bool fails = false, ran = false;
  for (const auto& r : scan) {
    ran |= r.ran();
    fails |= r.fails();
  }
  return json.print(fails ? kExitFailure : ran ? kExitOk : kExitUsage);
}

}  // namespace

int check_command(const std::vector<std::string>& args, std::stop_token stop) {
  po::options_description opts(
      "usage: reduce check MODEL --engine SPEC [options]\n"
      "       reduce check MODEL --engine ort@A,ort@B,... [options]\n\n"
      "Runs MODEL on the engine under test and on the reference, compares every output and prints the\n"
      "verdict with its failure signature (kind: mismatch, nonfinite, shape, error, crash, timeout).\n"
      "With a list of releases (ort@VERSION, ort-web@VERSION), one verdict line per release against the same\n"
      "reference (PASS, FAIL, or CANNOT TAKE: a format, opset, kernel or type the release does not have), then\n"
      "every change between neighbouring releases (fixed, regressed, failure changed, support added or\n"
      "removed) and the reduction to run for each change of behaviour.\n"
      "Exit code: 0 the model passes, 1 it fails, 2 bad usage or input (a list of releases: 1 when one\n"
      "fails, 0 when all that ran pass, 2 when none ran or could take the model).\n\noptions");
  opts.add_options()("help,h", "show this help")("model", po::value<std::string>(), "the model (.onnx or .onnxtxt)")
      ("confirm", po::value<int>()->default_value(1), "run a failing model this many times (at most 1000); a verdict that flips is flaky")
      ("json", "print one JSON document on stdout instead of text: schema, command, model, engine, reference, "
               "verdict (verdict, kind, signature, message, outputs), confirm, diagnosis, exit_code")
      ("diagnose", "when the model fails, check variants of it (every float node in FP32, intermediates as outputs, "
                   "inputs bound in another order, dynamic batch, batch 2, smaller inputs) and say what the failure depends on");
  add_oracle_options(opts);
  add_input_options(opts);
  add_output_options(opts, "one line per engine run (nodes, time, verdict) on stderr: the model's, --confirm's and "
                           "--diagnose's variants");
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (auto done = parse_command_line(args, "check", opts, pos, vm, "model", "MODEL")) return *done;
  const std::string model_path = vm["model"].as<std::string>();
  JsonOutput json(vm.count("json") > 0, "check");
  json.doc()["model"] = model_path;
  json.doc()["engine"] = vm["engine"].as<std::string>();
  json.doc()["reference"] = vm["reference"].as<std::string>();
  if (const auto specs = split_release_list(vm["engine"].as<std::string>()); specs.size() > 1)
    return check_releases(vm, model_path, specs, stop, json);
  const int confirm = vm["confirm"].as<int>();
  if (Status s = check_int_range("--confirm", confirm, 1, kMaxConfirm); !s.ok()) {
    std::cerr << "error: " << s.error().message() << "\n";
    return kExitUsage;
  }
  const CancelOnStop cancel(stop);
  Model model;
  auto opened = open_oracle(vm, model_path, model, SampleUse::CheckAll, stop);
  if (const int* code = std::get_if<int>(&opened)) return *code;
  const SampleOracles& samples = std::get<SampleOracles>(opened);
  Oracle& o = samples.main();
  Verdict verdict = o.evaluate(Candidate::whole(model.graph), cancel.flag());
  if (verdict.cancelled) return interrupted();
  o.target().set(verdict.signature);
  print_verdict(verdict, std::cout);
  if (!verdict.cannot_take.empty())
    std::cout << "note: the engine's release cannot take this model (" << verdict.cannot_take
              << "): a limit of the release, not a wrong answer\n";
  if (verdict.runs > 1)
    std::cout << (verdict.flaky() ? "FLAKY: " : "runs: ") << verdict.failing_runs << " of " << verdict.runs
              << " runs show the failure (--repeat: the majority decides)\n";
  json.doc()["verdict"] = verdict_json(verdict);
  if (verdict.invalid) return json.print(kExitUsage);
  // Flakiness: rerun (never from the cache) and see whether the verdict holds.
  int same = 1;
  for (int r = 1; r < confirm && verdict.signature.fails(); ++r) {
    Verdict again = o.rerun(Candidate::whole(model.graph), cancel.flag());
    if (again.cancelled) return interrupted();
    if (o.target().classify(again) == SignatureMatch::Same) ++same;
    else std::cout << "run " << r + 1 << ": " << (again.signature.fails() ? again.signature.to_string() : "pass") << "\n";
  }
  if (confirm > 1 && verdict.signature.fails())
    std::cout << (same == confirm ? "confirmed: " : "FLAKY: ") << same << " of " << confirm
              << " runs show this failure\n";
  json.doc()["confirm"] = {{"runs", verdict.signature.fails() ? confirm : 1}, {"same_failure", verdict.signature.fails() ? same : 0}};
  if (vm.count("diagnose") && verdict.signature.fails()) {
    auto diagnosis = diagnose(o, cancel.flag());
    if (cancel.requested() || !diagnosis) return interrupted();
    print_diagnosis(*diagnosis, std::cout);
    Json lines = Json::array();
    for (const auto& l : diagnosis->lines)
      lines.push_back({{"depends_on", l.dependency}, {"variant", l.variant}, {"verdict", l.verdict}, {"meaning", l.meaning}});
    json.doc()["diagnosis"] = {{"variants", lines}, {"depends_on", diagnosis->depends_on()}, {"inconclusive", diagnosis->inconclusive()}};
  } else if (vm.count("diagnose")) {
    std::cout << "\ndiagnosis: the model passes: nothing to diagnose\n";
  } else {
    print_binding_diagnosis(o, verdict, cancel.flag(), std::cout);
  }
  if (cancel.requested()) return interrupted();
  return json.print(verdict.signature.fails() ? kExitFailure : kExitOk);
}

}  // namespace reduce::cli
