// Writing the reproducer bundle.
#include "session/bundle.h"
#include "core/bundle_lock.h"

#include <algorithm>
#include <thread>

#include "core/body_nodes.h"
#include "core/inline_if.h"
#include "core/mapped_file.h"
#include "core/model_io.h"
#include "core/polygraphy_json.h"
#include "error_origin_section.h"
#include "adapters/graph_picture.h"
#include "report/reproducer_section.h"
#include "reproduction_bundle.h"
#include "rounding_check.h"
#include "stored_reproducer.h"
#include "core/canonical_graph.h"
#include "report/report.h"
#include "oracle/model_independence.h"

namespace reduce {

namespace fs = std::filesystem;

std::map<std::string, size_t> op_type_counts(const Graph& graph) {
  std::map<std::string, size_t> counts;
  for (const Node& n : graph.nodes)
    if (!is_constant_node(n))
      ++counts[n.domain.empty() ? n.op_type : n.domain + "." + n.op_type];
  return counts;
}

namespace {

Status make_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{dir.string(), "cannot create folder: " + ec.message()};
  return {};
}

// Replaces DIR/NAME/ with fresh tensor files: written into a temporary folder, then swapped in.
Status write_tensor_folder(const fs::path& dir, const std::string& name, const std::string& prefix,
                           const std::vector<NamedTensor>& tensors) {
  const fs::path tmp = dir / ("." + name + ".tmp"), old = dir / ("." + name + ".old"), final_dir = dir / name;
  std::error_code ec;
  fs::remove_all(tmp, ec);
  REDUCE_TRY(make_dir(tmp));
  for (size_t k = 0; k < tensors.size(); ++k)
    REDUCE_TRY(write_tensor_pb(tmp / (prefix + "_" + std::to_string(k) + ".pb"), tensors[k].name, tensors[k].tensor));
  fs::remove_all(old, ec);
  if (fs::exists(final_dir)) fs::rename(final_dir, old, ec);
  fs::rename(tmp, final_dir, ec);
  if (ec) return Error{final_dir.string(), "cannot replace folder: " + ec.message()};
  fs::remove_all(old, ec);
  return {};
}

}  // namespace

namespace {

constexpr const char* kBundleEntries[] = {"model.onnx", "model.data", "inputs",  "expected",   "actual", "report.json",
                                          "report.md",  "graph.dot",  "graph.svg", "graph.png", "journal", "bucket.txt", "error.svg", "error.png",
                                          "inputs.json", "expected.json",
                                          "batch_status.txt", "model_fp16.onnx", "model_bf16.onnx", "model_fp16.data",
                                          "model_bf16.data", "inputs.npz", "expected.npz", "repro.py", "repro.mjs",
                                          "repro.sh", "compare.py", "engine"};

// A bundle file, or the hidden temporary of one (".inputs.tmp", ".report.json.tmp123").
bool is_bundle_entry(const std::string& name) {
  if (name == kBundleLockName) return true;  // BundleLock's file
  // Hard links of the original's external-data files (SaveOptions::link_external_data).
  const std::string linked = "model.original";
  for (const std::string& prefix : {linked, "." + linked})
    if (name.rfind(prefix, 0) == 0 && (name.ends_with(".data") || name.find(".data.tmp") != std::string::npos))
      return true;
  for (const char* entry : kBundleEntries) {
    const std::string e = entry;
    if (name == e || name.rfind("." + e + ".", 0) == 0) return true;
  }
  return false;
}

}  // namespace

