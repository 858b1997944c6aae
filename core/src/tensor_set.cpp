// Reading tensor sets from files and folders, and binding them to a graph's inputs.
#include "core/tensor_set.h"

#include "core/narrow_types.h"
#include "core/polygraphy_json.h"

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

// N of "test_data_set_N", or -1.
long test_data_set_index(const std::string& name) {
  const std::string head = "test_data_set_";
  if (name.size() <= head.size() || name.compare(0, head.size(), head) != 0) return -1;
  long k = -1;
  auto [p, ec] = std::from_chars(name.data() + head.size(), name.data() + name.size(), k);
  return ec == std::errc() && p == name.data() + name.size() ? k : -1;
}

// numpy has no bfloat16: .npy files and ONNX test data written by it store bfloat16 values as
// uint16. Such a tensor given for a bfloat16 input is read as the bfloat16 bits it holds. Nor has it
// the narrow types, which .npy holds as int8 (int4, int2) or uint8 (the others; npy.cpp): read as
// the narrow type declared when every value is one of it. Returns why not ("" when fine).
std::string read_raw_bits_as_declared(NamedTensor& t, const ValueInfo& declared) {
  const auto want = dtype_from_onnx(declared.type.elem_type);
  if (!want || *want == t.tensor.dtype()) return "";
  if (*want == DType::BFloat16 && t.tensor.dtype() == DType::UInt16) {
    if (auto bf = Tensor::copy_of(DType::BFloat16, t.tensor.shape(), t.tensor.bytes())) t.tensor = std::move(*bf);
    return "";
  }
  const bool narrow = dtype_is_small_int(*want) || dtype_is_small_float(*want);
  if (!narrow || (t.tensor.dtype() != DType::UInt8 && t.tensor.dtype() != DType::Int8)) return "";
  auto retyped = retype_as_narrow(t.tensor, *want);
  if (!retyped) return "'" + t.name + "' is declared " + std::string(dtype_name(*want)) + ": " + retyped.error().what;
  t.tensor = std::move(*retyped);
  return "";
}

// Why a tensor cannot be bound to an input declared as `declared` ("" when it can): another
// element type, rank, or static dimension. Symbolic and unknown dimensions take any size.
std::string type_mismatch(const NamedTensor& t, const ValueInfo& declared, const char* what = "input") {
  const ValueType& type = declared.type;
  if (!type.is_tensor()) return "";
  const bool dtype_differs = type.elem_type != 0 && type.elem_type != static_cast<int32_t>(t.tensor.dtype());
  bool shape_differs = type.has_shape && type.dims.size() != t.tensor.shape().size();
  for (size_t d = 0; !shape_differs && type.has_shape && d < type.dims.size(); ++d)
    shape_differs = type.dims[d].is_static() && type.dims[d].value != t.tensor.shape()[d];
  if (!dtype_differs && !shape_differs) return "";
  return std::string(what) + " '" + declared.name + "' is " + std::string(dtype_name(t.tensor.dtype())) +
         shape_to_string(t.tensor.shape()) + " but the model declares " + type.to_string();
}

}  // namespace

Expected<std::vector<TensorSample>> read_tensor_samples(const fs::path& path, std::string_view prefix,
                                                        uint64_t max_bytes) {
  std::error_code ec;
  if (is_polygraphy_json(path)) return read_polygraphy_json(path);
  if (!fs::is_directory(path, ec)) {
    REDUCE_ASSIGN(auto tensors, read_tensor_set(path, prefix, max_bytes));
    return std::vector<TensorSample>{{path.string(), std::move(tensors)}};
  }
  std::vector<std::pair<long, fs::path>> sets;
  std::vector<fs::path> archives;
  bool other_tensor_files = false;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    const std::string name = entry.path().filename().string();
    std::error_code kind;
    if (long k = test_data_set_index(name); k >= 0 && entry.is_directory(kind)) sets.emplace_back(k, entry.path());
    else if (entry.path().extension() == ".npz") archives.push_back(entry.path());
    else if (entry.path().extension() == ".npy" || entry.path().extension() == ".pb") other_tensor_files = true;
    if (sets.size() + archives.size() > kMaxTensorSamples)
      return Error{path.string(), "more than " + std::to_string(kMaxTensorSamples) + " input samples"};
  }
  if (ec) return Error{path.string(), "cannot list folder: " + ec.message()};
  std::vector<fs::path> samples;
  if (!sets.empty()) {
    std::sort(sets.begin(), sets.end());
    for (size_t i = 0; i < sets.size(); ++i) {
      if (sets[i].first != static_cast<long>(i))
        return Error{path.string(), "missing test_data_set_" + std::to_string(i)};
      samples.push_back(sets[i].second);
    }
  } else if (!archives.empty() && !other_tensor_files) {
    std::sort(archives.begin(), archives.end());
    samples = archives;
  }
  if (samples.empty()) {  // one sample: the folder itself
    REDUCE_ASSIGN(auto tensors, read_tensor_set(path, prefix, max_bytes));
    return std::vector<TensorSample>{{path.string(), std::move(tensors)}};
  }
  std::vector<TensorSample> out;
  for (const auto& p : samples) {
    REDUCE_ASSIGN(auto tensors, read_tensor_set(p, prefix, max_bytes));
    out.push_back({p.string(), std::move(tensors)});
  }
  return out;
}

