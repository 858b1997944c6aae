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

namespace {

// Fresh names: never one the model has, nor one given out before.
class FreshNames {
 public:
  explicit FreshNames(const Graph& graph) {
    for (const auto& node : graph.nodes) {
      taken_.insert(node.name);
      taken_.insert(node.outputs.begin(), node.outputs.end());
      taken_.insert(node.inputs.begin(), node.inputs.end());
    }
    for (const auto& vi : graph.inputs) taken_.insert(vi.name);
    for (const auto& init : graph.initializers) taken_.insert(init.name);
  }
  std::string operator()(const std::string& base) {
    std::string name = base;
    for (int k = 2; taken_.count(name); ++k) name = base + "_" + std::to_string(k);
    taken_.insert(name);
    return name;
  }

 private:
  std::unordered_set<std::string> taken_;
};

// One conversion, step by step: the positions each node may hold low, the type each value then
// has, the weights and Constants converted, the Casts where types change, the declared types.
class Conversion {
 public:
  Conversion(const Model& model, const MixedPrecisionOptions& o, std::unordered_map<std::string, ValueType> types)
      : o_(o), types_(std::move(types)), low_(static_cast<int32_t>(o.to)),
        low_str_(o.to == DType::Float16 ? "tensor(float16)" : "tensor(bfloat16)"),
        suffix_(o.to == DType::Float16 ? "fp16" : "bf16"), opset_(model.opset("").value_or(0)) {
    out_.model = model;
  }

  Expected<MixedPrecisionModel> run() {
    Graph& graph = out_.model.graph;
    choose_positions(graph);
    find_readers(graph);
    REDUCE_TRY(type_inputs_and_weights(graph));
    REDUCE_TRY(type_node_outputs(graph));
    FreshNames fresh(graph);
    index_producers(graph);
    rename_low_values_read_by_name(graph, fresh);
    cast_inputs(graph, fresh);
    splice_casts(graph);
    declare_types(graph);
    return std::move(out_);
  }

 private:
  bool known(const std::string& v) const { return types_.count(v) && types_.at(v).is_tensor(); }
  bool is_float(const std::string& v) const { return known(v) && types_.at(v).elem_type == kFloat; }
  bool kept(const Node& node) const { return o_.keep_nodes.count(node.name) || o_.keep_op_types.count(node.op_type); }
  bool is_low(const std::string& v) const {
    const auto it = actual_.find(v);
    return it != actual_.end() && it->second == low_;
  }

  // Which positions of which nodes go low.
  void choose_positions(const Graph& graph) {
    const auto known = [&](const std::string& v) { return this->known(v); };
    const auto is_float = [&](const std::string& v) { return this->is_float(v); };
    pos_.resize(graph.nodes.size());
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const Node& node = graph.nodes[i];
      pos_[i] = {std::vector<bool>(node.inputs.size()), std::vector<bool>(node.outputs.size())};
      const bool touches_float = std::any_of(node.inputs.begin(), node.inputs.end(), is_float) ||
                                 std::any_of(node.outputs.begin(), node.outputs.end(), is_float);
      if (!touches_float || kept(node)) continue;
      const onnx::OpSchema* schema = node.has_subgraphs() ? nullptr : schema_of(node, opset_);
      if (schema) pos_[i] = low_positions(node, *schema, low_str_, is_float, known);
      if (!pos_[i].any()) out_.kept_by_rule.push_back(node.name);
    }
  }

