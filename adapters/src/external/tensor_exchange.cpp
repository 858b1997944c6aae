// Input and output folders shared by the `cmd:` engine and the worker of isolated engines.
#include "external/tensor_exchange.h"

#include <charconv>
#include <set>

#include "core/tensor_set.h"

namespace reduce {

namespace fs = std::filesystem;

namespace {

// K of "output_K" (a file stem), or -1.
long output_index(const std::string& stem) {
  const std::string head = "output_";
  if (stem.size() <= head.size() || stem.compare(0, head.size(), head) != 0) return -1;
  long k = -1;
  auto [p, ec] = std::from_chars(stem.data() + head.size(), stem.data() + stem.size(), k);
  return ec == std::errc() && p == stem.data() + stem.size() ? k : -1;
}

}  // namespace

Status write_input_folder(const fs::path& dir, const Graph& graph, const TensorMap& inputs) {
  std::set<std::string, std::less<>> declared;
  size_t k = 0;
  for (const ValueInfo* vi : runtime_inputs(graph)) {
    declared.insert(vi->name);
    const auto it = inputs.find(vi->name);
    if (it == inputs.end()) continue;
    REDUCE_TRY(write_tensor_pb(dir / ("input_" + std::to_string(k++) + ".pb"), vi->name, it->second));
  }
  for (const auto& [name, tensor] : inputs)
    if (!declared.count(name)) return make_error("the model has no runtime input named '" + name + "'");
  return {};
}

Status write_output_folder(const fs::path& dir, const std::vector<std::string>& outputs, const TensorMap& values) {
  for (size_t k = 0; k < outputs.size(); ++k) {
    const auto it = values.find(outputs[k]);
    if (it == values.end()) return make_error("no value computed for output '" + outputs[k] + "'");
    REDUCE_TRY(write_tensor_pb(dir / ("output_" + std::to_string(k) + ".pb"), outputs[k], it->second));
  }
  return {};
}

Expected<TensorMap> read_output_folder(const fs::path& dir, const std::vector<std::string>& outputs,
                                       const std::string& who) {
  const std::set<std::string, std::less<>> wanted(outputs.begin(), outputs.end());
  auto tensors = read_tensor_set(dir, "output");
  if (!tensors) return make_error(who + " wrote no outputs (" + tensors.error().what + ")");
  if (tensors->empty() && !outputs.empty())
    return make_error(who + " wrote no outputs (no output_K.pb or .npy files in " + dir.string() + ")");
  TensorMap values;
  for (size_t i = 0; i < tensors->size(); ++i) {
    NamedTensor& t = (*tensors)[i];
    std::string name;
    if (wanted.count(t.name)) {
      name = t.name;
    } else {
      // .pb files come ordered by K with their own (unknown or empty) names; .npy files by stem.
      const long k = t.name.empty() || !fs::exists(dir / (t.name + ".npy")) ? static_cast<long>(i) : output_index(t.name);
      if (k < 0 || static_cast<size_t>(k) >= outputs.size())
        return make_error(who + " wrote an output the model does not have: '" + t.name + "'");
      name = outputs[k];
    }
    if (!values.emplace(name, std::move(t.tensor)).second)
      return make_error(who + " wrote output '" + name + "' twice");
  }
  for (const auto& name : outputs)
    if (!values.count(name))
      return make_error(who + " wrote no value for output '" + name + "' (expected output_K.pb or " + name + ".npy)");
  return values;
}

}  // namespace reduce
