// report.json and bucket.txt from the report model, with nlohmann-json (keys in the order written).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/version.h"
#include "report/report.h"

namespace reduce {

using Json = nlohmann::ordered_json;

namespace {

// Engine messages may hold any bytes: invalid UTF-8 is replaced, never an exception.
std::string dump(const Json& j, int indent) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

Json original_json(const ReductionReport& r) {
  return {{"model", r.model_path}, {"nodes", r.original_nodes}, {"op_types", r.original_op_types}};
}

Json reduced_json(const ReductionReport& r) {
  Json op_types = Json::object(), filled = Json::object();
  for (const auto& [op, n] : r.reduced_op_types) op_types[op] = n;
  for (const auto& [name, value] : r.filled_weights) filled[name] = value;
  return {{"nodes", r.reduced_nodes}, {"op_types", op_types},         {"inputs", r.inputs},
          {"outputs", r.outputs},     {"filled_weights", filled},     {"dropped_attributes", r.dropped_attributes},
          {"filled_stored_small", r.filled_stored_small}, {"model_bytes", r.model_bytes},
          {"weights_linked", r.weights_linked}};
}

Json failure_json(const ReductionReport& r) {
  return {{"kind", to_string(r.failure.kind)},
          {"message", r.failure.message},
          {"signature", r.failure.to_string()},
          {"reduced_kind", to_string(r.reduced_failure.kind)},
          {"reduced_message", r.reduced_failure.message}};
}

Json passes_json(const ReductionReport& r) {
  Json passes = Json::array();
  for (const auto& p : r.passes)
    passes.push_back({{"name", p.name}, {"checks", p.checks}, {"successes", p.successes}, {"seconds", p.seconds}});
  return passes;
}

// Infinite local errors (non-finite alone) are written as null: JSON has no infinity.
// What the probe models showed (oracle/model_independence.h): one entry per probe run.
Json probes_json(const ReductionReport& r) {
  Json models = Json::array();
  for (const auto& p : r.probes.probes)
    models.push_back({{"model", p.model},
                      {"same_failure", p.match == SignatureMatch::Same},
                      {"failure", p.verdict.signature.fails() ? Json(p.verdict.signature.to_string()) : Json()}});
  return {{"conclusion", to_string(r.probes.conclusion)}, {"models", models}, {"setup_suspect", r.setup_suspect}};
}

Json error_source_json(const ErrorSource& e) {
  return {{"node", e.node}, {"op_type", e.op_type}, {"value", e.value},
          {"local_error", std::isfinite(e.local_error) ? Json(e.local_error) : Json()}};
}

}  // namespace

std::string report_json(const ReductionReport& r) {
  Json j;
  // First, so that a reader can refuse a layout it does not know (report.h, kReportSchema).
  j["schema"] = kReportSchema;
  j["original"] = original_json(r);
  j["reduced"] = reduced_json(r);
  j["control_flow"] = {{"inlined_if", r.control_flow.inlined_if},
                       {"inlined_body_nodes", r.control_flow.inlined_body_nodes},
                       {"given_nodes", r.control_flow.given_nodes},
                       {"nodes_in_bodies", r.control_flow.nodes_in_bodies},
                       {"body_nodes_removed", r.control_flow.body_nodes_removed},
                       {"unrolled_loops", r.control_flow.unrolled_loops},
                       {"unrolled_iterations", r.control_flow.unrolled_iterations},
                       {"unrolled_body_nodes", r.control_flow.unrolled_body_nodes}};
  j["input_samples"] = {{"count", r.samples.count}, {"used", r.samples.used}, {"source", r.samples.source},
                        {"failing", r.samples.failing}};
  j["failure"] = failure_json(r);
  j["engine"] = r.engine;
  j["engine_release"] = r.engine_release;
  j["reduce_version"] = kReduceVersion;
  j["reference"] = r.reference;
  j["timing_cache"] = r.timing_cache_builds == 0 ? Json() : Json{{"builds", r.timing_cache_builds}, {"files", r.timing_cache_files}};
  j["expected"] = {{"source", r.expected_source}, {"values", r.expected_values}, {"reference_ran", r.reference_ran}};
  j["tolerance"] = {{"atol", r.tolerance.atol}, {"rtol", r.tolerance.rtol}, {"error_stat", to_string(r.tolerance.stat)}};
  // Outputs of these element types were compared with looser defaults (no --atol/--rtol given).
  for (const auto& [dtype, typed] : element_type_tolerances(r.tolerance))
    j["tolerance"]["by_element_type"][std::string(dtype_name(dtype))] = {{"atol", typed.atol}, {"rtol", typed.rtol}};
  j["strategy"] = r.strategy;
  j["jobs"] = r.jobs;
  j["ranks"] = r.ranks;
  j["slots"] = r.slots;
  j["ranks_lost"] = r.ranks_lost;
  j["remote_checks"] = r.remote_checks;
  j["checks"] = r.checks;
  j["engine_runs"] = r.engine_runs;
  j["rounds"] = r.rounds;
  // The same two counts by what they were spent on (they sum to engine_runs and rounds).
  const auto by_purpose = [](uint64_t total, const ReductionReport::Spent& spent) {
    return Json{{"search", total - std::min(total, spent.besides_search())},
                {"confirmation", spent.confirmation},
                {"probes", spent.probes},
                {"bundle", spent.bundle}};
  };
  j["engine_runs_by_purpose"] = by_purpose(r.engine_runs, r.runs_spent);
  j["rounds_by_purpose"] = by_purpose(r.rounds, r.rounds_spent);
  j["trust"] = {{"reasons", r.trust_reasons}};
  const auto times_model = [&r](uint64_t nodes) {
    return r.original_nodes == 0 ? Json() : Json(static_cast<double>(nodes) / static_cast<double>(r.original_nodes));
  };
  j["engine_work"] = {{"nodes", r.work_nodes},
                      {"weight_bytes", r.work_weight_bytes},
                      {"x_model_nodes", times_model(r.work_nodes)},
                      {"search_nodes", r.search_work_nodes},
                      {"search_x_model_nodes", times_model(r.search_work_nodes)}};
  j["first_small_reproducer"] =
      r.first_small ? Json{{"nodes", r.first_small->nodes}, {"seconds", r.first_small->seconds}, {"engine_runs", r.first_small->engine_runs}}
                    : Json();
  j["engine_run_budget"] = r.engine_run_budget == 0 ? Json()
                                                    : Json{{"max", r.engine_run_budget}, {"reached", r.budget_reached}};
  j["simplification"] = Json{{"max_runs", r.simplify_runs_max ? Json(*r.simplify_runs_max) : Json()},
                             {"runs", r.simplify_runs},
                             {"budget_reached", r.simplify_budget_reached}};
  j["cache_hits"] = r.cache_hits;
  j["slipped"] = r.slipped;
  j["renamed_nodes"] = r.renamed_nodes;
  j["repeat"] = r.repeat;
  j["flaky"] = r.flaky;
  j["invalid"] = r.invalid;
  j["refused_by_checker"] = r.refused_by_checker;
  j["seconds"] = r.seconds;
  j["engine_seconds"] = r.engine_seconds;
  j["bundle_bytes"] = r.bundle_bytes;
  j["memory"] = {{"peak_held_bytes", r.peak_held_bytes},
                 {"recorded_in_memory_bytes", r.recorded_in_memory_bytes},
                 {"recorded_spilled_bytes", r.recorded_spilled_bytes}};
  j["one_minimal"] = r.one_minimal;
  j["interrupted"] = r.interrupted;
  j["confirm"] = {{"runs", r.confirm_runs}, {"failed_again", r.confirmed}};
  j["probes"] = probes_json(r);
  j["rounding"] = !r.rounding.checked ? Json()
                                      : Json{{"precision", r.rounding.precision}, {"reference", r.rounding.engine},
                                             {"verdict", r.rounding.verdict}, {"explains_failure", r.rounding.explained}};
  j["passes"] = passes_json(r);
  j["error_sources"] = Json::array();
  for (const auto& e : r.error_sources) j["error_sources"].push_back(error_source_json(e));
  j["nonfinite_born"] = r.nonfinite_born ? error_source_json(*r.nonfinite_born) : Json();
  j["command"] = r.command;
  j["reproducer"] = {{"model", r.reproducer_model},
                     {"engine", r.reproducer_engine},
                     {"scripts", r.reproduction_scripts},
                     {"data", r.reproduction_data},
                     {"standalone", r.reproduction_standalone},
                     {"issue", r.reproduction_issue.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.reproduction_issue)},
                     {"note", r.reproduction_note.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.reproduction_note)}};
  j["environment"] = r.environment;
  return dump(j, 2) + "\n";
}