  // Who reads each value: explicit positions, and readers by name (outputs, subgraph bodies).
  void find_readers(const Graph& graph) {
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      for (size_t k = 0; k < graph.nodes[i].inputs.size(); ++k)
        if (!graph.nodes[i].inputs[k].empty()) readers_[graph.nodes[i].inputs[k]].emplace_back(i, k);
      for (const auto& v : graph.nodes[i].implicit_inputs) read_by_name_.insert(v);
    }
    for (const auto& vi : graph.outputs) outputs_.insert(vi.name);
    if (o_.keep_io_types) read_by_name_.insert(outputs_.begin(), outputs_.end());
  }

  bool all_read_low(const std::string& v) const {
    if (read_by_name_.count(v) || outputs_.count(v)) return false;
    const auto it = readers_.find(v);
    if (it == readers_.end()) return false;
    return std::all_of(it->second.begin(), it->second.end(), [&](auto r) { return pos_[r.first].in[r.second]; });
  }

  // The type each float graph input and weight has after conversion; weights read only low are converted.
  Status type_inputs_and_weights(Graph& graph) {
    std::unordered_set<std::string> inputs;
    for (const auto& vi : graph.inputs) inputs.insert(vi.name);
    for (const auto& vi : graph.inputs)
      if (is_float(vi.name))
        actual_[vi.name] = !o_.keep_io_types && !graph.find_initializer(vi.name) && all_read_low(vi.name) ? low_ : kFloat;
    for (auto& init : graph.initializers) {
      if (init.tensor.dtype() != DType::Float || inputs.count(init.name)) continue;
      actual_[init.name] = all_read_low(init.name) ? low_ : kFloat;
      if (actual_[init.name] == low_) {
        REDUCE_ASSIGN(init.tensor, o_.convert_weight ? o_.convert_weight(init.tensor, o_.to) : to_low_precision(init.tensor, o_.to));
        ++out_.converted_initializers;
      }
    }
    return {};
  }

  // The type each node's float outputs have; a Constant only converted nodes read holds its value
  // in the low type.
  Status type_node_outputs(Graph& graph) {
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      Node& node = graph.nodes[i];
      for (size_t k = 0; k < node.outputs.size(); ++k)
        if (is_float(node.outputs[k])) actual_[node.outputs[k]] = pos_[i].out[k] ? low_ : kFloat;
      if (node.op_type == "Constant" && node.outputs.size() == 1 && is_float(node.outputs[0]) && !kept(node) &&
          all_read_low(node.outputs[0])) {
        for (auto& a : node.attributes)
          if (a.name == "value" && a.kind == Attribute::Kind::Tensor && a.t.dtype() == DType::Float) {
            REDUCE_ASSIGN(a.t, to_low_precision(a.t, o_.to));
            actual_[node.outputs[0]] = low_;
          }
      }
      if (pos_[i].any()) ++out_.converted_nodes;
    }
    return {};
  }

  void index_producers(const Graph& graph) {
    for (size_t i = 0; i < graph.nodes.size(); ++i)
      for (const auto& v : graph.nodes[i].outputs)
        if (!v.empty()) producer_[v] = i;
  }

  // A Cast of `from` into `to_name`, placed right after the producer of `v` (inputs' and weights'
  // before every node).
  void make_cast(FreshNames& fresh, const std::string& from, const std::string& to_name, int32_t to_type,
                 const std::string& v) {
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
    const auto it = producer_.find(v);
    after_[it == producer_.end() ? kBeforeEveryNode : it->second].push_back(std::move(cast));
    ++out_.casts;
  }

  // A low value read by name in FP32 keeps its name: the producer writes a renamed low value.
  void rename_low_values_read_by_name(Graph& graph, FreshNames& fresh) {
    for (auto& node : graph.nodes)
      for (auto& v : node.outputs)
        if (!v.empty() && is_low(v) && read_by_name_.count(v)) {
          const std::string original = v;
          v = fresh(original + "_" + suffix_);
          low_name_[original] = v;
          make_cast(fresh, v, original, kFloat, original);
        }
  }

  // Every input reads its value in the type its position wants, through one Cast per value and type.
  void cast_inputs(Graph& graph, FreshNames& fresh) {
    std::map<std::pair<std::string, int32_t>, std::string> cast_of;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      Node& node = graph.nodes[i];
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        const std::string v = node.inputs[k];
        if (v.empty() || !actual_.count(v)) continue;
        const int32_t want = pos_[i].in[k] ? low_ : kFloat;
        const int32_t have = actual_[v];
        const std::string have_name = low_name_.count(v) ? low_name_[v] : v;
        if (want == have) {
          node.inputs[k] = have_name;
        } else if (low_name_.count(v)) {
          node.inputs[k] = v;  // the FP32 value under its own name, cast already
        } else {
          auto [it, fresh_cast] = cast_of.emplace(std::make_pair(v, want), "");
          if (fresh_cast) {
            it->second = fresh(v + "_to_" + (want == low_ ? suffix_ : "fp32"));
            make_cast(fresh, have_name, it->second, want, v);
          }
          node.inputs[k] = it->second;
        }
      }
    }
  }

  void splice_casts(Graph& graph) {
    const size_t n = graph.nodes.size();
    std::vector<Node> nodes;
    nodes.reserve(n + out_.casts);
    for (auto& cast : after_[kBeforeEveryNode]) nodes.push_back(std::move(cast));
    for (size_t i = 0; i < n; ++i) {
      nodes.push_back(std::move(graph.nodes[i]));
      if (auto it = after_.find(i); it != after_.end())
        for (auto& cast : it->second) nodes.push_back(std::move(cast));
    }
    graph.nodes = std::move(nodes);
  }

  // Declared types follow.
  void declare_types(Graph& graph) {
    const auto lowered = [&](const std::string& v) { return is_low(v) && !low_name_.count(v); };
    for (auto& vi : graph.value_info)
      if (lowered(vi.name)) vi.type.elem_type = low_;
    for (auto* list : {&graph.inputs, &graph.outputs})
      for (auto& vi : *list)
        if (lowered(vi.name)) vi.type.elem_type = low_;
  }

  static constexpr size_t kBeforeEveryNode = SIZE_MAX;

  const MixedPrecisionOptions& o_;
  const std::unordered_map<std::string, ValueType> types_;
  const int32_t low_;
  const std::string low_str_, suffix_;
  const int64_t opset_;
  MixedPrecisionModel out_;
  std::vector<Positions> pos_;
  std::unordered_map<std::string, std::vector<std::pair<size_t, size_t>>> readers_;
  std::unordered_set<std::string> read_by_name_;  // must keep its FP32 type under its own name
  std::unordered_set<std::string> outputs_;
  std::unordered_map<std::string, int32_t> actual_;  // the type each float value has after conversion
  std::unordered_map<std::string, size_t> producer_;
  std::map<size_t, std::vector<Node>> after_;  // Casts after each node
  std::unordered_map<std::string, std::string> low_name_;
};

}  // namespace

Expected<MixedPrecisionModel> convert_to_mixed_precision(const Model& model, const MixedPrecisionOptions& o) {
  if (o.to != DType::Float16 && o.to != DType::BFloat16)
    return make_error("mixed precision converts to float16 or bfloat16, not " + std::string(dtype_name(o.to)));
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
  return Conversion(model, o, std::move(types)).run();
}

}  // namespace reduce