Status check_bundle_folder(const fs::path& dir, const fs::path& model, bool resume) {
  const std::string where = dir.string();
  REDUCE_TRY(check_output_spares(dir, {model}, "-o"));
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (resume && !fs::is_regular_file(dir / "journal", ec)) return Error{(dir / "journal").string(), "no journal to resume from"};
  if (!fs::exists(status)) return {};
  if (!fs::is_directory(status)) return Error{where, "output exists and is not a folder"};
  bool empty = true, marked = false;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == kBundleLockName) continue;  // a lock alone does not make a bundle
    empty = false;
    if (!is_bundle_entry(name))
      return Error{where, "output folder is not empty and is not a bundle (it holds '" + name + "'); choose another -o"};
    // batch_status.txt: `reduce batch` kept a row's status here (batch/summary.h), perhaps alone.
    marked = marked || name == "journal" || name == "report.json" || name == "batch_status.txt";
  }
  if (ec) return Error{where, "cannot read folder: " + ec.message()};
  if (!empty && !marked)
    return Error{where, "output folder is not empty and is not a bundle (no journal, report.json or batch_status.txt); choose another -o"};
  return {};
}

Status write_bundle_model(const fs::path& dir, const CandidateRun& run, BundleWeights weights) {
  REDUCE_TRY(make_dir(dir));
  const SaveOptions so = bundle_save_options(run.model, weights);
  // Inputs first: a model.onnx on disk always has its inputs next to it.
  REDUCE_TRY(write_tensor_folder(dir, "inputs", "input", run.inputs));
  REDUCE_TRY(save_model(run.model, dir / "model.onnx", so));
  remove_unread_weight_files(dir, so);
  return {};
}

int confirm_runs_for(int confirm, const ReductionReport& report) {
  if (confirm > 0) return confirm;
  return report.trust_reasons.empty() ? 1 : kTinyConfirmRuns;
}

