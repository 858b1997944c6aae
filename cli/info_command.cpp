// `reduce info MODEL`: a summary of a model for a human (opsets, ops, inputs/outputs, weights).
#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <unordered_set>

#include "command.h"
#include "command_line.h"
#include "json_output.h"
#include "tensor_summary.h"
#include "core/model_io.h"
#include "core/tensor_file.h"

namespace reduce::cli {

namespace po = boost::program_options;

namespace {

size_t count_subgraph_nodes(const Graph& g) {
  size_t n = 0;
  for (const auto& node : g.nodes)
    for (const auto& a : node.attributes) {
      if (a.g) n += count_nodes(*a.g) + count_subgraph_nodes(*a.g);
      for (const auto& sg : a.graphs) n += count_nodes(*sg) + count_subgraph_nodes(*sg);
    }
  return n;
}

// Op types (DOMAIN.OP outside the default domain) and their counts, most frequent first.
std::vector<std::pair<std::string, size_t>> op_histogram(const Graph& g) {
  std::map<std::string, size_t> histogram;
  for (const auto& n : g.nodes) ++histogram[n.domain.empty() ? n.op_type : n.domain + "." + n.op_type];
  std::vector<std::pair<std::string, size_t>> ops(histogram.begin(), histogram.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return ops;
}

// The graph inputs a caller feeds (not those an initializer gives).
std::vector<const ValueInfo*> fed_inputs(const Graph& g) {
  std::unordered_set<std::string> init_names;
  for (const auto& i : g.initializers) init_names.insert(i.name);
  std::vector<const ValueInfo*> out;
  for (const auto& vi : g.inputs)
    if (!init_names.count(vi.name)) out.push_back(&vi);
  return out;
}

void print_info(const std::filesystem::path& path, const Model& m, std::ostream& out) {
  out << "model: " << path.string() << "\n";
  out << "ir_version: " << m.ir_version;
  if (!m.producer_name.empty()) out << "  producer: " << m.producer_name;
  if (!m.producer_version.empty()) out << " " << m.producer_version;
  out << "\nopset imports:";
  for (const auto& op : m.opset_imports) out << " " << (op.domain.empty() ? "ai.onnx" : op.domain) << "=" << op.version;
  out << "\n";

  const Graph& g = m.graph;
  out << "nodes: " << count_nodes(g) << " (Constant nodes are counted as initializers)";
  if (const size_t sub = count_subgraph_nodes(g)) out << ", plus " << sub << " in subgraphs";
  out << "\n";
  out << "op types:\n";
  for (const auto& [op, n] : op_histogram(g)) out << "  " << op << ": " << n << "\n";
  out << "inputs:\n";
  for (const ValueInfo* vi : fed_inputs(g)) out << "  " << vi->name << ": " << vi->type.to_string() << "\n";
  out << "outputs:\n";
  for (const auto& vi : g.outputs) out << "  " << vi.name << ": " << vi.type.to_string() << "\n";

  uint64_t bytes = 0;
  for (const auto& i : g.initializers) bytes += i.tensor.byte_size();
  out << "initializers: " << g.initializers.size() << " (" << bytes << " bytes)\n";
  out << "external data files:";
  if (m.external_data_files.empty()) out << " none";
  out << "\n";
  for (const auto& f : m.external_data_files) out << "  " << f << "\n";
}

// -v: every node of the main graph in order, with what it reads and writes ("" an omitted optional value).
void print_nodes(const Graph& g, std::ostream& out) {
  out << "node list:\n";
  auto names = [&out](const std::vector<std::string>& values) {
    for (size_t k = 0; k < values.size(); ++k) out << (k ? ", " : "") << (values[k].empty() ? "\"\"" : values[k]);
  };
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    out << "  #" << k << " " << (n.name.empty() ? "(unnamed)" : n.name) << ": " << (n.domain.empty() ? "" : n.domain + ".") << n.op_type << "(";
    names(n.inputs);
    out << ") -> ";
    names(n.outputs);
    out << "\n";
  }
}

Json nodes_json(const Graph& g) {
  Json nodes = Json::array();
  for (const Node& n : g.nodes)
    nodes.push_back({{"name", n.name}, {"op_type", n.op_type}, {"domain", n.domain}, {"inputs", n.inputs}, {"outputs", n.outputs}});
  return nodes;
}

// The same facts as print_info, for `--json`.
Json info_json(const Model& m) {
  Json j;
  j["ir_version"] = m.ir_version;
  j["producer"] = {{"name", m.producer_name}, {"version", m.producer_version}};
  Json opsets = Json::object();
  for (const auto& op : m.opset_imports) opsets[op.domain.empty() ? "ai.onnx" : op.domain] = op.version;
  j["opset_imports"] = opsets;
  const Graph& g = m.graph;
  j["nodes"] = count_nodes(g);
  j["subgraph_nodes"] = count_subgraph_nodes(g);
  Json op_types = Json::object();
  for (const auto& [op, n] : op_histogram(g)) op_types[op] = n;
  j["op_types"] = op_types;
  Json inputs = Json::array(), outputs = Json::array();
  for (const ValueInfo* vi : fed_inputs(g)) inputs.push_back({{"name", vi->name}, {"type", vi->type.to_string()}});
  for (const auto& vi : g.outputs) outputs.push_back({{"name", vi.name}, {"type", vi.type.to_string()}});
  j["inputs"] = inputs;
  j["outputs"] = outputs;
  uint64_t bytes = 0;
  for (const auto& i : g.initializers) bytes += i.tensor.byte_size();
  j["initializers"] = {{"count", g.initializers.size()}, {"bytes", bytes}};
  j["external_data_files"] = m.external_data_files;
  return j;
}

// The tensors of a tensor file (.pb, .npy, .npz), named as `info` shows them: a .pb by its own name
// (else the file's), a .npy by its stem, a .npz by its entries.
Expected<std::vector<NamedTensor>> read_tensor_file(const std::filesystem::path& path) {
  const auto ext = path.extension();
  if (ext == ".pb") {
    REDUCE_ASSIGN(NamedTensor t, read_tensor_pb(path));
    if (t.name.empty()) t.name = path.filename().string();
    return std::vector<NamedTensor>{std::move(t)};
  }
  if (ext == ".npy") {
    REDUCE_ASSIGN(Tensor t, read_npy(path));
    return std::vector<NamedTensor>{{path.stem().string(), std::move(t)}};
  }
  return read_npz(path);
}

bool is_tensor_file(const std::filesystem::path& path) {
  const auto ext = path.extension();
  return ext == ".pb" || ext == ".npy" || ext == ".npz";
}

}  // namespace

int info_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: reduce info FILE\n\nPrints a summary of a model (.onnx, .onnxtxt): opsets, node count and op\n"
      "histogram, inputs and outputs, weights, external-data files. For tensor files (.pb, .npy,\n"
      ".npz) prints each tensor's type, shape and value statistics.\n\noptions");
  opts.add_options()("help,h", "show this help")("model", po::value<std::string>(), "the file to describe")
      ("json", "print one JSON document on stdout instead of text: schema, command, model and the facts above "
               "(a tensor file: its tensors' name, dtype, shape, elements, min, max, mean, nan, inf)");
  add_output_options(opts, "also list every node of the main graph in order: name, op, inputs -> outputs "
                           "(--json: node_list)");
  po::positional_options_description pos;
  pos.add("model", 1);
  po::variables_map vm;
  if (auto done = parse_command_line(args, "info", opts, pos, vm, "model", "FILE")) return *done;
  const std::filesystem::path path = vm["model"].as<std::string>();
  JsonOutput json(vm.count("json") > 0, "info");
  json.doc()["model"] = path.string();
  if (is_tensor_file(path)) {
    auto tensors = read_tensor_file(path);
    if (!tensors) {
      std::cerr << "error: " << tensors.error().at(path.string()).message() << "\n";
      return kExitUsage;
    }
    Json docs = Json::array();
    for (const auto& t : *tensors) {
      print_tensor(t.name, t.tensor, std::cout);  // held back under --json
      docs.push_back(tensor_json(t.name, t.tensor));
    }
    json.doc()["tensors"] = docs;
    return json.print(kExitOk);
  }
  auto model = load_model(path);
  if (!model) {
    std::cerr << "error: " << model.error().message() << "\n";
    return kExitUsage;
  }
  const bool verbose = console_from(vm).verbose();
  if (json.on()) {
    json.doc().update(info_json(*model));
    if (verbose) json.doc()["node_list"] = nodes_json(model->graph);
    return json.print(kExitOk);
  }
  print_info(path, *model, std::cout);
  if (verbose) print_nodes(model->graph, std::cout);
  return kExitOk;
}

}  // namespace reduce::cli
