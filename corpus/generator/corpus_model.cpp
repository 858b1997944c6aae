// The corpus: the family table, generating one model, laying out body and trigger, the manifest.
#include "corpus_model.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <unordered_map>
#include <system_error>

#include "core/model_io.h"
#include "engine/fault.h"
#include "triggers/triggers.h"

namespace reduce::corpus {

namespace {

// The spec of the optimized engine with one fault (and a precision): `opt:[PRECISION,]fault=NAME`.
std::string fault_spec(Fault fault, std::string_view precision = "") {
  return "opt:" + (precision.empty() ? std::string() : std::string(precision) + ",") + "fault=" + std::string(fault_name(fault));
}

const std::vector<Family>& family_table() {
  static const std::vector<Family> table = {
#define CORPUS_FAMILY(fault, stem, engine, kind, build, description) {fault, stem, engine, kind, build, description},
#include "families.def"
#undef CORPUS_FAMILY
  };
  return table;
}

const std::vector<Family>& precision_table() {
  static const std::vector<Family> table = {
#define PRECISION_FAMILY(name, stem, engine, kind, build, description) {name, stem, engine, kind, build, description, true},
#include "precision.def"
#undef PRECISION_FAMILY
  };
  return table;
}

const std::vector<Family>& quantized_table() {
  static const std::vector<Family> table = {
#define QUANTIZED_FAMILY(name, stem, scheme, build, description) \
  {name, stem, "ref", "mismatch", build, description, false, QuantizeScheme::scheme},
#include "quantized.def"
#undef QUANTIZED_FAMILY
  };
  return table;
}

// Writes `text` to `path` whole, then renames it into place.
Status write_manifest(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  auto partial = path;
  partial += ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) return Error{partial.string(), "cannot write the manifest"};
  }
  std::filesystem::rename(partial, path, ec);
  if (ec) return Error{path.string(), "cannot write the manifest: " + ec.message()};
  return Status::success();
}

}  // namespace

std::span<const Family> families() { return family_table(); }

std::span<const Family> precision_families() { return precision_table(); }

const Family* find_precision_family(std::string_view name) {
  for (const auto& f : precision_table())
    if (f.fault == name) return &f;
  return nullptr;
}

std::span<const Family> quantized_families() { return quantized_table(); }

std::string GeneratedModel::fp32_node_names() const {
  std::string out;
  for (size_t i : fp32_nodes) out += (out.empty() ? "" : ",") + model.graph.nodes[i].name;
  return out;
}

const Family* find_family(std::string_view fault) {
  for (const auto& f : family_table())
    if (f.fault == fault) return &f;
  return nullptr;
}

std::string GeneratedModel::minimal_ops() const {
  if (!wrapped_minimal_ops.empty()) return wrapped_minimal_ops;
  std::map<std::string, size_t> counts;
  for (size_t i : minimal_nodes) ++counts[model.graph.nodes[i].op_type];
  std::string out;
  for (const auto& [op, n] : counts) out += (out.empty() ? "" : ",") + op + ":" + std::to_string(n);
  return out;
}

Value bury(GraphBuilder& b, Value stream, size_t target, size_t trigger_nodes, const GrowFn& grow, Random& rng,
           const TriggerFn& trigger) {
  const size_t before = b.node_count();
  const size_t body = target > before + trigger_nodes ? target - before - trigger_nodes : 0;
  grow(b, stream, body / 2, rng);
  stream = trigger(b, stream, rng);
  const size_t used = b.node_count();
  grow(b, stream, target > used ? target - used : 0, rng);
  return stream;
}

