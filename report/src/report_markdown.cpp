// report.md from the report model: paste-ready for an issue tracker.
#include <nlohmann/json.hpp>
#include <sstream>

#include "adapters/engine_spec.h"
#include "adapters/script_words.h"
#include "report/report.h"
#include "oracle/signature.h"
#include "report/reproducer_section.h"
#include "oracle/verdict_report.h"

namespace reduce {

namespace {

void write_reduced_line(const ReductionReport& r, std::ostream& md) {
  md << "**Reduced:** " << r.original_nodes << " nodes -> " << r.reduced_nodes << " nodes (";
  bool first = true;
  for (const auto& [op, n] : r.reduced_op_types) md << (first ? "" : ", ") << op << " x" << n, first = false;
  // Reductions keep Q/DQ pairs whole (docs/reducer.md): a DequantizeLinear is removed with its QuantizeLinear.
  const bool quantizes = r.reduced_op_types.count("QuantizeLinear") > 0;
  md << ")"
     << (r.one_minimal ? quantizes ? ", 1-minimal (removing any single node, a DequantizeLinear with its QuantizeLinear, makes the failure disappear)"
                                   : ", 1-minimal (removing any single node makes the failure disappear)"
                       : "")
     << (r.interrupted ? ", interrupted: best reproducer so far" : "") << ".\n\n";
  // What the node set is minimal relative to: how a removed node's values reach the rest.
  if (r.one_minimal)
    md << "1-minimal relative to cuts that feed a removed node's values as inputs holding what they held in the "
          "original run, declared as the original declares them (a dim that is symbolic there stays symbolic).\n\n";
  if (r.confirm_runs > 0)
    md << (r.not_confirmed() ? "**NOT CONFIRMED:** the reproducer failed the same way in only " : "**Confirmed:** the reproducer failed the same way in ")
       << r.confirmed << " of " << r.confirm_runs << " fresh run(s) on the engine"
       << (r.not_confirmed() ? ": the engine is flaky or the failure depends on something else than the model" : "")
       << (r.trust_reasons.empty() ? std::string(" (the engine gave no sign of flakiness: one run is the default)") : std::string())
       << ".\n\n";
  if (!r.trust_reasons.empty()) {
    md << "**More trust runs, because:**";
    for (size_t k = 0; k < r.trust_reasons.size(); ++k) md << (k ? "; " : " ") << r.trust_reasons[k];
    md << ".\n\n";
  }
  if (r.flaky > 0)
    md << "**Warning: the engine is flaky.** " << r.flaky << " check(s) of the search gave different verdicts across their "
       << r.repeat << " runs on the same model (`--repeat`): a reproducer of a flaky engine may not be real; run `reduce check` on "
       << "it with `--confirm 10` before filing it.\n\n";
}

// Probe models that share nothing with this one and fail the same way: said beside the reproducer.
void write_probes(const ReductionReport& r, std::ostream& md) {
  if (!r.probes.any_same()) return;
  md << (r.setup_suspect ? "**Warning: this reproducer may show the engine's setup, not the model.** A probe model that "
                           "shares no name, type or shape with it fails the same way:"
                         : "**Probe models** (they share no name, type or shape with the model; one fails the same way, so the "
                           "engine's setup may play a part):");
  for (const auto& line : r.probes.lines()) md << "\n- " << line;
  md << "\n\n";
}

void write_what_does_not_matter(const ReductionReport& r, std::ostream& md) {
  if (!r.filled_weights.empty()) {
    md << "**Weights that do not matter** (filled with one value, the failure stays):";
    for (const auto& [name, value] : r.filled_weights) md << " `" << name << "` = " << format_number(value) << ";";
    md << "\n\n";
  }
  if (!r.dropped_attributes.empty()) {
    md << "**Attributes that do not matter** (removed, the failure stays):";
    for (const auto& d : r.dropped_attributes) md << " `" << d << "`";
    md << "\n\n";
  }
}

// The scripts that need no reduce: what to run, and what it needs.
void write_reproduction(const ReductionReport& r, std::ostream& md) {
  if (!r.reproduction_scripts.empty()) {
    md << "**Without reduce:**";
    for (const auto& s : r.reproduction_scripts)
      if (s == "repro.py") md << " `python3 repro.py`";
      else if (s == "repro.mjs") md << " `node repro.mjs`";
      else if (s == "repro.sh") md << " `sh repro.sh`";
    md << " (each prints the engine release it loaded and what differs; exit 1 it fails the way recorded, 0 it passes, "
          "3 it fails another way, 2 it cannot run; data in";
    for (const auto& d : r.reproduction_data) md << " `" << d << "`";
    md << (r.reproduction_data.empty() ? " `inputs/`, `expected/`" : "")
       << (r.reproduction_standalone ? "; each also carries them, so one file pasted alone reproduces" : "") << ").\n\n";
  }
  if (!r.reproduction_issue.empty())
    md << "**To file it:** `" << r.reproduction_issue << "` is the engine's bug template filled in, the script inline.\n\n";
  if (!r.reproduction_note.empty()) md << "**Not written:** " << r.reproduction_note << "\n\n";
}

// The stored model as text (reproducer_section.h) and what the bundle weighs.
void write_reproducer(const ReductionReport& r, std::ostream& md) {
  if (r.reproducer.empty()) return;
  md << "**Reproducer** (`model.onnx` with its weights " << byte_size_text(r.model_bytes) << "; the bundle "
     << byte_size_text(r.bundle_bytes) << reproducer_storage_note(r) << "):\n\n" << r.reproducer << "\n";
}

void write_reproduce(const ReductionReport& r, std::ostream& md) {
  // Expected values given by a file are in expected/: the check compares with them, not the reference.
  const bool given = !r.expected_source.empty();
  md << "**Reproduce:** `" << r.reproducer_model << "` with `inputs/input_K.pb`"
     << (r.reproducer_model != "model.onnx" ? " (the model as `" + r.reproducer_engine + "` ran it: it fails there as it is; `model.onnx` is its FP32 form)" : std::string())
     << "; expected values ("
     << (given ? "from `" + r.expected_source + "`, the rest from reference `" + r.reference + "`"
               : "reference `" + r.reference + "`")
     << ") in `expected/`, the engine's in `actual/`.\n\n```sh\n" << r.command << "\n"
     << reduce_check_line(r) << "\n```\n\n";
  write_reproduction(r, md);
  // The bug templates' order: platform and OS, then the engine's release and execution provider.
  md << "**Environment:** " << r.environment << "\n\n";
  md << "**Engine:** `" << r.engine << "`" << (r.engine_release.empty() ? "" : " (" + r.engine_release + ")")
     << ", reference `" << r.reference << "`, tolerance atol "
     << format_number(r.tolerance.atol) << " rtol " << format_number(r.tolerance.rtol) << " ("
     << to_string(r.tolerance.stat) << describe_element_type_tolerances(r.tolerance) << ")\n\n";
  // A preset (`trt`) runs a command: show it, so that the reproducer can be run without `reduce`.
  if (r.engine_spec)
    if (const std::string line = preset_command_line(*r.engine_spec); !line.empty())
      md << "**Engine command:** `" << line << "`\n\n";
  if (r.timing_cache_builds > 0)
    md << "**Timing cache:** " << r.timing_cache_builds << " engine builds shared " << r.timing_cache_files
       << " TensorRT timing cache file(s), one build per file at a time (`--no-timing-cache` turns it off).\n\n";
  if (r.polygraphy_files)
    md << "**Polygraphy:** the same inputs and expected values as Polygraphy files:\n\n```sh\n"
       << "polygraphy run model.onnx --trt --load-inputs inputs.json --load-outputs expected.json\n```\n\n";
  else if (!r.polygraphy_files_note.empty())
    md << "**Polygraphy:** no inputs.json/expected.json: " << r.polygraphy_files_note << "\n\n";
  if (r.renamed_nodes > 0)
    md << "**Renamed:** " << r.renamed_nodes << " node(s) had the name of an earlier node and were renamed `NAME_K` "
       << "before the search, so that every node name here means one node.\n\n";
  const ControlFlowReport& cf = r.control_flow;
  if (cf.inlined_if > 0 || cf.unrolled_loops > 0) {
    md << "**Control flow:** the model as given has " << cf.given_nodes << " top-level nodes; ";
    if (cf.inlined_if > 0)
      md << cf.inlined_if << " If node(s) were replaced by the branch the recorded run took (" << cf.inlined_body_nodes
         << " nodes out of their bodies)" << (cf.unrolled_loops > 0 ? "; " : "");
    if (cf.unrolled_loops > 0)
      md << cf.unrolled_loops << " Loop/Scan node(s) by the " << cf.unrolled_iterations << " iterations the recorded run made ("
         << cf.unrolled_body_nodes << " nodes out of their bodies)";
    md << ", with the same failure, so those nodes were reduced too.\n\n";
  }
  if (cf.nodes_in_bodies > 0)
    md << "**Bodies:** " << cf.nodes_in_bodies << " nodes remain inside subgraph bodies (If, Loop, Scan) of the reproducer ("
       << cf.body_nodes_removed << " removed from them: their values replaced by others of the same type, or zeros)"
       << (r.one_minimal ? "; each is needed, as each top-level node is" : "") << ".\n\n";
  if (r.samples.count > 1) {
    md << "**Input samples:** " << r.samples.count << "; reduced on #" << r.samples.used << " (`" << r.samples.source
       << "`), the first the original fails on";
    if (r.samples.failing.size() > 1) md << " (it fails on " << r.samples.failing.size() << " of those checked)";
    md << ".\n\n";
  }
}

void write_search(const ReductionReport& r, std::ostream& md) {
  if (!r.reduced_errors.empty()) {
    md << "**Errors of the reduced model:**\n\n";
    print_output_table(r.reduced_errors, md);
    md << "\n";
  }
  md << "**Search:** " << r.checks << " checks (" << r.engine_runs << " engine runs in " << r.rounds
     << " rounds of waiting for a verdict, " << r.cache_hits
     << " cache hits, " << r.slipped << " slipped, " << r.invalid << " invalid"
     << (r.refused_by_checker > 0 ? " (" + std::to_string(r.refused_by_checker) + " refused by ONNX's checker)" : "")
     << (r.repeat > 1 ? ", each the majority of " + std::to_string(r.repeat) + " runs, " + std::to_string(r.flaky) + " flaky" : "")
     << ") in " << format_number(r.seconds)
     << " s with -j " << r.jobs << ", strategy " << r.strategy << "; of the engine runs, "
     << r.runs_spent.confirmation << " confirmed the reproducer, " << r.runs_spent.probes << " ran probe models and "
     << r.runs_spent.bundle << " checked the bundle's model.\n\n";
  if (r.first_small)
    md << "**First small reproducer:** " << r.first_small->nodes << " nodes (within twice the final size) after "
       << format_number(r.first_small->seconds) << " s and " << r.first_small->engine_runs << " engine runs.\n\n";
  if (!r.passes.empty()) {
    md << "**Checks per pass:**";
    for (size_t k = 0; k < r.passes.size(); ++k)
      md << (k ? ", " : " ") << r.passes[k].name << " " << r.passes[k].checks << " (" << r.passes[k].successes << " kept)";
    md << ".\n\n";
  }
  if (r.simplify_budget_reached && *r.simplify_runs_max == 0)
    md << "**Not simplified** (`--simplify-runs 0`, the default): the node set is certified as usual; cut values "
          "may be frozen as constants, shapes shrunk, weights filled and attributes dropped with "
          "`--simplify-runs all`.\n\n";
  else if (r.simplify_budget_reached)
    md << "**Simplification stopped** after " << r.simplify_runs << " engine run" << (r.simplify_runs == 1 ? "" : "s")
       << " (`--simplify-runs " << *r.simplify_runs_max
       << "`): the node set is certified as usual; weights, shapes and attributes may simplify further with "
          "`--simplify-runs all`.\n\n";
  if (r.budget_reached)
    md << "**Engine-run budget reached** (`--max-engine-runs " << r.engine_run_budget
       << "`): this is the best reproducer found so far, checked again but **not certified 1-minimal**; a run without "
          "the budget (or `--resume`) goes on from it.\n\n";
}

// Whether the exact reduced-precision reference shows the same error (RoundingCheck).
void write_rounding(const ReductionReport& r, std::ostream& md) {
  const RoundingCheck& c = r.rounding;
  if (!c.checked) return;
  if (c.explained)
    md << "**" << c.precision << " rounding:** the exact " << c.precision << " reference (`" << c.engine
       << "`: the model converted to " << c.precision << " at the ONNX level, each op rounded as the type says) fails "
       << "the same way on this reproducer (" << c.verdict << "). The error is what " << c.precision
       << " gives on this subgraph, not a bug of the engine: keep these nodes in FP32 (`reduce precision` finds the "
          "fewest).\n\n";
  else
    md << "**Not " << c.precision << " rounding alone:** the exact " << c.precision << " reference (`" << c.engine
       << "`) gives " << (c.verdict == "pass" ? std::string("the expected values") : "another verdict (" + c.verdict + ")")
       << " on this reproducer, so the error is the engine's own.\n\n";
}

}  // namespace

std::string reduce_check_line(const ReductionReport& r) {
  const bool given = !r.expected_source.empty();
  // Specs always quoted: `cmd:` templates hold spaces and braces.
  auto quoted = [](const std::string& s) {
    const std::string w = shell_word(s);
    return w.starts_with('\'') ? w : "'" + w + "'";
  };
  std::string line = "reduce check model.onnx --engine " + quoted(r.bundle_engine.empty() ? r.engine : r.bundle_engine) +
                     (r.reference != "ref" ? " --reference " + quoted(r.reference) : std::string()) + " --inputs inputs" +
                     (given ? " --expected expected" : "");
  // What decided the verdict: tolerances given (the defaults follow the engine and the element
  // types by themselves), the statistic, and the check options.
  const Tolerance& t = r.tolerance;
  auto exact = [](double v) { return nlohmann::json(v).dump(); };  // the shortest form that reads back the same
  if (!t.by_element_type) line += " --atol " + exact(t.atol) + " --rtol " + exact(t.rtol);
  if (t.stat != ErrorStat::Elemwise) line += std::string(" --check-error-stat ") + to_string(t.stat);
  if (t.stat == ErrorStat::Quantile) line += " --error-quantile " + exact(t.quantile);
  for (const auto& regex : r.fail_regexes) line += " --fail-regex " + shell_word(regex);
  for (int code : r.fail_codes) line += " --fail-code " + std::to_string(code);
  for (int code : r.ignore_fail_codes) line += " --ignore-fail-code " + std::to_string(code);
  return line;
}

std::string report_markdown(const ReductionReport& r) {
  std::ostringstream md;
  const RoundingCheck& rounding = r.rounding;
  md << "# " << (rounding.explained ? rounding.precision + " rounding, not an engine bug: " : std::string())
     << to_string(r.failure.kind) << " on `" << r.engine << "`\n\n";
  write_rounding(r, md);
  md << "**Failure:** " << r.failure.to_string() << "\n\n";
  if (!r.failure.message.empty()) md << "```\n" << shown_message(r.failure.message) << "\n```\n\n";
  write_reduced_line(r, md);
  write_probes(r, md);
  write_what_does_not_matter(r, md);
  write_reproducer(r, md);
  write_reproduce(r, md);
  write_search(r, md);
  md << r.error_origin;
  // The PNG where there is one: GitHub issues and most trackers take PNG, not SVG.
  if (r.graph_png) md << "![reduced graph](graph.png)" << (r.graph_svg ? " ([SVG](graph.svg))" : "") << "\n";
  else if (r.graph_svg) md << "![reduced graph](graph.svg)\n";
  else md << "(graph.dot: install Graphviz `dot` for a picture)\n";
  return md.str();
}

}  // namespace reduce
