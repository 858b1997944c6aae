// CandidateMaterializer: makes a candidate concrete (its model, inputs and expected outputs) from the
// original model, core's extraction and the values recorded on the reference.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <string>
#include <utility>
#include <vector>

#include "core/candidate.h"
#include "core/extract.h"
#include "core/model.h"
#include "core/tensor_file.h"
#include "engine/engine.h"
#include "oracle/recorded_values.h"

namespace reduce {

// A candidate made concrete: what a bundle holds and what an engine receives.
struct CandidateRun {
  Model model;
  std::vector<NamedTensor> inputs;    // graph inputs in declaration order
  std::vector<NamedTensor> expected;  // reference values of the outputs, in output order
};

class CandidateMaterializer {
 public:
  // Everything given must outlive the materializer. With `outputs_optional` (a check: script
  // decides alone) an output without a recorded value is left out of `expected` instead of being
  // an error.
  CandidateMaterializer(const Model& model, const Extractor& extractor, const RecordedValues& recorded,
                        Engine& reference, bool outputs_optional)
      : model_(model), extractor_(extractor), recorded_(recorded), reference_(reference),
        outputs_optional_(outputs_optional), constant_fed_(constant_fed_values(model.graph)),
        whole_is_file_(whole_is_file(model)) {}

  // Values of `graph` computed from its weights alone: no graph input reaches them, and no random
  // op, op of another domain or subgraph body makes them. A candidate that cuts one reads it as a
  // weight (its recorded value), as the original does, not as an input: an engine that folds or
  // needs a constant there sees one, and no Identity or Reshape of a weight has to stay for it.
  static std::unordered_set<std::string> constant_fed_values(const Graph& graph);

  // The candidate's model, inputs and expected outputs: weights shared with the original, cut
  // inputs viewing the recorded values (nothing large is copied). With reduced input shapes,
  // filled weights or dropped attributes the recorded outputs no longer apply and the reference
  // computes them. The whole model, still as its file says, is the model itself: engines get the
  // user's file as given (Model::source). Thread-safe.
  Expected<CandidateRun> materialize(const Candidate& candidate) const;

 private:
  static bool whole_is_file(const Model& model);
  Expected<CandidateRun> materialize_file() const;
  // A filled weight, shared with the candidates in flight that fill the same weight with the same value.
  Expected<Tensor> shared_fill(const std::string& name, const Tensor& like, double value) const;

  const Model& model_;
  const Extractor& extractor_;
  const RecordedValues& recorded_;
  Engine& reference_;
  const bool outputs_optional_;
  const std::unordered_set<std::string> constant_fed_;
  const bool whole_is_file_;  // the model is still its file (source_bytes)

  // Filled weights of the candidates in flight, by (initializer, value): candidates that fill the
  // same weight with the same value share one tensor (a 64 MiB weight filled with ones, twice at
  // -j 2). Not kept alive here: a fill lives as long as a candidate's model holds it.
  struct HeldFill {
    std::weak_ptr<const void> owner;
    const std::byte* data = nullptr;
    DType dtype = DType::Float;
    Shape shape;
  };
  mutable std::mutex fills_mutex_;
  mutable std::map<std::pair<std::string, uint64_t>, HeldFill> fills_;  // value's bits: -0 is not +0
};

}  // namespace reduce