namespace {

// inputs.json and expected.json, for `polygraphy run model.onnx --load-inputs inputs.json --load-outputs
// expected.json`. Both are written (each atomically) or neither: a tensor without a .npy form
// (bfloat16) is a note in the report, not a lost bundle.
void write_polygraphy_files(const fs::path& dir, const CandidateRun& run, const std::string& reference,
                            ReductionReport& report) {
  std::error_code ec;
  Status s = write_polygraphy_inputs(dir / "inputs.json", {run.inputs});
  if (s.ok()) s = write_polygraphy_outputs(dir / "expected.json", "reduce-" + reference, {run.expected});
  report.polygraphy_files = s.ok();
  if (!s.ok()) {
    report.polygraphy_files_note = s.error().what;
    fs::remove(dir / "inputs.json", ec);
    fs::remove(dir / "expected.json", ec);
  }
}

// The confirming runs after the first: side by side when `slots` has a slot for each (one round of
// waiting), else one after another, the later ones ending early on `cancel`.
struct ConfirmRuns {
  uint64_t runs = 0, same = 0, rounds = 0;
};
ConfirmRuns confirm_again(Oracle& oracle, const Candidate& candidate, int runs, int slots, const std::atomic<bool>* cancel) {
  ConfirmRuns out;
  if (runs <= 0) return out;
  const bool side_by_side = runs > 1 && slots >= runs;
  std::vector<Verdict> again(static_cast<size_t>(runs));
  if (side_by_side) {
    std::vector<std::thread> threads;
    for (auto& v : again) threads.emplace_back([&] { v = oracle.rerun(candidate, cancel); });
    for (auto& t : threads) t.join();
  }
  for (auto& v : again) {
    if (!side_by_side) {
      if (cancel && cancel->load()) break;
      v = oracle.rerun(candidate, cancel);
    }
    if (v.cancelled) break;
    ++out.runs;
    out.same += oracle.target().classify(v) == SignatureMatch::Same;
  }
  out.rounds = side_by_side && out.runs > 0 ? 1 : out.runs;
  return out;
}

// The probe models that passed before the search, once more: side by side when `slots` has a slot
// for each neutral probe (one round of waiting).
struct ProbeRuns {
  std::optional<ModelIndependence> again;
  uint64_t runs = 0, rounds = 0;
};
ProbeRuns probe_again(Oracle& oracle, int slots, const std::atomic<bool>* cancel) {
  ProbeRuns out;
  const size_t neutral = neutral_probes(oracle.model()).size();
  std::vector<Verdict> ran;
  if (slots >= static_cast<int>(neutral) && oracle.options().repeat == 1) ran = run_neutral_probes(oracle, cancel);
  const size_t early = ran.size();
  ModelIndependence again = probe_model_independence(oracle, cancel, std::move(ran));
  if (again.cancelled) return out;
  const size_t later = again.probes.size() > early ? again.probes.size() - early : 0;
  out.runs = early + later;
  out.rounds = (early > 0 ? 1 : 0) + later;
  out.again = std::move(again);
  return out;
}

// The probes run again, in the report after the first ones; one that fails the same way now makes
// the conclusion mixed, as if it had before the search.
void add_probes_again(ModelIndependence again, ReductionReport& report) {
  for (auto& probe : again.probes) {
    probe.model += " (again, after the search)";
    report.probes.probes.push_back(std::move(probe));
  }
  if (again.any_same()) report.probes.conclusion = ProbeConclusion::Mixed;
}

// The trust runs after the reproducer's first fresh run: `confirm_more` fresh runs and, with
// `probes`, the probe models again (a reproducer of 1-2 nodes is where a reduction on an engine that
// fails at random, or on any model at all, ends; a probe that fails the same way now makes it
// suspect, setup_suspect, as if it had before). In one round of waiting when the slots hold them all.
// `made` holds the runs made beside certify's last round (FreshRun::again, probes): counted in the
// search's statistics already, used when they are what is asked.
void trust_runs(Oracle& oracle, const Candidate& candidate, int confirm_more, bool probes, const std::atomic<bool>* cancel,
                ReductionReport& report, FreshRun made) {
  report.runs_spent.confirmation += made.again.size();
  report.runs_spent.probes += made.probes.size();
  if (!made.again.empty() && static_cast<int>(made.again.size()) == confirm_more) {
    for (const Verdict& v : made.again) {
      ++report.confirm_runs;
      report.confirmed += oracle.target().classify(v) == SignatureMatch::Same;
    }
    confirm_more = 0;
  }
  if (probes && !made.probes.empty()) {
    ModelIndependence again = probe_model_independence(oracle, cancel, std::move(made.probes));
    if (again.cancelled) return;
    add_probes_again(std::move(again), report);
    probes = false;
  }
  const int slots = oracle.options().slots;
  const int neutral = probes ? static_cast<int>(neutral_probes(oracle.model()).size()) : 0;
  const bool together = confirm_more > 0 && probes && oracle.options().repeat == 1 && slots >= confirm_more + neutral;
  ConfirmRuns c;
  ProbeRuns p;
  if (together) {
    std::thread probing([&] { p = probe_again(oracle, neutral, cancel); });
    c = confirm_again(oracle, candidate, confirm_more, confirm_more, cancel);
    probing.join();
  } else {
    c = confirm_again(oracle, candidate, confirm_more, slots, cancel);
    if (probes) p = probe_again(oracle, slots, cancel);
  }
  report.confirm_runs += static_cast<int>(c.runs);
  report.confirmed += static_cast<int>(c.same);
  const uint64_t probe_rounds = together ? std::max(c.rounds, p.rounds) - c.rounds : p.rounds;
  report.engine_runs += c.runs + p.runs;
  report.rounds += c.rounds + probe_rounds;
  report.runs_spent.confirmation += c.runs;
  report.rounds_spent.confirmation += c.rounds;
  report.runs_spent.probes += p.runs;
  report.rounds_spent.probes += probe_rounds;
  if (p.again) add_probes_again(std::move(*p.again), report);
}

// actual/: the engine's outputs of the reproducer (or its error message), from a fresh run: a
// reproducer is reported only after it failed again on the engine. Counts that run and sets `runs`
// to the fresh runs to make in all (confirm_runs_for; trust_runs makes the others). Returns the
// first run's verdict. `first`, when given, is the first run, made beside the search's last round.
Expected<Verdict> write_actual(const fs::path& dir, Oracle& oracle, const Candidate& candidate, const CandidateRun& run,
                               int confirm, ReductionReport& report, std::optional<FreshRun>& first, int& runs) {
  runs = confirm_runs_for(confirm, report);
  TensorMap actual;
  Verdict verdict;
  const uint64_t rounds_before = report.rounds;
  if (first) {
    // Made beside certify's last round: counted in the search's statistics, a confirmation run.
    verdict = std::move(first->verdict);
    actual = std::move(first->actual);
    report.rounds = std::max<uint64_t>(report.rounds, first->started_at_round + 1);
  } else {
    verdict = oracle.rerun(candidate, nullptr, &actual);
    report.engine_runs += 1;
    report.rounds += 1;
  }
  report.runs_spent.confirmation += 1;
  report.rounds_spent.confirmation += report.rounds - rounds_before;
  report.confirm_runs = 1;
  report.confirmed = oracle.target().classify(verdict) == SignatureMatch::Same;
  if (!report.confirmed && confirm == 0 && runs < kTinyConfirmRuns) {
    // A sign of its own: how often it fails again is what the user needs to know next.
    report.trust_reasons.push_back("the first fresh run of the reproducer did not fail the same way");
    runs = kTinyConfirmRuns;
  }
  std::vector<NamedTensor> actual_list;
  for (const auto& e : run.expected)
    if (auto it = actual.find(e.name); it != actual.end()) actual_list.push_back({e.name, it->second});
  REDUCE_TRY(write_tensor_folder(dir, "actual", "output", actual_list));
  const FailureKind kind = verdict.signature.kind;
  if (kind == FailureKind::Error || kind == FailureKind::Crash || kind == FailureKind::Timeout)
    REDUCE_TRY(write_file_atomic(dir / "actual" / "error.txt", verdict.signature.message + "\n"));
  return verdict;
}

// The reproducer's part of the report: its graph, what the reduction left out, its own verdict.
void describe_reproducer(ReductionReport& report, const Oracle& oracle, const Candidate& candidate,
                         const CandidateRun& run, const Verdict& verdict) {
  const Graph& reduced = run.model.graph;
  report.original_op_types = op_type_counts(oracle.model().graph).size();
  report.reduced_nodes = count_nodes(reduced);
  report.setup_suspect = report.probes.any_same() && report.reduced_nodes <= ReductionReport::kSetupSuspectNodes;
  // Body nodes are units of reduction too (ReduceResult::one_minimal covers them): how many went, a
  // removed node's nested bodies with it, and how many of the original's stay (not counting the
  // Identity a branch left returning an outer value gets: remove_body_nodes).
  const BodyNodes numbering(oracle.model().graph);
  size_t under_kept = 0, removed = 0, covered = 0;
  for (size_t n : candidate.nodes) under_kept += numbering.range_of(n).second - numbering.range_of(n).first;
  for (size_t id : candidate.removed_body_nodes)
    if (id >= covered) {
      removed += numbering[id].end - id;
      covered = numbering[id].end;
    }
  report.control_flow.body_nodes_removed = std::min(removed, under_kept);
  report.control_flow.nodes_in_bodies = under_kept - report.control_flow.body_nodes_removed;
  report.reduced_op_types = op_type_counts(reduced);
  report.inputs = run.inputs.size();
  report.outputs = reduced.outputs.size();
  report.filled_weights = {candidate.filled.begin(), candidate.filled.end()};
  report.dropped_attributes.clear();
  for (const auto& [node, attr] : candidate.dropped_attributes)
    report.dropped_attributes.push_back(oracle.model().graph.nodes[node].name + "." + attr);
  report.reduced_errors = verdict.outputs;
  report.failure = oracle.target().signature();
  report.reduced_failure = verdict.signature;
  report.engine = oracle.options().engine;
  if (oracle.spec()) report.engine_spec = *oracle.spec();
  if (const auto& caches = oracle.options().environment.timing_caches) {
    report.timing_cache_builds = caches->leases();
    report.timing_cache_files = caches->files();
  }
  report.reference = oracle.options().reference;
  const ReferenceRecording& recording = oracle.recording();
  report.expected_source = recording.given_values > 0 ? recording.given_source : "";
  report.expected_values = recording.given_values;
  report.reference_ran = recording.reference_ran;
  report.tolerance = oracle.options().tolerance;
  report.fail_regexes = oracle.options().fail_regexes;
  report.fail_codes = oracle.options().fail_codes;
  report.ignore_fail_codes = oracle.options().ignore_fail_codes;
  report.engine_release = oracle.engine_release();
  report.environment = environment_line();
}

// What model.onnx holds, as text and in bytes, and what the bundle weighs so far.
void describe_stored(const fs::path& dir, const CandidateRun& stored, ReductionReport& report) {
  report.reproducer = reproducer_section(stored.model, stored.inputs, stored.expected);
  const BundleModelFiles files = bundle_model_files(dir);
  report.model_bytes = files.bytes;
  report.weights_linked = files.linked;
  report.bundle_bytes = folder_bytes(dir);
}

}  // namespace

