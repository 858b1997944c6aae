// Input samples: one oracle per sample (each records the reference on its own inputs), and the choice
// of the sample a command goes on with.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/model.h"
#include "core/tensor_set.h"
#include "oracle/oracle.h"

namespace reduce {

// One input sample bound to the model's inputs.
struct InputSample {
  std::string source;  // the file or folder it was read from, or "seed N"
  std::vector<NamedTensor> inputs;
};

// How a command uses several input samples (--inputs given more than once, or a folder of samples).
enum class SampleUse {
  FirstFailing,  // checks samples in order up to the first that fails; goes on with that one (reduce, compare)
  CheckAll,      // checks every sample; goes on with the first that fails (check)
  KeepAll,       // checks every sample and keeps an oracle on each (precision: every sample must pass)
};

// The oracles of a model on its input samples. With a single sample nothing is checked (the
// command does it).
struct SampleOracles {
  std::vector<std::unique_ptr<Oracle>> oracles;  // per sample; null where not kept
  std::vector<std::string> sources;              // per sample: the file or folder, or "seed N"
  std::vector<std::optional<Verdict>> verdicts;  // per sample: the model's verdict, when checked here
  size_t chosen = 0;                             // the sample the command goes on with
  size_t renamed_nodes = 0;                      // nodes renamed NAME_K on load (shared names)

  Oracle& main() const { return *oracles[chosen]; }
  // Every kept oracle, the chosen one first.
  std::vector<Oracle*> kept() const;
  // The samples whose verdict is a failure.
  std::vector<size_t> failing() const;
};

// Creates an oracle on each sample in order (`expected`, when not empty, gives each sample's
// expected values, RecordOptions::given) and, with several samples, checks the whole model on each
// as `use` says: the chosen sample is the first that fails, else the first. Oracles not kept are
// dropped as soon as they are decided, so at most two are alive at once (unless KeepAll).
// `warn` receives one line per given value the reference computes differently. Errors: an oracle
// that cannot be made (named after the sample when there are several, else after `model_source`),
// or "interrupted" when `cancel` is set before the choice is made.
Expected<SampleOracles> create_sample_oracles(const Model& model, const std::string& model_source,
                                              std::vector<InputSample> samples,
                                              std::vector<TensorSample> expected, OracleOptions options, SampleUse use,
                                              const std::atomic<bool>* cancel,
                                              const std::function<void(const std::string&)>& warn = {});

}  // namespace reduce
