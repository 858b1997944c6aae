// Polygraphy's JSON data files, read and written with nlohmann-json; arrays are .npy images in base64.
#include "core/polygraphy_json.h"

#include <nlohmann/json.hpp>

#include "core/mapped_file.h"

namespace reduce {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

constexpr std::string_view kBase64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The value of one base64 digit, or -1.
int base64_digit(char c) {
  const auto p = kBase64.find(c);
  return p == std::string_view::npos ? -1 : static_cast<int>(p);
}

// Strict RFC 4648 base64 (Python's base64.b64encode, which Polygraphy uses): length a multiple of 4,
// '=' padding only at the end.
Expected<std::string> decode_base64(const std::string& text) {
  if (text.size() % 4 != 0) return make_error("base64 text of " + std::to_string(text.size()) + " characters (not a multiple of 4)");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    size_t pad = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0 || (v[k] = base64_digit(c)) < 0) return make_error("invalid base64 at character " + std::to_string(i + k));
    }
    const uint32_t bits = (static_cast<uint32_t>(v[0]) << 18) | (static_cast<uint32_t>(v[1]) << 12) |
                          (static_cast<uint32_t>(v[2]) << 6) | static_cast<uint32_t>(v[3]);
    out.push_back(static_cast<char>(bits >> 16));
    if (pad < 2) out.push_back(static_cast<char>((bits >> 8) & 0xff));
    if (pad < 1) out.push_back(static_cast<char>(bits & 0xff));
  }
  return out;
}

std::string encode_base64(const std::string& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t bits = 0;
    for (size_t k = 0; k < 3; ++k) bits = (bits << 8) | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    for (size_t k = 0; k < 4; ++k) out.push_back(k <= n ? kBase64[(bits >> (18 - 6 * k)) & 63] : '=');
  }
  return out;
}

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
