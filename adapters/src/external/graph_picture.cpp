// graph.dot and graph.svg of a reduced model.
#include "adapters/graph_picture.h"

#include <map>
#include <sstream>

#include "adapters/process.h"

namespace reduce {

namespace fs = std::filesystem;

// The reduced graph in Graphviz syntax (nodes by op type; cut inputs and outputs as ellipses).
std::string graph_dot(const Graph& g) {
  std::ostringstream out;
  out << "digraph reduced {\n  rankdir=TB;\n  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n";
  std::map<std::string, std::string> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& v : g.nodes[i].outputs) producer[v] = std::string("n").append(std::to_string(i));
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
  };
  for (size_t k = 0; k < g.inputs.size(); ++k)
    if (!g.find_initializer(g.inputs[k].name))
      out << "  i" << k << " [shape=ellipse, label=" << quote(g.inputs[k].name + "\n" + g.inputs[k].type.to_string()) << "];\n";
  for (size_t i = 0; i < g.nodes.size(); ++i)
    out << "  n" << i << " [label=" << quote(g.nodes[i].op_type) << "];\n";
  for (size_t k = 0; k < g.outputs.size(); ++k)
    out << "  o" << k << " [shape=ellipse, label=" << quote(g.outputs[k].name) << "];\n";
  std::map<std::string, std::string> input_id;
  for (size_t k = 0; k < g.inputs.size(); ++k) input_id[g.inputs[k].name] = "i" + std::to_string(k);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& v : g.nodes[i].inputs) {
      if (auto p = producer.find(v); p != producer.end()) out << "  " << p->second << " -> n" << i << ";\n";
      else if (auto in = input_id.find(v); in != input_id.end() && !g.find_initializer(v)) out << "  " << in->second << " -> n" << i << ";\n";
    }
  for (size_t k = 0; k < g.outputs.size(); ++k)
    if (auto p = producer.find(g.outputs[k].name); p != producer.end()) out << "  " << p->second << " -> o" << k << ";\n";
  out << "}\n";
  return out.str();
}

// graph.svg from graph.dot with Graphviz, when `dot` is installed.
bool render_svg(const fs::path& dot_file, const fs::path& svg_file, size_t nodes, const std::atomic<bool>* cancel) {
  std::error_code ec;
  fs::remove(svg_file, ec);  // never the picture of an earlier reproducer
  if (nodes > kMaxDrawnNodes || (cancel && cancel->load())) return false;
  const fs::path tmp = svg_file.string() + ".tmp";
  ProcessOptions options;
  options.timeout_seconds = kDrawingSeconds;
  options.cancel = cancel;
  options.max_output_bytes = 4096;
  auto result = run_process({"dot", "-Tsvg", dot_file.string(), "-o" + tmp.string()}, options);
  if (!result || !result->exited_ok()) {
    fs::remove(tmp, ec);
    return false;
  }
  fs::rename(tmp, svg_file, ec);
  return !ec;
}

}  // namespace reduce
