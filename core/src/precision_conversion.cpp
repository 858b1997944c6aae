// FP32 -> FP16/BF16 at the ONNX level: which positions of which nodes may hold the low type (from the
// operator schemas), where values change type (Casts, once per value and type), converted weights.
#include "core/precision_conversion.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/extract.h"
#include "core/half.h"

namespace reduce {

namespace {

constexpr int32_t kFloat = static_cast<int32_t>(DType::Float);

// Ops whose output type an attribute sets (or that make values from nothing): their outputs keep
// their type; their inputs may still be read in the low type.
const std::unordered_set<std::string_view> kTypedByAttribute = {
    "Cast", "EyeLike", "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
    "Multinomial", "Bernoulli", "ConstantOfShape", "Constant"};

const onnx::OpSchema* schema_of(const Node& node, int64_t opset) {
  if (opset <= 0 || !(node.domain.empty() || node.domain == "ai.onnx")) return nullptr;
  try {
    return onnx::OpSchemaRegistry::Schema(node.op_type, static_cast<int>(std::min<int64_t>(opset, INT32_MAX)), "");
  } catch (const std::exception&) {
    return nullptr;
  }
}

// The formal parameter of actual position k (the last one repeats when it is variadic), or null.
const onnx::OpSchema::FormalParameter* formal_at(const std::vector<onnx::OpSchema::FormalParameter>& formals, size_t k) {
  if (formals.empty()) return nullptr;
  if (k < formals.size()) return &formals[k];
  return formals.back().GetOption() == onnx::OpSchema::Variadic ? &formals.back() : nullptr;
}

bool allows(const onnx::OpSchema::FormalParameter& formal, const std::string& type) {
  const auto& types = formal.GetTypes();
  return std::any_of(types.begin(), types.end(), [&](const std::string* t) { return t && *t == type; });
}

// Which inputs and outputs of a node may hold the low type. A type variable converts only when
// every value bound to it is a float tensor of known type (they must agree after conversion).
struct Positions {
  std::vector<bool> in, out;
  bool any() const {
    return std::find(in.begin(), in.end(), true) != in.end() || std::find(out.begin(), out.end(), true) != out.end();
  }
};

Positions low_positions(const Node& node, const onnx::OpSchema& schema, const std::string& low,
                        const std::function<bool(const std::string&)>& is_float,
                        const std::function<bool(const std::string&)>& known) {
  Positions p{std::vector<bool>(node.inputs.size()), std::vector<bool>(node.outputs.size())};
  std::map<std::string, bool> variable_ok;  // type string -> every bound value is a known float
  auto visit = [&](const std::vector<onnx::OpSchema::FormalParameter>& formals, const std::vector<std::string>& names) {
    for (size_t k = 0; k < names.size(); ++k) {
      const auto* formal = formal_at(formals, k);
      if (!formal || names[k].empty()) continue;
      auto [it, fresh] = variable_ok.emplace(formal->GetTypeStr(), true);
      it->second = it->second && known(names[k]) && is_float(names[k]) && allows(*formal, low);
    }
  };
  visit(schema.inputs(), node.inputs);
  visit(schema.outputs(), node.outputs);
  for (size_t k = 0; k < node.inputs.size(); ++k)
    if (const auto* f = formal_at(schema.inputs(), k); f && !node.inputs[k].empty()) p.in[k] = variable_ok[f->GetTypeStr()];
  if (!kTypedByAttribute.count(node.op_type))
    for (size_t k = 0; k < node.outputs.size(); ++k)
      if (const auto* f = formal_at(schema.outputs(), k); f && !node.outputs[k].empty())
        p.out[k] = variable_ok[f->GetTypeStr()];
  return p;
}

}  // namespace

Expected<Tensor> to_low_precision(const Tensor& t, DType low) {
  REDUCE_ASSIGN(Tensor out, Tensor::allocate_uninitialized(low, t.shape()));
  const auto in = t.data<float>();
  auto bits = out.mutable_data<uint16_t>();
  for (size_t i = 0; i < in.size(); ++i) bits[i] = low == DType::Float16 ? float_to_half(in[i]) : float_to_bfloat16(in[i]);
  return out;
}

Expected<MixedPrecisionModel> convert_to_mixed_precision(const Model& model, const MixedPrecisionOptions& o) {
  if (o.to != DType::Float16 && o.to != DType::BFloat16)
    return make_error("mixed precision converts to float16 or bfloat16, not " + std::string(dtype_name(o.to)));
  const std::string low_str = o.to == DType::Float16 ? "tensor(float16)" : "tensor(bfloat16)";
  const std::string suffix = o.to == DType::Float16 ? "fp16" : "bf16";
  const int32_t low = static_cast<int32_t>(o.to);
  const Graph& g = model.graph;
  for (const auto& name : o.keep_nodes)
    if (std::none_of(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.name == name; }))
      return make_error("no node named '" + name + "' to keep in FP32");

