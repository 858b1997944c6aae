// graph.dot and graph.svg of a reduced model.
#include "graph_picture.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <map>
#include <sstream>
#include <vector>

extern char** environ;

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

// graph.svg from graph.dot with Graphviz, when `dot` is installed (no shell: argv as is).
bool render_svg(const fs::path& dot_file, const fs::path& svg_file) {
  const fs::path tmp = svg_file.string() + ".tmp";
  const std::string in = dot_file.string(), out = "-o" + tmp.string();
  std::vector<char*> argv{const_cast<char*>("dot"), const_cast<char*>("-Tsvg"), const_cast<char*>(in.c_str()),
                          const_cast<char*>(out.c_str()), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  // `dot` starts with no blocked signals (the reduction blocks SIGINT/SIGTERM): Ctrl-C ends a long
  // rendering, and the bundle is complete without its picture.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, "dot", &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) return false;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::error_code ec;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fs::remove(tmp, ec);
    return false;
  }
  fs::rename(tmp, svg_file, ec);
  return !ec;
}

}  // namespace reduce