Status write_bundle(const fs::path& dir, Oracle& oracle, const Candidate& candidate, ReductionReport& report,
                    const std::atomic<bool>* cancel, const BundleOptions& options, std::optional<FreshRun> first) {
  REDUCE_ASSIGN(CandidateRun run, oracle.materialize(candidate));
  const CandidateRun stored = stored_reproducer(oracle, candidate, run, report, cancel);
  REDUCE_TRY(write_bundle_model(dir, stored, BundleWeights::Own));
  REDUCE_TRY(write_tensor_folder(dir, "expected", "output", run.expected));
  if (options.polygraphy || wants_polygraphy_files(oracle))
    write_polygraphy_files(dir, run, oracle.options().reference, report);
  const size_t nodes = count_nodes(run.model.graph);
  // Where a reduction on an engine that fails at random on any model ends: measured as the one sign
  // a search does not give (bench/RESULTS.md, "Trust runs where the engine gives a reason").
  if (nodes <= ReductionReport::kSetupSuspectNodes)
    report.trust_reasons.push_back("a reproducer of " + std::to_string(nodes) +
                                   " node(s), where reductions on an engine that fails at random end");
  int runs = 1;
  REDUCE_ASSIGN(Verdict verdict, write_actual(dir, oracle, candidate, run, options.confirm, report, first, runs));
  const bool probes = nodes <= ReductionReport::kSetupSuspectNodes && report.probes.conclusion == ProbeConclusion::ModelDependent &&
                      !report.trust_reasons.empty();
  trust_runs(oracle, candidate, runs - 1, probes, cancel, report, first ? std::move(*first) : FreshRun{});
  check_rounding(oracle, run, cancel, report);
  describe_reproducer(report, oracle, candidate, run, verdict);
  REDUCE_TRY(write_reproduction(dir, oracle, run, verdict, report));
  REDUCE_TRY(trace_bundle_error_origin(dir, oracle, report, cancel));
  REDUCE_TRY(write_file_atomic(dir / "graph.dot", graph_dot(run.model.graph)));
  const GraphPictures pictures = render_graph(dir / "graph.dot", dir / "graph.svg", dir / "graph.png", run.model.graph.nodes.size(), cancel);
  report.graph_svg = pictures.svg;
  report.graph_png = pictures.png;
  describe_stored(dir, stored, report);
  const OracleStatistics stats = oracle.statistics();  // every run of the engine is done by now
  report.work_nodes = stats.work_nodes;
  report.work_weight_bytes = stats.work_weight_bytes;
  REDUCE_TRY(write_issue(dir, report));
  REDUCE_TRY(write_file_atomic(dir / "report.json", report_json(report)));
  REDUCE_TRY(write_file_atomic(dir / "report.md", report_markdown(report)));
  // Last: a bundle with bucket.txt is complete (`reduce batch` skips it).
  return write_file_atomic(dir / "bucket.txt", bucket_json_line(bucket_record(report, canonical_form(run.model.graph))));
}

}  // namespace reduce
