// Layerwise comparison (every value of the full model against the recorded reference) and the
// input-binding diagnosis (does a permutation of same-typed inputs make the engine agree?).
#include <algorithm>
#include <unordered_map>

#include "oracle/oracle.h"

namespace reduce {

Expected<std::vector<Oracle::LayerError>> Oracle::compare_layers(const std::atomic<bool>* cancel) {
  if (!engine_under_test()) return make_error("a check: script gives no values to compare layer by layer");
  const Model& model = *model_;
  REDUCE_ASSIGN(auto prepared, engine_under_test()->prepare(model));
  TensorMap feed;
  for (const auto& in : inputs_) feed[in.name] = in.tensor;
  RunOptions ro;
  ro.cancel = cancel;
  std::vector<std::pair<size_t, std::string>> values;
  for (size_t i : extractor_->index().topological_order())
    for (const auto& v : model.graph.nodes[i].outputs)
      if (!v.empty() && recorded_->find(v)) {
        ro.outputs.push_back(v);
        values.emplace_back(i, v);
      }
  // Compared as the engine hands them over and let go: never every activation twice.
  std::unordered_map<std::string, OutputComparison> compared;
  REDUCE_TRY(run_streaming(*prepared, feed, ro, [&](const std::string& name, Tensor value) -> Status {
    const Tensor* expected = recorded_->find(name);
    if (!expected) return {};
    compared.emplace(name, compare_tensors(name, value, *expected, options_.tolerance));
    recorded_->release_pages(*expected);
    return {};
  }));
  for (const auto& in : inputs_) recorded_->release_pages(in.tensor);
  std::vector<LayerError> out;
  for (const auto& [node, name] : values) {
    auto it = compared.find(name);
    if (it == compared.end()) continue;
    out.push_back({node, name, std::move(it->second)});
  }
  return out;
}

std::optional<std::map<std::string, std::string>> Oracle::diagnose_input_binding(const std::atomic<bool>* cancel,
                                                                                size_t max_permutations) {
  if (!engine_under_test() || inputs_.size() < 2) return std::nullopt;
  // Groups of inputs that an engine could confuse: same dtype and shape.
  std::map<std::pair<int, Shape>, std::vector<size_t>> groups;
  for (size_t k = 0; k < inputs_.size(); ++k)
    groups[{static_cast<int>(inputs_[k].tensor.dtype()), inputs_[k].tensor.shape()}].push_back(k);
  std::vector<std::vector<size_t>> swappable;
  for (auto& [key, members] : groups)
    if (members.size() >= 2) swappable.push_back(members);
  if (swappable.empty()) return std::nullopt;

  auto prepared = engine_under_test()->prepare(*model_);
  if (!prepared) return std::nullopt;
  std::vector<NamedTensor> expected;
  for (const auto& vi : model_->graph.outputs)
    if (const Tensor* t = recorded_->find(vi.name)) expected.push_back({vi.name, *t});

  // Odometer over the permutations of every group; the identity is skipped.
  std::vector<std::vector<size_t>> perms = swappable;
  size_t tried = 0;
  auto advance = [&] {
    for (auto& p : perms)
      if (std::next_permutation(p.begin(), p.end())) return true;
    return false;
  };
  while (advance() && tried++ < max_permutations) {
    std::map<std::string, std::string> mapping;
    TensorMap feed;
    for (const auto& in : inputs_) feed[in.name] = in.tensor;
    for (size_t g = 0; g < swappable.size(); ++g)
      for (size_t j = 0; j < swappable[g].size(); ++j) {
        const auto& to = inputs_[swappable[g][j]];
        const auto& from = inputs_[perms[g][j]];
        feed[to.name] = from.tensor;
        if (to.name != from.name) mapping[to.name] = from.name;
      }
    RunOptions ro;
    ro.cancel = cancel;
    auto got = (*prepared)->run(feed, ro);
    if (cancel && cancel->load()) return std::nullopt;
    if (!got) continue;
    bool agree = !expected.empty();
    for (const auto& e : expected) {
      auto it = got->find(e.name);
      if (it == got->end() || !compare_tensors(e.name, it->second, e.tensor, options_.tolerance).passed) {
        agree = false;
        break;
      }
    }
    if (agree) return mapping;
  }
  return std::nullopt;
}

}  // namespace reduce