GeneratedModel generate(const Family& family, size_t size, uint64_t seed) {
  GeneratedModel g;
  g.family = &family;
  g.file_name = std::string(family.stem) + "_" + std::to_string(size) + ".onnx";
  GraphBuilder b(std::string(family.stem) + "_" + std::to_string(size));
  Random rng(model_seed(seed, family.fault, size));
  family.build(b, size, rng);
  g.minimal_nodes = b.minimal_nodes();
  std::sort(g.minimal_nodes.begin(), g.minimal_nodes.end());
  g.fp32_nodes = b.fp32_nodes();
  std::sort(g.fp32_nodes.begin(), g.fp32_nodes.end());
  g.model = b.finish({});
  if (family.quantize != QuantizeScheme::None) {
    // The ground truth names nodes of the float model; the quantized model keeps their names.
    std::set<std::string> names;
    for (size_t i : g.fp32_nodes) names.insert(g.model.graph.nodes[i].name);
    g.float_model = std::move(g.model);
    g.model = quantize_model(g.float_model, g.fp32_nodes, family.quantize);
    g.fp32_nodes.clear();
    for (size_t i = 0; i < g.model.graph.nodes.size(); ++i)
      if (names.count(g.model.graph.nodes[i].name)) g.fp32_nodes.push_back(i);
    g.float_file_name = std::string(family.stem) + "_" + std::to_string(size) + "_float.onnx";
    g.float_model.doc_string = "reduce corpus (seed " + std::to_string(seed) + "): the float model of " + g.file_name + ".";
  }
  g.nodes = count_nodes(g.model.graph);
  g.model.doc_string = "reduce corpus (seed " + std::to_string(seed) + "): " + std::string(family.description) +
                       ". Fails on " + std::string(family.engine) + " (" + std::string(family.kind) + "); " +
                       (family.quantize != QuantizeScheme::None ? "passes against " + g.float_file_name + " with " +
                                                                      g.fp32_node_names() + " left in float."
                        : family.precision ? "passes with " + g.fp32_node_names() + " in FP32."
                                           : "minimal reproducer " + g.minimal_ops() + ".");
  return g;
}

namespace {

// The network as a body: every value its nodes compute renamed `<name>/<suffix>` (inputs and
// weights are read from the enclosing graph), returning the network's outputs.
std::shared_ptr<Graph> network_as_body(const Graph& graph, const std::string& suffix) {
  auto b = std::make_shared<Graph>();
  b->name = graph.name + "_" + suffix;
  std::unordered_map<std::string, std::string> renamed;
  for (const Node& n : graph.nodes)
    for (const auto& o : n.outputs) renamed[o] = o + "/" + suffix;
  auto rename = [&](const std::string& v) {
    auto it = renamed.find(v);
    return it == renamed.end() ? v : it->second;
  };
  for (Node n : graph.nodes) {
    for (auto& i : n.inputs) i = rename(i);
    for (auto& o : n.outputs) o = rename(o);
    b->nodes.push_back(std::move(n));
  }
  for (ValueInfo vi : graph.outputs) {
    vi.name = rename(vi.name);
    b->outputs.push_back(std::move(vi));
  }
  for (ValueInfo vi : graph.value_info) {
    vi.name = rename(vi.name);
    b->value_info.push_back(std::move(vi));
  }
  return b;
}

// After a wrapping: the file name gains `_<tag>` before the size; the ground truth is kept as an
// op multiset (the node indices are those of the network, now inside a body).
void wrapped(GeneratedModel& g, const std::string& tag, std::string minimal_ops) {
  g.model.graph.value_info.clear();
  const auto dot = g.file_name.rfind('_');
  g.file_name = g.file_name.substr(0, dot) + "_" + tag + g.file_name.substr(dot);
  g.wrapped_minimal_ops = std::move(minimal_ops);
  g.minimal_nodes.clear();
  g.fp32_nodes.clear();
  g.nodes = count_nodes(g.model.graph);
}

}  // namespace

void wrap_in_if(GeneratedModel& g) {
  const std::string ops = g.minimal_ops();  // read before the nodes move into the branches
  Graph& graph = g.model.graph;
  const std::string x = graph.inputs.at(0).name;
  Node abs{"if_condition/Abs", "Abs", "", {x}, {"if_condition/abs"}, {}, {}, {}};
  Node sum{"if_condition/ReduceSum", "ReduceSum", "", {"if_condition/abs"}, {"if_condition/sum"}, {}, {}, {}};
  sum.attributes.push_back(int_attribute("keepdims", 0));
  Node greater{"if_condition/Greater", "Greater", "", {"if_condition/sum", "if_condition/zero"}, {"if_condition/c"}, {}, {}, {}};
  Node wrapper{"network", "If", "", {"if_condition/c"}, {}, {}, {}, {}};
  for (const auto& vi : graph.outputs) wrapper.outputs.push_back(vi.name);
  wrapper.attributes.push_back(graph_attribute("then_branch", network_as_body(graph, "then")));
  wrapper.attributes.push_back(graph_attribute("else_branch", network_as_body(graph, "else")));
  // Greater needs both operands of one type: the zero is of the first input's (token ids are int64).
  const bool int64_input = graph.inputs.at(0).type.elem_type == static_cast<int32_t>(DType::Int64);
  auto zero = int64_input ? Tensor::from_vector(DType::Int64, {}, std::vector<int64_t>{0})
                          : Tensor::from_vector(DType::Float, {}, std::vector<float>{0.0f});
  graph.initializers.push_back({"if_condition/zero", std::move(zero).value(), {}});
  graph.nodes = {std::move(abs), std::move(sum), std::move(greater), std::move(wrapper)};
  wrapped(g, "if", ops);
}

