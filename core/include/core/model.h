// The model IR: our own copy of an ONNX model (graph, nodes, values, weights), imported once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace reduce {

class MappedFile;

// One dimension of a value's shape: static (value >= 0), symbolic (param), or unknown.
struct Dim {
  int64_t value = -1;
  std::string param;

  static Dim fixed(int64_t v) { return Dim{v, {}}; }
  static Dim symbolic(std::string p) { return Dim{-1, std::move(p)}; }
  bool is_static() const { return value >= 0; }
  bool operator==(const Dim&) const = default;
};

struct ValueType {
  enum class Kind { Unknown, Tensor, Other };
  Kind kind = Kind::Unknown;
  // Tensors: ONNX element type number (may be one we cannot store, e.g. string) and optional shape.
  int32_t elem_type = 0;
  bool has_shape = false;
  std::vector<Dim> dims;
  // Other kinds (sequence, map, optional): the serialized TypeProto, kept intact.
  std::string opaque;

  static ValueType tensor(DType dtype, const Shape& shape);
  bool is_tensor() const { return kind == Kind::Tensor; }
  std::string to_string() const;  // "float[1,3,N,W]", "float[?]" ...
  bool operator==(const ValueType&) const = default;
};

struct ValueInfo {
  std::string name;
  ValueType type;
  std::string doc_string;
  bool operator==(const ValueInfo&) const = default;
};

struct Graph;

struct Attribute {
  // Numbered as ONNX's AttributeProto.AttributeType.
  enum class Kind : int32_t {
    Undefined = 0, Float = 1, Int = 2, String = 3, Tensor = 4, Graph = 5, Floats = 6, Ints = 7,
    Strings = 8, Tensors = 9, Graphs = 10, SparseTensor = 11, SparseTensors = 12, TypeProto = 13,
    TypeProtos = 14,
  };
  std::string name;
  Kind kind = Kind::Undefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  reduce::Tensor t;
  std::shared_ptr<const reduce::Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<reduce::Tensor> tensors;
  std::vector<std::shared_ptr<const reduce::Graph>> graphs;
  std::string ref_attr_name;  // set inside function bodies
  std::string doc_string;
  std::string opaque;  // serialized AttributeProto for kinds we only carry (sparse tensors, type protos)
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain
  std::vector<std::string> inputs;   // "" marks an omitted optional input
  std::vector<std::string> outputs;  // "" marks an omitted optional output
  std::vector<Attribute> attributes;
  std::string doc_string;
  // Values of enclosing scopes that subgraph attributes (If/Loop/Scan bodies) read. Computed on import.
  std::vector<std::string> implicit_inputs;

  const Attribute* attribute(std::string_view attr_name) const;
  bool has_subgraphs() const;
};

struct Initializer {
  std::string name;
  Tensor tensor;
  std::string doc_string;
  // Set when the file had this value as a Constant node (its name, perhaps empty): inside, every
  // constant is an initializer; written out, it is a Constant node again, so that an engine that
  // treats the two forms differently sees the form the user's model has.
  std::optional<std::string> constant_node;
  // Such a value's place in the file: the name of the node that came next ("" when none did). It is
  // written out there again, so an engine that reads nodes in order meets them in the user's order
  // (where that node is gone from a candidate, right before its first reader).
  std::string constant_before;
};

struct Graph {
  std::string name;
  std::string doc_string;
  std::vector<Node> nodes;  // node index = position; never reordered after import
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<ValueInfo> value_info;
  std::vector<Initializer> initializers;

  const Initializer* find_initializer(std::string_view value_name) const;
  const ValueInfo* find_value_info(std::string_view value_name) const;  // inputs, outputs, value_info
};

struct OpsetImport {
  std::string domain;
  int64_t version = 0;
  bool operator==(const OpsetImport&) const = default;
};

struct ModelSource;  // core/model_io.h

struct Model {
  int64_t ir_version = 8;
  std::vector<OpsetImport> opset_imports;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::vector<std::pair<std::string, std::string>> metadata_props;
  std::vector<std::string> functions;  // serialized FunctionProtos, carried intact
  Graph graph;
  // External-data files (relative to the model's folder) the weights were mapped from at load time.
  std::vector<std::string> external_data_files;
  // Those files, mapped (weights view them). Models derived from this one (candidates) keep them,
  // so that saving can reference the original file again instead of copying the weights
  // (SaveOptions::link_external_data).
  std::vector<std::shared_ptr<const MappedFile>> external_data;
  // The file the model was read from and the model as read (load_model, binary files without external
  // data). While the model is still equal to it, saving or serializing hands over the file's own bytes:
  // an engine checks the user's file as given, not a re-serialization (model_io.h, source_bytes).
  std::shared_ptr<const ModelSource> source;

  // Opset version of a domain ("" and "ai.onnx" are the same), if imported.
  std::optional<int64_t> opset(std::string_view domain) const;
};

// Makes every node name name one node, so that a set of nodes (`reduce precision`'s set, `fp32=`) and every
// report row means exactly the nodes it lists: nodes without a name get `node_K`, and a name
// already taken by an earlier node becomes `NAME_K` (the first node keeps it). All unique.
struct NodeRenaming {
  size_t unnamed = 0;     // named node_K
  size_t duplicates = 0;  // renamed NAME_K
};
// `name_unnamed` false: only shared names are changed (nodes without a name stay so).
NodeRenaming make_node_names_unique(Model& model, bool name_unnamed = true);

// Names a graph reads from enclosing scopes: used but neither its input, initializer, nor produced in it.
std::vector<std::string> outer_scope_names(const Graph& graph);

// Whether an op is ONNX's Constant (domain "" or "ai.onnx"; a custom domain's "Constant" is not).
bool is_constant_node(std::string_view op_type, std::string_view domain);
inline bool is_constant_node(const Node& node) { return is_constant_node(node.op_type, node.domain); }
// ONNX's QuantizeLinear / DequantizeLinear, or ONNX Runtime's com.microsoft ones of the same meaning.
bool is_quantize_node(const Node& node);
bool is_dequantize_node(const Node& node);

// Number of nodes not counting Constant (what users and reports call "nodes").
size_t count_nodes(const Graph& graph);

}  // namespace reduce

namespace reduce {
// The first difference between two models (graph structure, attributes, types, weight bytes),
// described for a human; nullopt when they are the same. Node and value names count.
std::optional<std::string> first_difference(const Model& a, const Model& b);
}  // namespace reduce

namespace reduce {
// Fixes the dynamic dims of a graph input (as `--input-shape NAME:1x3x48x320` asks). The rank
// must match and static dims must agree; value_info computed for the old shape is dropped.
Status set_input_shape(Model& model, std::string_view input, const Shape& shape);
}  // namespace reduce
