// The ONNX conformance runner: test discovery, the exclusion list, output comparison.
#include "conformance/conformance.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <sstream>

#include "core/model_io.h"
#include "core/tensor_set.h"

namespace reduce {

namespace fs = std::filesystem;

namespace {

struct OpExclusion {
  const char* op;
  const char* reason;
};
const OpExclusion kOpExclusions[] = {
#define REDUCE_SKIP_OP(op, reason) {op, reason},
#define REDUCE_SKIP_TEST(name, reason)
#define REDUCE_SKIP_DOMAIN(domain, reason)
#include "exclusions.def"
#undef REDUCE_SKIP_OP
#undef REDUCE_SKIP_TEST
#undef REDUCE_SKIP_DOMAIN
};

struct TestExclusion {
  const char* name;
  const char* reason;
};
const TestExclusion kTestExclusions[] = {
#define REDUCE_SKIP_OP(op, reason)
#define REDUCE_SKIP_TEST(name, reason) {name, reason},
#define REDUCE_SKIP_DOMAIN(domain, reason)
#include "exclusions.def"
#undef REDUCE_SKIP_OP
#undef REDUCE_SKIP_TEST
#undef REDUCE_SKIP_DOMAIN
};

struct DomainExclusion {
  const char* domain;
  const char* reason;
};
const DomainExclusion kDomainExclusions[] = {
#define REDUCE_SKIP_OP(op, reason)
#define REDUCE_SKIP_TEST(name, reason)
#define REDUCE_SKIP_DOMAIN(domain, reason) {domain, reason},
#include "exclusions.def"
#undef REDUCE_SKIP_OP
#undef REDUCE_SKIP_TEST
#undef REDUCE_SKIP_DOMAIN
};

// The first excluded op or domain a graph (or a subgraph) uses, and why.
std::optional<std::string> excluded_op(const Graph& g) {
  for (const Node& n : g.nodes) {
    for (const auto& e : kOpExclusions)
      if (n.op_type == e.op) return std::string(e.op) + ": " + e.reason;
    for (const auto& e : kDomainExclusions)
      if (n.domain == e.domain) return n.domain + "." + n.op_type + ": " + e.reason;
    for (const auto& a : n.attributes) {
      if (a.g)
        if (auto why = excluded_op(*a.g)) return why;
      for (const auto& sg : a.graphs)
        if (auto why = excluded_op(*sg)) return why;
    }
  }
  return std::nullopt;
}

std::optional<std::string> unsupported_type(const Graph& g) {
  auto check = [](const ValueInfo& vi) -> std::optional<std::string> {
    if (!vi.type.is_tensor())
      return "'" + vi.name + "' is a " + vi.type.to_string() + " (sequence, optional and map types are not supported)";
    if (vi.type.elem_type == static_cast<int32_t>(DType::String))
      return "'" + vi.name + "' is a string tensor (string tensors are not supported)";
    return std::nullopt;
  };
  for (const auto& vi : g.inputs)
    if (auto r = check(vi)) return r;
  for (const auto& vi : g.outputs)
    if (auto r = check(vi)) return r;
  return std::nullopt;
}

std::string describe(const Tensor& t) { return std::string(dtype_name(t.dtype())) + shape_to_string(t.shape()); }

std::string format_index(const Shape& shape, uint64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = static_cast<int64_t>(flat % static_cast<uint64_t>(shape[d]));
    flat /= static_cast<uint64_t>(shape[d]);
  }
  return shape_to_string(idx);
}

// ONNX test data written by numpy (which has no bfloat16) stores bfloat16 values as uint16: read
// such an expected output as the bfloat16 the model declares (inputs: bind_inputs does it).
Tensor as_declared(Tensor t, const ValueInfo* declared) {
  if (declared && t.dtype() == DType::UInt16 && declared->type.elem_type == static_cast<int32_t>(DType::BFloat16)) {
    auto bf = Tensor::copy_of(DType::BFloat16, t.shape(), t.bytes());
    if (bf) return std::move(*bf);
  }
  return t;
}

ConformanceOutcome fail(std::string reason) { return {ConformanceOutcome::Kind::Failed, std::move(reason)}; }

}  // namespace