Expected<std::vector<NamedTensor>> read_tensor_set(const fs::path& path, std::string_view prefix, uint64_t max_bytes) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return read_folder(path, prefix);
  if (!fs::exists(path, ec)) return Error{path.string(), "no such file or folder"};
  const auto ext = path.extension();
  if (ext == ".npz") return read_npz(path, max_bytes);
  if (ext == ".npy") {
    REDUCE_ASSIGN(Tensor t, read_npy(path));
    return std::vector<NamedTensor>{{path.stem().string(), std::move(t)}};
  }
  if (ext == ".pb") {
    REDUCE_ASSIGN(NamedTensor t, read_tensor_pb(path));
    return std::vector<NamedTensor>{std::move(t)};
  }
  if (is_polygraphy_json(path)) {
    REDUCE_ASSIGN(auto samples, read_polygraphy_json(path));
    if (samples.size() != 1)
      return Error{path.string(), "holds " + std::to_string(samples.size()) + " iterations where one set of tensors is read"};
    return std::move(samples[0].tensors);
  }
  return Error{path.string(), "not a tensor file (.npz, .npy, .pb, Polygraphy .json) or folder"};
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
    for (auto& t : tensors)
      for (const ValueInfo& vi : graph.inputs)
        if (vi.name == t.name) {
          if (std::string why = read_raw_bits_as_declared(t, vi); !why.empty()) return Error{source, why};
          if (std::string why = type_mismatch(t, vi); !why.empty()) return Error{source, why};
        }
    return tensors;
  }
  // Positional: only when no tensor names a value the model does not have.
  for (const auto& t : tensors)
    if (!t.name.empty() && !declared.count(t.name) && tensors.size() > 1)
      return Error{source, "the model has no input named '" + t.name + "'"};
  if (tensors.size() > inputs.size())
    return Error{source, std::to_string(tensors.size()) + " tensors for " + std::to_string(inputs.size()) +
                                  " model inputs"};
  for (size_t i = 0; i < tensors.size(); ++i) {
    tensors[i].name = inputs[i]->name;
    if (std::string why = read_raw_bits_as_declared(tensors[i], *inputs[i]); !why.empty()) return Error{source, why};
    if (std::string why = type_mismatch(tensors[i], *inputs[i]); !why.empty()) return Error{source, why};
  }
  return tensors;
}

Expected<std::vector<NamedTensor>> bind_expected(const Graph& graph, std::vector<NamedTensor> tensors,
                                                  const std::string& source) {
  std::unordered_set<std::string_view> computed;
  for (const Node& n : graph.nodes)
    for (const auto& v : n.outputs)
      if (!v.empty()) computed.insert(v);
  const bool by_name = std::all_of(tensors.begin(), tensors.end(), [](const NamedTensor& t) { return !t.name.empty(); });
  if (!by_name) {
    // Unnamed arrays (a bare .npy, positional .npz entries) are the graph's outputs in order.
    if (tensors.size() > graph.outputs.size())
      return Error{source, std::to_string(tensors.size()) + " expected tensors for " + std::to_string(graph.outputs.size()) +
                               " model outputs"};
    for (size_t i = 0; i < tensors.size(); ++i) tensors[i].name = graph.outputs[i].name;
  }
  std::set<std::string> seen;
  for (auto& t : tensors) {
    if (!computed.count(t.name)) return Error{source, "'" + t.name + "' is not a value computed by a node of the model"};
    if (!seen.insert(t.name).second) return Error{source, "'" + t.name + "' is given twice"};
    if (const ValueInfo* vi = graph.find_value_info(t.name)) {
      if (std::string why = read_raw_bits_as_declared(t, *vi); !why.empty()) return Error{source, why};
      if (std::string why = type_mismatch(t, *vi, "expected value"); !why.empty()) return Error{source, why};
    }
  }
  return tensors;
}

}  // namespace reduce