std::string bucket_json_line(const BucketRecord& b) {
  const Json j = {{"failure", b.failure}, {"original_nodes", b.original_nodes}, {"reduced_nodes", b.reduced_nodes},
                  {"checks", b.checks},   {"seconds", b.seconds},               {"one_minimal", b.one_minimal},
                  {"ops", b.ops},         {"form", b.form},                     {"complete", b.complete}};
  return dump(j, -1) + "\n";
}

std::optional<BucketRecord> parse_bucket(const std::string& text) {
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  try {
    BucketRecord b;
    b.failure = j.at("failure").get<std::string>();
    b.original_nodes = j.at("original_nodes").get<size_t>();
    b.reduced_nodes = j.at("reduced_nodes").get<size_t>();
    b.checks = j.at("checks").get<uint64_t>();
    b.seconds = j.at("seconds").get<double>();
    b.one_minimal = j.at("one_minimal").get<bool>();
    b.ops = j.at("ops").get<std::string>();
    b.form = j.at("form").get<std::string>();
    b.complete = j.value("complete", false);
    return b;
  } catch (const Json::exception&) {
    return std::nullopt;
  }
}

std::optional<BucketRecord> read_bucket(const std::filesystem::path& bundle) {
  std::ifstream in(bundle / "bucket.txt", std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return parse_bucket(text.str());
}

}  // namespace reduce
