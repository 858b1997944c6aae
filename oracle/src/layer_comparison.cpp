// Layerwise comparison (every value of the full model against the recorded reference) and the
// input-binding diagnosis (does a permutation of same-typed inputs make the engine agree?).
#include "oracle/layer_comparison.h"

#include <algorithm>
#include <unordered_map>

namespace reduce {

Expected<std::vector<LayerError>> compare_layers(Oracle& oracle, const std::atomic<bool>* cancel) {
  REDUCE_ASSIGN(auto prepared, oracle.prepare_whole_model());
  if (!prepared) return make_error("a check: script gives no values to compare layer by layer");
  const Model& model = oracle.model();
  const RecordedValues& recorded = oracle.recorded();
  TensorMap feed;
  for (const auto& in : oracle.inputs()) feed[in.name] = in.tensor;
  RunOptions ro;
  ro.cancel = cancel;
  std::vector<std::pair<size_t, std::string>> values;
  for (size_t i : oracle.extractor().index().topological_order())
    for (const auto& v : model.graph.nodes[i].outputs)
      if (!v.empty() && recorded.find(v)) {
        ro.outputs.push_back(v);
        values.emplace_back(i, v);
      }
  // Compared as the engine hands them over and let go: never every activation twice.
  std::unordered_map<std::string, OutputComparison> compared;
  REDUCE_TRY(run_streaming(*prepared, feed, ro, [&](const std::string& name, Tensor value) -> Status {
    const Tensor* expected = recorded.find(name);
    if (!expected) return {};
    compared.emplace(name, compare_tensors(name, value, *expected, oracle.options().tolerance));
    recorded.release_pages(*expected);
    return {};
  }));
  for (const auto& in : oracle.inputs()) recorded.release_pages(in.tensor);
  std::vector<LayerError> out;
  for (const auto& [node, name] : values) {
    auto it = compared.find(name);
    if (it == compared.end()) continue;
    out.push_back({node, name, std::move(it->second)});
  }
  return out;
}

std::optional<std::map<std::string, std::string>> diagnose_input_binding(Oracle& oracle, const std::atomic<bool>* cancel,
                                                                         size_t max_permutations) {
  const std::vector<NamedTensor>& inputs = oracle.inputs();
  if (inputs.size() < 2) return std::nullopt;
  // Groups of inputs that an engine could confuse: same dtype and shape.
  std::map<std::pair<int, Shape>, std::vector<size_t>> groups;
  for (size_t k = 0; k < inputs.size(); ++k)
    groups[{static_cast<int>(inputs[k].tensor.dtype()), inputs[k].tensor.shape()}].push_back(k);
  std::vector<std::vector<size_t>> swappable;
  for (auto& [key, members] : groups)
    if (members.size() >= 2) swappable.push_back(members);
  if (swappable.empty()) return std::nullopt;

  auto prepared = oracle.prepare_whole_model();
  if (!prepared || !*prepared) return std::nullopt;  // the engine refuses the model, or a check: script
  std::vector<NamedTensor> expected;
  for (const auto& vi : oracle.model().graph.outputs)
    if (const Tensor* t = oracle.recorded().find(vi.name)) expected.push_back({vi.name, *t});

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
    for (const auto& in : inputs) feed[in.name] = in.tensor;
    for (size_t g = 0; g < swappable.size(); ++g)
      for (size_t j = 0; j < swappable[g].size(); ++j) {
        const auto& to = inputs[swappable[g][j]];
        const auto& from = inputs[perms[g][j]];
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
      if (it == got->end() || !compare_tensors(e.name, it->second, e.tensor, oracle.options().tolerance).passed) {
        agree = false;
        break;
      }
    }
    if (agree) return mapping;
  }
  return std::nullopt;
}

}  // namespace reduce
