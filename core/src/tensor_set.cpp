// Reading tensor sets from files and folders, and binding them to a graph's inputs.
#include "core/tensor_set.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <unordered_set>

namespace reduce {

namespace fs = std::filesystem;

namespace {

// K of "<prefix>_K.pb", or -1.
long numbered_index(const std::string& filename, std::string_view prefix) {
  const std::string head = std::string(prefix) + "_";
  if (filename.size() <= head.size() + 3 || filename.compare(0, head.size(), head) != 0) return -1;
  if (filename.substr(filename.size() - 3) != ".pb") return -1;
  const std::string digits = filename.substr(head.size(), filename.size() - head.size() - 3);
  long k = -1;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
  return ec == std::errc() && p == digits.data() + digits.size() ? k : -1;
}

Expected<std::vector<NamedTensor>> read_folder(const fs::path& dir, std::string_view prefix) {
  std::vector<std::pair<long, fs::path>> numbered;
  std::vector<fs::path> npys;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (long k = numbered_index(name, prefix); k >= 0) numbered.emplace_back(k, entry.path());
    else if (entry.path().extension() == ".npy") npys.push_back(entry.path());
  }
  if (ec) return Error{dir.string(), "cannot list folder: " + ec.message()};
  std::vector<NamedTensor> out;
  if (!numbered.empty()) {
    std::sort(numbered.begin(), numbered.end());
    for (size_t i = 0; i < numbered.size(); ++i) {
      if (numbered[i].first != static_cast<long>(i))
        return Error{dir.string(), "missing " + std::string(prefix) + "_" + std::to_string(i) + ".pb"};
      REDUCE_ASSIGN(NamedTensor t, read_tensor_pb(numbered[i].second));
      out.push_back(std::move(t));
    }
    return out;
  }
  std::sort(npys.begin(), npys.end());
  for (const auto& p : npys) {
    REDUCE_ASSIGN(Tensor t, read_npy(p));
    out.push_back({p.stem().string(), std::move(t)});
  }
  return out;  // empty is valid: a model without runtime inputs is fed an empty folder
}

}  // namespace

Expected<std::vector<NamedTensor>> read_tensor_set(const fs::path& path, std::string_view prefix) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return read_folder(path, prefix);
  if (!fs::exists(path, ec)) return Error{path.string(), "no such file or folder"};
  const auto ext = path.extension();
  if (ext == ".npz") return read_npz(path);
  if (ext == ".npy") {
    REDUCE_ASSIGN(Tensor t, read_npy(path));
    return std::vector<NamedTensor>{{path.stem().string(), std::move(t)}};
  }
  if (ext == ".pb") {
    REDUCE_ASSIGN(NamedTensor t, read_tensor_pb(path));
    return std::vector<NamedTensor>{std::move(t)};
  }
  return Error{path.string(), "not a tensor file (.npz, .npy, .pb) or folder"};
}

std::vector<const ValueInfo*> runtime_inputs(const Graph& graph) {
  std::vector<const ValueInfo*> out;
  for (const auto& vi : graph.inputs)
    if (!graph.find_initializer(vi.name)) out.push_back(&vi);
  return out;
}

Expected<std::vector<NamedTensor>> bind_inputs(const Graph& graph, std::vector<NamedTensor> tensors,
                                               const std::string& source) {
  const auto inputs = runtime_inputs(graph);
  std::unordered_set<std::string> declared;
  for (const auto& vi : graph.inputs) declared.insert(vi.name);
  const bool by_name = std::all_of(tensors.begin(), tensors.end(), [&](const NamedTensor& t) {
    return !t.name.empty() && declared.count(t.name);
  });
  if (by_name) {
    std::set<std::string> seen;
    for (const auto& t : tensors)
      if (!seen.insert(t.name).second) return Error{source, "input '" + t.name + "' is given twice"};
    return tensors;
  }
  // Positional: only when no tensor names a value the model does not have.
  for (const auto& t : tensors)
    if (!t.name.empty() && !declared.count(t.name) && tensors.size() > 1)
      return Error{source, "the model has no input named '" + t.name + "'"};
  if (tensors.size() > inputs.size())
    return Error{source, std::to_string(tensors.size()) + " tensors for " + std::to_string(inputs.size()) +
                                  " model inputs"};
  for (size_t i = 0; i < tensors.size(); ++i) tensors[i].name = inputs[i]->name;
  return tensors;
}

}  // namespace reduce
