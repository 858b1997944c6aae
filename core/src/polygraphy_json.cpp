// Polygraphy's JSON data files, read and written with nlohmann-json; arrays are .npy images in base64.
#include "core/polygraphy_json.h"

#include <nlohmann/json.hpp>

#include "core/base64.h"
#include "core/mapped_file.h"

namespace reduce {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

const Json* member(const Json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

bool has_class(const Json& j, std::string_view cls) {
  const Json* c = member(j, "polygraphy_class");
  return c && c->is_string() && c->get_ref<const std::string&>() == cls;
}

// An ndarray object (or, for outputs, the LazyArray around one).
Expected<Tensor> read_array(const Json& j) {
  const Json* array = &j;
  if (has_class(j, "LazyArray")) {
    array = member(j, "values");
    if (!array) return make_error("a LazyArray without \"values\"");
  }
  if (!has_class(*array, "ndarray")) return make_error("not a Polygraphy ndarray object");
  const Json* data = member(*array, "array");
  if (!data || !data->is_string()) return make_error("an ndarray without an \"array\" string");
  REDUCE_ASSIGN(std::string npy, decode_base64(data->get_ref<const std::string&>()));
  return parse_npy(std::as_bytes(std::span<const char>(npy.data(), npy.size())));
}

// A feed dict {name: array}, in the file's order.
Expected<std::vector<NamedTensor>> read_feed(const Json& feed) {
  if (!feed.is_object()) return make_error("an iteration that is not an object of named arrays");
  std::vector<NamedTensor> out;
  for (const auto& [name, value] : feed.items()) {
    auto t = read_array(value);
    if (!t) return make_error("'" + name + "': " + t.error().what);
    out.push_back({name, std::move(*t)});
  }
  return out;
}

// The iterations of the file's JSON: a list of feed dicts, or RunResults (its first runner's).
Expected<std::vector<std::vector<NamedTensor>>> read_iterations(const Json& doc) {
  const Json* list = &doc;
  bool outputs = false;
  if (has_class(doc, "RunResults")) {
    const Json* runners = member(doc, "lst");
    if (!runners || !runners->is_array() || runners->empty()) return make_error("RunResults without runners");
    const Json& first = (*runners)[0];
    if (!first.is_array() || first.size() != 2 || !first[1].is_array())
      return make_error("RunResults runner is not [name, [iterations]]");
    list = &first[1];
    outputs = true;
  }
  if (!list->is_array()) return make_error("neither a list of feed dicts (--save-inputs) nor RunResults (--save-outputs)");
  if (list->size() > kMaxTensorSamples)
    return make_error("more than " + std::to_string(kMaxTensorSamples) + " iterations");
  std::vector<std::vector<NamedTensor>> out;
  for (size_t k = 0; k < list->size(); ++k) {
    const Json* feed = &(*list)[k];
    if (outputs) {
      feed = member(*feed, "outputs");
      if (!feed) return make_error("iteration " + std::to_string(k) + ": no \"outputs\"");
    }
    auto tensors = read_feed(*feed);
    if (!tensors) return make_error("iteration " + std::to_string(k) + ": " + tensors.error().what);
    out.push_back(std::move(*tensors));
  }
  return out;
}

Expected<Json> array_object(const Tensor& t) {
  REDUCE_ASSIGN(std::string npy, npy_bytes(t));
  Json j = Json::object();
  j["array"] = encode_base64(npy);
  j["polygraphy_class"] = "ndarray";
  return j;
}

Status write_json(const fs::path& path, const Json& doc) { return write_file_atomic(path, doc.dump(4) + "\n"); }

}  // namespace

bool is_polygraphy_json(const fs::path& path) { return path.extension() == ".json"; }

Expected<std::vector<TensorSample>> read_polygraphy_json(const fs::path& path) {
  // base64 is 4/3 of the bytes: room for one largest tensor and its JSON around it.
  REDUCE_ASSIGN(std::string text, read_file(path, max_tensor_bytes() / 3 * 4 + (uint64_t{1} << 20)));
  Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded()) return Error{path.string(), "not valid JSON"};
  auto iterations = read_iterations(doc);
  if (!iterations) return Error{path.string(), iterations.error().what};
  if (iterations->empty()) return Error{path.string(), "no iterations"};
  std::vector<TensorSample> out;
  for (size_t k = 0; k < iterations->size(); ++k)
    out.push_back({path.string() + " iteration " + std::to_string(k), std::move((*iterations)[k])});
  return out;
}

Status write_polygraphy_inputs(const fs::path& path, const std::vector<std::vector<NamedTensor>>& iterations) {
  Json list = Json::array();
  for (const auto& feed : iterations) {
    Json dict = Json::object();
    for (const auto& t : feed) {
      REDUCE_ASSIGN(dict[t.name], array_object(t.tensor));
    }
    list.push_back(std::move(dict));
  }
  return write_json(path, list);
}

Status write_polygraphy_outputs(const fs::path& path, const std::string& runner,
                                const std::vector<std::vector<NamedTensor>>& iterations) {
  Json results = Json::array();
  for (const auto& feed : iterations) {
    Json outputs = Json::object();
    for (const auto& t : feed) {
      Json lazy = Json::object();
      REDUCE_ASSIGN(lazy["values"], array_object(t.tensor));
      lazy["polygraphy_class"] = "LazyArray";
      outputs[t.name] = std::move(lazy);
    }
    Json iteration = Json::object();
    iteration["outputs"] = std::move(outputs);
    iteration["runtime"] = 0.0;
    iteration["runner_name"] = runner;
    iteration["polygraphy_class"] = "IterationResult";
    results.push_back(std::move(iteration));
  }
  Json doc = Json::object();
  doc["lst"] = Json::array({Json::array({runner, std::move(results)})});
  doc["polygraphy_class"] = "RunResults";
  return write_json(path, doc);
}

}  // namespace reduce