std::vector<fs::path> find_conformance_tests(const std::vector<fs::path>& roots) {
  std::vector<fs::path> out;
  for (const auto& root : roots) {
    std::error_code ec;
    if (fs::exists(root / "model.onnx", ec)) out.push_back(root);
    for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_directory(ec) && fs::exists(it->path() / "model.onnx", ec)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<std::string> conformance_skip_reason(const std::string& test_name, const Model& model) {
  for (const auto& e : kTestExclusions)
    if (test_name == e.name) return std::string(e.reason);
  if (auto why = excluded_op(model.graph)) return why;
  return unsupported_type(model.graph);
}

std::vector<std::pair<std::string, std::string>> conformance_exclusions() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : kOpExclusions) out.emplace_back(std::string("op ") + e.op, e.reason);
  for (const auto& e : kDomainExclusions) out.emplace_back(std::string("domain ") + e.domain, e.reason);
  for (const auto& e : kTestExclusions) out.emplace_back(std::string("test ") + e.name, e.reason);
  out.emplace_back("sequence, optional and map inputs/outputs", "only tensors are supported");
  out.emplace_back("string inputs/outputs", "string tensors are not supported");
  return out;
}

std::optional<std::string> conformance_difference(const Tensor& expected, const Tensor& actual,
                                                  const ConformanceTolerance& tol) {
  if (expected.dtype() != actual.dtype() || expected.shape() != actual.shape())
    return "expected " + describe(expected) + ", got " + describe(actual);
  uint64_t bad = 0, first = 0;
  double worst = 0;
  for (uint64_t i = 0; i < expected.elements(); ++i) {
    const double e = expected.element_as_double(i), a = actual.element_as_double(i);
    bool same;
    if (std::isnan(e) || std::isnan(a)) same = std::isnan(e) && std::isnan(a);
    else if (std::isinf(e) || std::isinf(a)) same = e == a;
    else same = std::abs(a - e) <= tol.atol + tol.rtol * std::abs(e);
    if (!same) {
      if (bad++ == 0) first = i;
      if (!std::isnan(a - e)) worst = std::max(worst, std::abs(a - e));
    }
  }
  if (!bad) return std::nullopt;
  std::ostringstream msg;
  msg.precision(9);
  msg << bad << " of " << expected.elements() << " elements differ; first at " << format_index(expected.shape(), first)
      << ": expected " << expected.element_as_double(first) << ", got " << actual.element_as_double(first)
      << "; max |diff| " << worst;
  return msg.str();
}

ConformanceOutcome run_conformance_test(const fs::path& dir, Engine& engine, const ConformanceTolerance& tol) {
  try {
    auto model = load_model(dir / "model.onnx");
    if (!model) return fail(model.error().message());
    if (auto why = conformance_skip_reason(dir.filename().string(), *model))
      return {ConformanceOutcome::Kind::Skipped, *why};
    auto prepared = engine.prepare(*model);
    if (!prepared) return fail(prepared.error().message());
    std::vector<fs::path> sets;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0)
        sets.push_back(entry.path());
    std::sort(sets.begin(), sets.end());
    if (sets.empty()) return fail("no test_data_set_N folder");
    for (const auto& set : sets) {
      const std::string where = set.filename().string() + ": ";
      auto inputs = read_tensor_set(set, "input");
      std::vector<NamedTensor> given;
      if (inputs) {
        auto bound = bind_inputs(model->graph, std::move(*inputs), set.string());
        if (!bound) return fail(bound.error().message());
        given = std::move(*bound);
      } else if (!runtime_inputs(model->graph).empty()) {
        return fail(inputs.error().message());
      }
      auto expected = read_tensor_set(set, "output");
      if (!expected) return fail(expected.error().message());
      if (expected->size() != model->graph.outputs.size())
        return fail(where + std::to_string(expected->size()) + " expected outputs for " +
                    std::to_string(model->graph.outputs.size()) + " graph outputs");
      TensorMap feed;
      for (auto& t : given) feed[t.name] = std::move(t.tensor);  // bind_inputs read uint16 as bfloat16
      auto actual = (*prepared)->run(feed);
      if (!actual) return fail(where + actual.error().message());
      for (size_t k = 0; k < expected->size(); ++k) {
        const std::string& name = model->graph.outputs[k].name;
        auto it = actual->find(name);
        if (it == actual->end()) return fail(where + "output '" + name + "' missing");
        const Tensor want = as_declared((*expected)[k].tensor, &model->graph.outputs[k]);
        if (auto diff = conformance_difference(want, it->second, tol))
          return fail(where + "output '" + name + "': " + *diff);
      }
    }
    return {};
  } catch (const std::exception& e) {
    return fail(std::string("exception: ") + e.what());
  }
}

}  // namespace reduce
