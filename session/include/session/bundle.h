// The reproducer bundle: model.onnx, inputs/, expected/, actual/, report.json, report.md, journal,
// graph.dot/svg, error.svg and bucket.txt (and on request inputs.json, expected.json for Polygraphy) — everything a bug report needs, written so that a half-written
// bundle never looks complete (bucket.txt comes last).
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "oracle/oracle.h"
#include "report/report.h"

namespace reduce {

// What a bundle holds besides the files every bundle has.
struct BundleOptions {
  // inputs.json (Polygraphy's --load-inputs: one feed dict) and expected.json (RunResults of the
  // reference, --load-outputs), next to inputs/ and expected/, which every bundle keeps.
  bool polygraphy = false;
  // Fresh runs of the reproducer on the engine (never the cache) before it is called one; the
  // first one's outputs are actual/ (ReductionReport::confirm_runs, confirmed). 0 (`--confirm`
  // not given): confirm_runs_for() decides from the signs the engine gave.
  int confirm = 0;
};

// A fresh run of a candidate on the engine (Oracle::rerun, never the cache) with its outputs, made
// before the bundle is written (while certify checked the candidate): the bundle's first run.
struct FreshRun {
  Candidate candidate;
  Verdict verdict;
  TensorMap actual;
  size_t started_at_round = 0;  // the search's rounds when it started (ReduceResult::rounds)
  // The trust runs made beside it, when the reduction was expected to want them (a candidate of
  // 1-2 nodes, slots for them all): more fresh runs, and the neutral probe models again.
  std::vector<Verdict> again;
  std::vector<Verdict> probes;
};

// The fresh runs `confirm` asks for: itself when given, else 1, or kTinyConfirmRuns once the
// reduction has a reason to doubt the engine (ReductionReport::trust_reasons: checks whose runs
// disagreed, a search whose verdicts contradict each other, a probe model that failed, --repeat, or
// a first fresh run that did not fail the same way). Trust costs runs only where the engine gave a
// sign (issue 69; bench/RESULTS.md, "Trust runs where the engine gives a reason").
inline constexpr int kTinyConfirmRuns = 3;
int confirm_runs_for(int confirm, const ReductionReport& report);

// Op type -> count, without Constant nodes.
std::map<std::string, size_t> op_type_counts(const Graph& graph);

// The folder policy of `reduce -o DIR`, checked before any work. DIR may be missing, empty, or an
// earlier bundle: a folder holding only bundle files (model.onnx, model.data, inputs/, expected/,
// actual/, report.json, report.md, graph.dot, graph.svg, error.svg, journal, bucket.txt, inputs.json,
// expected.json and their hidden
// temporaries) of which at least one is `journal` (written with every best-so-far model) or
// `report.json` (written with every finished bundle). Refused: DIR when `model` lies inside it (the
// bundle would replace it), a file, or any other non-empty folder. `resume` needs an earlier bundle.
// Errors name DIR.
Status check_bundle_folder(const std::filesystem::path& dir, const std::filesystem::path& model, bool resume);

// How the bundle's model holds the weights it reads from the original's external data. During the
// search (each best-so-far model): LinkOriginal, a hard link of the original's data file
// (`model.original.data`), so that an improvement writes no weight. The finished bundle: Own, only
// the bytes the reproducer reads, inline or in `model.data`, and the link removed (a reproducer
// that reads more than half of a data file of over 1 GiB, an interrupted search of a large model,
// keeps the link: a copy would double the disk for little gain). `--resume` needs no link: it
// reads the journal and the original model.
enum class BundleWeights { LinkOriginal, Own };

// Writes the reduced model and its inputs (the "best so far" part), atomically per file.
Status write_bundle_model(const std::filesystem::path& dir, const CandidateRun& run,
                          BundleWeights weights = BundleWeights::LinkOriginal);

// Writes the whole bundle for `candidate`: runs it once more on the engine for `actual/`. `report`
// comes with the search facts; the reproducer's facts (graph, verdict, engine) are filled in here.
// `cancel` (Ctrl-C) ends the drawing of graph.svg, never the files a bug report needs.
// With `options.polygraphy`, a tensor Polygraphy cannot hold (bfloat16) leaves the JSON files out
// and says so in report.md; the bundle is written all the same.
// `first`: the first of the confirming runs, already made (counted in report.engine_runs).
Status write_bundle(const std::filesystem::path& dir, Oracle& oracle, const Candidate& candidate,
                    ReductionReport& report, const std::atomic<bool>* cancel = nullptr,
                    const BundleOptions& options = {}, std::optional<FreshRun> first = std::nullopt);

}  // namespace reduce
