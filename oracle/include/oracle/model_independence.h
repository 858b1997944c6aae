// Whether a failure depends on the model at all: probe models that share nothing with it (no name,
// type, shape or value of its own) run on the engine under test, and what their verdicts say.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "oracle/oracle.h"

namespace reduce {

// A model of our own, with its inputs and expected outputs, and a few words saying what it is.
struct ProbeModel {
  std::string description;  // "Identity of a float32[1,4] input"
  CandidateRun run;
};

// Two probes of different structure: an Identity of one input, and a Relu of an Add of that input
// and a weight (the same input and output: an engine that echoes its command line says the same).
// Fresh names (an engine or check that keys on the model's node, value or graph names cannot tell
// them from any other model), float32 values of rank 2 that FP16, BF16 and FP8 hold exactly (an
// engine that lowers precision computes them exactly), the original's IR version and default-domain
// opset (an engine refusing those refuses the probes too: see format_probe).
std::vector<ProbeModel> neutral_probes(const Model& original);

// The Identity probe at IR version 7, opset 13, which every engine we know reads; nullopt when the
// original already has that format. Run when every neutral probe fails the same way: passing it
// means the engine refuses the model's format, not its graph.
std::optional<ProbeModel> format_probe(const Model& original);

enum class ProbeConclusion {
  NotProbed,         // the original passes, or --allow-model-independent
  ModelDependent,    // no probe fails the same way: reduce
  Mixed,             // some do, some do not: reduce, and say so (a tiny reproducer may be the setup's)
  ModelIndependent,  // every probe fails the same way: nothing to reduce
  FormatRefused,     // ... and the Identity probe passes in an older format: the IR version/opset is refused
};
const char* to_string(ProbeConclusion conclusion);  // "not probed", "model-dependent", "mixed", ...

struct ProbeResult {
  std::string model;  // ProbeModel::description
  Verdict verdict;
  SignatureMatch match = SignatureMatch::Pass;  // against the original's failure
};

struct ModelIndependence {
  ProbeConclusion conclusion = ProbeConclusion::NotProbed;
  std::vector<ProbeResult> probes;  // in the order they ran (the format probe last)
  std::string format;               // FormatRefused: "IR version 10, opset 21"
  bool cancelled = false;           // stopped before a conclusion: none is drawn

  bool any_same() const;
  // One line per probe: "Identity of a float32[1,4] input: fails the same way (error: ...)".
  std::vector<std::string> lines() const;
};

// Runs the probes on the oracle's engine (its target set to the original's failure). After an
// error, a crash or a timeout both neutral probes run (an engine may pass an Identity it elides and
// fail at its first real kernel); after a mismatch or non-finite values one runs, and the second
// only when the first fails the same way (an engine whose every answer is wrong). Each run counts
// as an engine run; none is cached. `ran`: verdicts of the first neutral probes, run before (by
// run_neutral_probes), used in their place; one the order above would not have asked for is left
// out of the conclusion (its run still counted).
ModelIndependence probe_model_independence(Oracle& oracle, const std::atomic<bool>* cancel, std::vector<Verdict> ran = {});

// Every neutral probe at once, each on a thread of its own, before the oracle's target is known
// (beside the original's check, with several slots: the probes then cost no round of waiting).
// Needs OracleOptions::repeat 1: a repeated run's majority is judged against the target.
std::vector<Verdict> run_neutral_probes(Oracle& oracle, const std::atomic<bool>* cancel);

}  // namespace reduce