  REDUCE_ASSIGN(auto types, infer_value_types(model));
  for (const auto& init : g.initializers)
    if (!types.count(init.name)) {
      ValueType& t = types[init.name];
      t.kind = ValueType::Kind::Tensor;
      t.elem_type = static_cast<int32_t>(init.tensor.dtype());
    }
  const auto known = [&](const std::string& v) { return types.count(v) && types.at(v).is_tensor(); };
  const auto is_float = [&](const std::string& v) { return known(v) && types.at(v).elem_type == kFloat; };
  const int64_t opset = model.opset("").value_or(0);

  MixedPrecisionModel out;
  out.model = model;
  Graph& graph = out.model.graph;
  const size_t n = graph.nodes.size();

  // Which positions of which nodes go low.
  std::vector<Positions> pos(n);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = graph.nodes[i];
    pos[i] = {std::vector<bool>(node.inputs.size()), std::vector<bool>(node.outputs.size())};
    const bool touches_float = std::any_of(node.inputs.begin(), node.inputs.end(), is_float) ||
                               std::any_of(node.outputs.begin(), node.outputs.end(), is_float);
    if (!touches_float || o.keep_nodes.count(node.name) || o.keep_op_types.count(node.op_type)) continue;
    const onnx::OpSchema* schema = node.has_subgraphs() ? nullptr : schema_of(node, opset);
    if (schema) pos[i] = low_positions(node, *schema, low_str, is_float, known);
    if (!pos[i].any()) out.kept_by_rule.push_back(node.name);
  }

  // Who reads each value: explicit positions, and readers by name (outputs, subgraph bodies).
  std::unordered_map<std::string, std::vector<std::pair<size_t, size_t>>> readers;
  std::unordered_set<std::string> read_by_name;  // must keep its FP32 type under its own name
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < graph.nodes[i].inputs.size(); ++k)
      if (!graph.nodes[i].inputs[k].empty()) readers[graph.nodes[i].inputs[k]].emplace_back(i, k);
    for (const auto& v : graph.nodes[i].implicit_inputs) read_by_name.insert(v);
  }
  std::unordered_set<std::string> outputs;
  for (const auto& vi : graph.outputs) outputs.insert(vi.name);
  if (o.keep_io_types) read_by_name.insert(outputs.begin(), outputs.end());
  const auto all_read_low = [&](const std::string& v) {
    if (read_by_name.count(v) || outputs.count(v)) return false;
    const auto it = readers.find(v);
    if (it == readers.end()) return false;
    return std::all_of(it->second.begin(), it->second.end(), [&](auto r) { return pos[r.first].in[r.second]; });
  };

  // The type each float value has after conversion.
  std::unordered_map<std::string, int32_t> actual;
  std::unordered_set<std::string> inputs;
  for (const auto& vi : graph.inputs) inputs.insert(vi.name);
  for (const auto& vi : graph.inputs)
    if (is_float(vi.name)) actual[vi.name] = !o.keep_io_types && !graph.find_initializer(vi.name) && all_read_low(vi.name) ? low : kFloat;
  for (auto& init : graph.initializers) {
    if (init.tensor.dtype() != DType::Float || inputs.count(init.name)) continue;
    actual[init.name] = all_read_low(init.name) ? low : kFloat;
    if (actual[init.name] == low) {
      REDUCE_ASSIGN(init.tensor, o.convert_weight ? o.convert_weight(init.tensor, o.to) : to_low_precision(init.tensor, o.to));
      ++out.converted_initializers;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    Node& node = graph.nodes[i];
    for (size_t k = 0; k < node.outputs.size(); ++k)
      if (is_float(node.outputs[k])) actual[node.outputs[k]] = pos[i].out[k] ? low : kFloat;
    // A Constant only converted nodes read holds its value in the low type.
    if (node.op_type == "Constant" && node.outputs.size() == 1 && is_float(node.outputs[0]) &&
        !o.keep_nodes.count(node.name) && !o.keep_op_types.count(node.op_type) && all_read_low(node.outputs[0])) {
      for (auto& a : node.attributes)
        if (a.name == "value" && a.kind == Attribute::Kind::Tensor && a.t.dtype() == DType::Float) {
          REDUCE_ASSIGN(a.t, to_low_precision(a.t, o.to));
          actual[node.outputs[0]] = low;
        }
    }
    if (pos[i].any()) ++out.converted_nodes;
  }

  // Fresh names: never one the model has.
  std::unordered_set<std::string> taken;
  for (const auto& node : graph.nodes) {
    taken.insert(node.name);
    taken.insert(node.outputs.begin(), node.outputs.end());
    taken.insert(node.inputs.begin(), node.inputs.end());
  }
  for (const auto& vi : graph.inputs) taken.insert(vi.name);
  for (const auto& init : graph.initializers) taken.insert(init.name);
  const auto fresh = [&](const std::string& base) {
    std::string name = base;
    for (int k = 2; taken.count(name); ++k) name = base + "_" + std::to_string(k);
    taken.insert(name);
    return name;
  };

  // Casts, placed right after the value's producer (inputs' and weights' first).
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < n; ++i)
    for (const auto& v : graph.nodes[i].outputs)
      if (!v.empty()) producer[v] = i;
  std::map<size_t, std::vector<Node>> after;  // key n: before every node
  const auto place = [&](const std::string& v) { auto it = producer.find(v); return it == producer.end() ? n : it->second; };
  const auto make_cast = [&](const std::string& from, const std::string& to_name, int32_t to_type, const std::string& v) {
    Node cast;
    cast.op_type = "Cast";
    cast.name = fresh(to_name);
    cast.inputs = {from};
    cast.outputs = {to_name};
    Attribute to;
    to.name = "to";
    to.kind = Attribute::Kind::Int;
    to.i = to_type;
    cast.attributes.push_back(std::move(to));
    after[place(v)].push_back(std::move(cast));
    ++out.casts;
  };
  // A low value read by name in FP32 keeps its name: the producer writes a renamed low value.
  std::unordered_map<std::string, std::string> low_name;
  for (size_t i = 0; i < n; ++i)
    for (auto& v : graph.nodes[i].outputs)
      if (!v.empty() && actual.count(v) && actual[v] == low && read_by_name.count(v)) {
        const std::string original = v;
        v = fresh(original + "_" + suffix);
        low_name[original] = v;
        make_cast(v, original, kFloat, original);
      }
  std::map<std::pair<std::string, int32_t>, std::string> cast_of;
  for (size_t i = 0; i < n; ++i) {
    Node& node = graph.nodes[i];
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const std::string v = node.inputs[k];
      if (v.empty() || !actual.count(v)) continue;
      const int32_t want = pos[i].in[k] ? low : kFloat;
      const int32_t have = actual[v];
      const std::string have_name = low_name.count(v) ? low_name[v] : v;
      if (want == have) {
        node.inputs[k] = have_name;
      } else if (low_name.count(v)) {
        node.inputs[k] = v;  // the FP32 value under its own name, cast already
      } else {
        auto [it, fresh_cast] = cast_of.emplace(std::make_pair(v, want), "");
        if (fresh_cast) {
          it->second = fresh(v + "_to_" + (want == low ? suffix : "fp32"));
          make_cast(have_name, it->second, want, v);
        }
        node.inputs[k] = it->second;
      }
    }
  }
  std::vector<Node> nodes;
  nodes.reserve(n + out.casts);
  for (auto& cast : after[n]) nodes.push_back(std::move(cast));
  for (size_t i = 0; i < n; ++i) {
    nodes.push_back(std::move(graph.nodes[i]));
    if (auto it = after.find(i); it != after.end())
      for (auto& cast : it->second) nodes.push_back(std::move(cast));
  }
  graph.nodes = std::move(nodes);

  // Declared types follow.
  for (auto& vi : graph.value_info)
    if (actual.count(vi.name) && actual[vi.name] == low && !low_name.count(vi.name)) vi.type.elem_type = low;
  for (auto* list : {&graph.inputs, &graph.outputs})
    for (auto& vi : *list)
      if (actual.count(vi.name) && actual[vi.name] == low && !low_name.count(vi.name)) vi.type.elem_type = low;
  return out;
}

}  // namespace reduce
