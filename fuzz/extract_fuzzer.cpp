// Fuzz harness: candidate extraction over the small real models of corpus/examples. The fuzz input
// picks a model, a node set, explicit outputs and frozen cut values; an extracted model must pass
// validation, serialize, and load again from its bytes.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/candidate.h"
#include "core/extract.h"
#include "core/model_io.h"
#include "core/validate.h"
#include "fuzz_support.h"

namespace {

using namespace reduce;

constexpr const char* kModels[] = {
    "tiny_attention.onnx",
    "attention_softmax_transformer_50.onnx",
    "broadcast_batch1_cnn_50.onnx",
    "conv_bn_eps_cnn_50.onnx",
};

struct Subject {
  Model model;
  std::unique_ptr<Extractor> extractor;
  std::vector<std::string> values;  // every value name of the main graph, for outputs to ask for
};

// The models are loaded once and never changed afterwards (read-only, not state between inputs).
const std::vector<std::unique_ptr<Subject>>& subjects() {
  static const auto all = [] {
    std::vector<std::unique_ptr<Subject>> out;
    for (const char* name : kModels) {
      const std::string path = std::string(REDUCE_SOURCE_DIR) + "/corpus/examples/" + name;
      auto s = std::make_unique<Subject>();
      auto m = load_model(path);
      if (!m) fuzz::invariant_failed("cannot load " + path + ": " + m.error().message());
      s->model = std::move(*m);
      auto x = Extractor::create(s->model);
      if (!x) fuzz::invariant_failed("cannot index " + path + ": " + x.error().message());
      s->extractor = std::make_unique<Extractor>(std::move(*x));
      for (const auto& vi : s->model.graph.inputs) s->values.push_back(vi.name);
      for (const auto& init : s->model.graph.initializers) s->values.push_back(init.name);
      for (const auto& n : s->model.graph.nodes)
        for (const auto& o : n.outputs) s->values.push_back(o);
      out.push_back(std::move(s));
    }
    return out;
  }();
  return all;
}

std::vector<size_t> decode_nodes(fuzz::ByteReader& in, size_t n) {
  std::vector<size_t> nodes;
  switch (in.below(3)) {
    case 0:  // each node kept or not
      for (size_t i = 0; i < n; ++i)
        if (in.flag()) nodes.push_back(i);
      break;
    case 1: {  // a range
      const size_t first = in.below(n), count = 1 + in.below(n - first);
      for (size_t i = first; i < first + count; ++i) nodes.push_back(i);
      break;
    }
    default:  // a few indices, any order, duplicates and out of range allowed
      for (size_t k = in.below(8); k > 0; --k) nodes.push_back(in.below(n + 2));
  }
  return nodes;
}

// A tensor to freeze a cut value with: zeros of its own type and shape, or of another one.
Tensor frozen_value(fuzz::ByteReader& in, const Extractor& x, const std::string& name) {
  const ValueType* t = x.type_of(name);
  Shape shape;
  DType dtype = DType::Float;
  if (t && t->is_tensor() && in.flag()) {
    if (auto d = dtype_from_onnx(t->elem_type)) dtype = *d;
    int64_t count = 1;  // small: a frozen value's contents do not matter here, only its type and shape
    for (const auto& d : t->dims) {
      const int64_t dim = d.is_static() && count * d.value <= 4096 ? d.value : 1;
      count *= std::max<int64_t>(dim, 1);
      shape.push_back(dim);
    }
  } else {
    shape.resize(in.below(3), 2);
  }
  auto tensor = Tensor::allocate(dtype, shape);
  if (!tensor) return Tensor::allocate(DType::Float, {}).value();
  return std::move(*tensor);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::ByteReader in(data, size);
  const auto& all = subjects();
  const Subject& s = *all[in.below(all.size())];
  const Extractor& x = *s.extractor;
  const size_t n = s.model.graph.nodes.size();

  std::vector<size_t> nodes = decode_nodes(in, n);
  ExtractOptions options;
  for (size_t k = in.flag() ? in.below(4) : 0; k > 0; --k)
    options.outputs.push_back(in.flag() ? s.values[in.below(s.values.size())] : in.text(8));
  std::vector<size_t> in_range;
  for (size_t i : nodes)
    if (i < n) in_range.push_back(i);
  const auto boundary = subgraph_boundary(x.index(), index_initializers(s.model.graph), in_range, options.outputs);
  for (const auto& cut : boundary.cut_values())
    if (in.below(4) == 0) options.frozen.emplace(cut, frozen_value(in, x, cut));

  // The candidate of these nodes (canonical: sorted, no duplicates) hashes the same every time.
  Candidate c;
  c.nodes = in_range;
  std::sort(c.nodes.begin(), c.nodes.end());
  c.nodes.erase(std::unique(c.nodes.begin(), c.nodes.end()), c.nodes.end());
  for (const auto& [name, value] : options.frozen) c.frozen.push_back(name);
  c.outputs = options.outputs;
  if (candidate_hash(c) != candidate_hash(Candidate(c))) fuzz::invariant_failed("candidate_hash is not a function");

  auto sub = x.extract(nodes, options);
  if (!sub) return 0;
  if (Status v = validate_model(*sub); !v.ok()) fuzz::invariant_failed("extracted model fails validation: " + v.error().message());
  (void)check_model(*sub);
  auto bytes = serialize_model(*sub);
  if (!bytes) fuzz::invariant_failed("cannot serialize an extracted model: " + bytes.error().message());
  const fuzz::ScratchFolder scratch;
  const auto path = scratch.write("sub.onnx", reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
  auto again = load_model(path);
  if (!again) fuzz::invariant_failed("an extracted model does not load again: " + again.error().message());
  return 0;
}