void wrap_in_loop(GeneratedModel& g, int64_t trips) {
  const std::string ops = g.minimal_ops();  // read before the nodes move into the body
  Graph& graph = g.model.graph;
  auto body = network_as_body(graph, "body");
  // Body inputs: the iteration number and the condition, which the body passes on; its other
  // outputs are scan outputs (one value per iteration).
  body->inputs = {{"loop/i", ValueType::tensor(DType::Int64, {}), ""}, {"loop/cond_in", ValueType::tensor(DType::Bool, {}), ""}};
  body->nodes.push_back(Node{"loop/keep_going", "Identity", "", {"loop/cond_in"}, {"loop/cond_out"}, {}, {}, {}});
  body->outputs.insert(body->outputs.begin(), {"loop/cond_out", ValueType::tensor(DType::Bool, {}), ""});
  Node wrapper{"network", "Loop", "", {"loop/trips", ""}, {}, {}, {}, {}};
  for (auto& vi : graph.outputs) {
    wrapper.outputs.push_back(vi.name);
    if (vi.type.is_tensor() && vi.type.has_shape) vi.type.dims.insert(vi.type.dims.begin(), Dim::fixed(trips));
  }
  wrapper.attributes.push_back(graph_attribute("body", std::move(body)));
  auto m = Tensor::from_vector(DType::Int64, {}, std::vector<int64_t>{trips});
  graph.initializers.push_back({"loop/trips", std::move(m).value(), {}});
  graph.nodes = {std::move(wrapper)};
  wrapped(g, "loop", ops);
}

std::string manifest_header() { return "model\tengine\tkind\tminimal_ops\tnodes\tdescription\n"; }

std::string manifest_line(const GeneratedModel& m) {
  return m.file_name + "\t" + std::string(m.family->engine) + "\t" + std::string(m.family->kind) + "\t" +
         m.minimal_ops() + "\t" + std::to_string(m.nodes) + "\t" + std::string(m.family->description) + "\n";
}

std::string precision_manifest_header() { return "model\tengine\tkind\tfp32_nodes\tnodes\tdescription\n"; }

std::string precision_manifest_line(const GeneratedModel& m) {
  return m.file_name + "\t" + std::string(m.family->engine) + "\t" + std::string(m.family->kind) + "\t" +
         m.fp32_node_names() + "\t" + std::to_string(m.nodes) + "\t" + std::string(m.family->description) + "\n";
}

std::string quantized_manifest_header() { return "model\tfloat_model\tengine\tkind\tfloat_nodes\tnodes\tdescription\n"; }

std::string quantized_manifest_line(const GeneratedModel& m) {
  return m.file_name + "\t" + m.float_file_name + "\t" + std::string(m.family->engine) + "\t" + std::string(m.family->kind) +
         "\t" + m.fp32_node_names() + "\t" + std::to_string(m.nodes) + "\t" + std::string(m.family->description) + "\n";
}

Status write_corpus(const std::filesystem::path& out_dir, std::span<const Family* const> chosen,
                    std::span<const size_t> sizes, uint64_t seed, std::span<const Family* const> precision,
                    Wrapping wrapping, std::span<const Family* const> quantized) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return Error{out_dir.string(), "cannot create the folder: " + ec.message()};
  // The models of `families` at every size, and their manifest `name` (header, then a line each).
  auto write = [&](std::span<const Family* const> families, std::string manifest,
                   std::string (*line)(const GeneratedModel&), const char* name) -> Status {
    if (families.empty()) return Status::success();
    for (const Family* family : families)
      for (size_t size : sizes) {
        GeneratedModel g = generate(*family, size, seed);
        if (family->quantize == QuantizeScheme::None && wrapping == Wrapping::If) wrap_in_if(g);
        if (family->quantize == QuantizeScheme::None && wrapping == Wrapping::Loop) wrap_in_loop(g, 3);
        REDUCE_TRY(save_model(g.model, out_dir / g.file_name));
        if (!g.float_file_name.empty()) REDUCE_TRY(save_model(g.float_model, out_dir / g.float_file_name));
        manifest += line(g);
      }
    return write_manifest(out_dir / name, manifest);
  };
  REDUCE_TRY(write(chosen, manifest_header(), manifest_line, "manifest.tsv"));
  REDUCE_TRY(write(precision, precision_manifest_header(), precision_manifest_line, "precision_manifest.tsv"));
  REDUCE_TRY(write(quantized, quantized_manifest_header(), quantized_manifest_line, "quantized_manifest.tsv"));
  return Status::success();
}

}  // namespace reduce::corpus
