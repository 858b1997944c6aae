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

// graph.svg (and graph.png) from graph.dot with Graphviz, when `dot` is installed.
GraphPictures render_graph(const fs::path& dot_file, const fs::path& svg_file, const fs::path& png_file, size_t nodes,
                           const std::atomic<bool>* cancel) {
  std::error_code ec;
  fs::remove(svg_file, ec);  // never the picture of an earlier reproducer
  if (!png_file.empty()) fs::remove(png_file, ec);
  if (nodes > kMaxDrawnNodes || (cancel && cancel->load())) return {};
  // Hidden names (".graph.svg.tmp"): a bundle folder counts them as its own.
  const auto hidden = [](const fs::path& file) { return file.parent_path() / ("." + file.filename().string() + ".tmp"); };
  const fs::path svg_tmp = hidden(svg_file), png_tmp = png_file.empty() ? fs::path() : hidden(png_file);
  ProcessOptions options;
  options.timeout_seconds = kDrawingSeconds;
  options.cancel = cancel;
  options.max_output_bytes = 4096;
  // One layout, two renderings: dot writes each -T format to the -o after it.
  std::vector<std::string> argv = {"dot", dot_file.string(), "-Tsvg", "-o" + svg_tmp.string()};
  if (!png_file.empty()) argv.insert(argv.end(), {"-Tpng", "-o" + png_tmp.string()});
  auto result = run_process(argv, options);
  GraphPictures drawn;
  const auto place = [&](const fs::path& tmp, const fs::path& file) {
    if (!result || !result->exited_ok() || !fs::is_regular_file(tmp, ec) || fs::file_size(tmp, ec) == 0) {
      fs::remove(tmp, ec);
      return false;
    }
    fs::rename(tmp, file, ec);
    return !ec;
  };
  drawn.svg = place(svg_tmp, svg_file);
  if (!png_file.empty()) drawn.png = place(png_tmp, png_file);
  return drawn;
}

}  // namespace reduce
