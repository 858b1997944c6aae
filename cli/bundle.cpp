// Writing the reproducer bundle and its journal.
#include "bundle.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include <cerrno>

#include <fstream>
#include <functional>
#include <sstream>

#include "core/mapped_file.h"
#include "core/model_io.h"
#include "canonical_graph.h"
#include "json_writer.h"
#include "verdict_report.h"

extern char** environ;

namespace reduce::cli {

namespace fs = std::filesystem;

std::map<std::string, size_t> op_type_counts(const Graph& graph) {
  std::map<std::string, size_t> counts;
  for (const Node& n : graph.nodes)
    if (!is_constant_node(n))
      ++counts[n.domain.empty() ? n.op_type : n.domain + "." + n.op_type];
  return counts;
}

namespace {

// Weights stay inline unless they are large (then one model.data file next to model.onnx).
constexpr uint64_t kInlineWeightLimit = 64ull << 20;

Status make_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{dir.string(), "cannot create folder: " + ec.message()};
  return {};
}

// Replaces DIR/NAME/ with fresh tensor files: written into a temporary folder, then swapped in.
Status write_tensor_folder(const fs::path& dir, const std::string& name, const std::string& prefix,
                           const std::vector<NamedTensor>& tensors) {
  const fs::path tmp = dir / ("." + name + ".tmp"), old = dir / ("." + name + ".old"), final_dir = dir / name;
  std::error_code ec;
  fs::remove_all(tmp, ec);
  REDUCE_TRY(make_dir(tmp));
  for (size_t k = 0; k < tensors.size(); ++k)
    REDUCE_TRY(write_tensor_pb(tmp / (prefix + "_" + std::to_string(k) + ".pb"), tensors[k].name, tensors[k].tensor));
  fs::remove_all(old, ec);
  if (fs::exists(final_dir)) fs::rename(final_dir, old, ec);
  fs::rename(tmp, final_dir, ec);
  if (ec) return Error{final_dir.string(), "cannot replace folder: " + ec.message()};
  fs::remove_all(old, ec);
  return {};
}

std::string environment_line() {
  std::string s = "reduce (built with g++ " __VERSION__ ")";
  struct utsname u;
  if (uname(&u) == 0) s += ", " + std::string(u.sysname) + " " + u.release + " " + u.machine;
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);)
    if (line.rfind("model name", 0) == 0) {
      s += ", " + line.substr(line.find(':') + 2);
      break;
    }
  return s;
}

std::string percent_encode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c <= ' ' || c == '%' || c == ',' || c == '=' || c == ':' || c >= 0x7f) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(sep, start);
    out.emplace_back(s.substr(start, end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

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
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, "dot", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
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

}  // namespace

Status write_bundle_model(const fs::path& dir, const CandidateRun& run) {
  REDUCE_TRY(make_dir(dir));
  uint64_t weight_bytes = 0;
  for (const auto& init : run.model.graph.initializers) weight_bytes += init.tensor.byte_size();
  SaveOptions so;
  if (weight_bytes > kInlineWeightLimit) {
    so.weights = SaveOptions::Weights::External;
    so.external_file = "model.data";
  }
  // Inputs first: a model.onnx on disk always has its inputs next to it.
  REDUCE_TRY(write_tensor_folder(dir, "inputs", "input", run.inputs));
  return save_model(run.model, dir / "model.onnx", so);
}

Status write_bundle(const fs::path& dir, Oracle& oracle, const Candidate& candidate, const ReductionFacts& facts) {
  REDUCE_ASSIGN(CandidateRun run, oracle.materialize(candidate));
  REDUCE_TRY(write_bundle_model(dir, run));
  REDUCE_TRY(write_tensor_folder(dir, "expected", "output", run.expected));
  TensorMap actual;
  Verdict verdict = oracle.evaluate(candidate, nullptr, &actual);
  std::vector<NamedTensor> actual_list;
  for (const auto& e : run.expected)
    if (auto it = actual.find(e.name); it != actual.end()) actual_list.push_back({e.name, it->second});
  REDUCE_TRY(write_tensor_folder(dir, "actual", "output", actual_list));
  if (verdict.signature.kind == FailureKind::Error || verdict.signature.kind == FailureKind::Crash ||
      verdict.signature.kind == FailureKind::Timeout)
    REDUCE_TRY(write_file_atomic(dir / "actual" / "error.txt", verdict.signature.message + "\n"));

  const Graph& reduced = run.model.graph;
  const auto ops = op_type_counts(reduced);
  const FailureSignature& target = oracle.target();
  const OracleOptions& oo = oracle.options();

  // "node.attribute" for each attribute the reduction removed.
  std::vector<std::string> dropped;
  for (const auto& [node, attr] : candidate.dropped_attributes)
    dropped.push_back(oracle.model().graph.nodes[node].name + "." + attr);

  JsonWriter j;
  j.begin_object();
  j.key("original").begin_object().field("model", facts.model_path).field("nodes", static_cast<uint64_t>(facts.original_nodes))
      .field("op_types", static_cast<uint64_t>(op_type_counts(oracle.model().graph).size())).end_object();
  j.key("reduced").begin_object().field("nodes", static_cast<uint64_t>(count_nodes(reduced)));
  j.key("op_types").begin_object();
  for (const auto& [op, n] : ops) j.field(op, static_cast<uint64_t>(n));
  j.end_object();
  j.field("inputs", static_cast<uint64_t>(run.inputs.size())).field("outputs", static_cast<uint64_t>(reduced.outputs.size()));
  j.key("filled_weights").begin_object();
  for (const auto& [name, value] : candidate.filled) j.field(name, value);
  j.end_object();
  j.key("dropped_attributes").begin_array();
  for (const auto& d : dropped) j.value(d);
  j.end_array();
  j.end_object();
  j.key("failure").begin_object().field("kind", to_string(target.kind)).field("message", target.message)
      .field("signature", target.to_string()).field("reduced_kind", to_string(verdict.signature.kind))
      .field("reduced_message", verdict.signature.message).end_object();
  j.field("engine", oo.engine).field("reference", oo.reference);
  j.key("tolerance").begin_object().field("atol", oo.tolerance.atol).field("rtol", oo.tolerance.rtol)
      .field("error_stat", to_string(oo.tolerance.stat)).end_object();
  j.field("strategy", facts.strategy).field("jobs", facts.jobs);
  j.field("checks", facts.checks).field("cache_hits", facts.cache_hits).field("slipped", facts.slipped)
      .field("invalid", facts.invalid).field("seconds", facts.seconds).field("one_minimal", facts.one_minimal)
      .field("interrupted", facts.stopped);
  j.key("passes").begin_array();
  for (const auto& p : facts.passes)
    j.begin_object().field("name", p.name).field("checks", p.checks).field("successes", p.successes).field("seconds", p.seconds).end_object();
  j.end_array();
  j.field("command", facts.command_line).field("environment", environment_line());
  j.end_object();
  REDUCE_TRY(write_file_atomic(dir / "report.json", j.str()));

  // report.md: paste-ready for an issue tracker.
  std::ostringstream md;
  md << "# " << to_string(target.kind) << " on `" << oo.engine << "`\n\n"
     << "**Failure:** " << target.to_string() << "\n\n";
  if (!target.message.empty()) md << "```\n" << target.message << "\n```\n\n";
  md << "**Reduced:** " << facts.original_nodes << " nodes -> " << count_nodes(reduced) << " nodes (";
  bool first = true;
  for (const auto& [op, n] : ops) md << (first ? "" : ", ") << op << " x" << n, first = false;
  md << ")" << (facts.one_minimal ? ", 1-minimal (removing any single node makes the failure disappear)" : "")
     << (facts.stopped ? ", interrupted: best reproducer so far" : "") << ".\n\n";
  if (!candidate.filled.empty()) {
    md << "**Weights that do not matter** (filled with one value, the failure stays):";
    for (const auto& [name, value] : candidate.filled) md << " `" << name << "` = " << format_number(value) << ";";
    md << "\n\n";
  }
  if (!dropped.empty()) {
    md << "**Attributes that do not matter** (removed, the failure stays):";
    for (const auto& d : dropped) md << " `" << d << "`";
    md << "\n\n";
  }
  md
     << "**Reproduce:** `model.onnx` with `inputs/input_K.pb`; expected values (reference `" << oo.reference
     << "`) in `expected/`, the engine's in `actual/`.\n\n```sh\n" << facts.command_line << "\n"
     << "reduce check model.onnx --engine '" << oo.engine << "' --inputs inputs\n```\n\n"
     << "**Engine:** `" << oo.engine << "`, reference `" << oo.reference << "`, tolerance atol " << format_number(oo.tolerance.atol)
     << " rtol " << format_number(oo.tolerance.rtol) << " (" << to_string(oo.tolerance.stat) << ")\n\n"
     << "**Environment:** " << environment_line() << "\n\n";
  if (!verdict.outputs.empty()) {
    md << "**Errors of the reduced model:**\n\n";
    std::ostringstream table;
    print_output_table(verdict.outputs, table);
    md << table.str() << "\n";
  }
  md << "**Search:** " << facts.checks << " checks (" << facts.cache_hits << " cache hits, " << facts.slipped
     << " slipped, " << facts.invalid << " invalid) in " << format_number(facts.seconds) << " s with -j " << facts.jobs
     << ", strategy " << facts.strategy << ".\n\n";
  REDUCE_TRY(write_file_atomic(dir / "graph.dot", graph_dot(reduced)));
  if (render_svg(dir / "graph.dot", dir / "graph.svg")) md << "![reduced graph](graph.svg)\n";
  else md << "(graph.dot: install Graphviz `dot` for a picture)\n";
  REDUCE_TRY(write_file_atomic(dir / "report.md", md.str()));

  // bucket.txt: what `reduce batch` groups reproducers by (failure key, canonical graph form).
  std::string key = to_string(target.kind);
  if (target.kind == FailureKind::Error) key += ": " + target.normalized;
  if (target.kind == FailureKind::Crash) key += ": signal " + std::to_string(target.signal);
  std::string bucket = "failure " + key + "\n";
  bucket += "nodes " + std::to_string(facts.original_nodes) + " " + std::to_string(count_nodes(reduced)) + "\n";
  bucket += "checks " + std::to_string(facts.checks) + "\nseconds " + std::to_string(facts.seconds) + "\n";
  bucket += std::string("one_minimal ") + (facts.one_minimal ? "true" : "false") + "\nops";
  for (const auto& [op, n] : ops) bucket += " " + op + ":" + std::to_string(n);
  bucket += "\nform\n" + canonical_form(reduced);
  return write_file_atomic(dir / "bucket.txt", bucket);
}

Status append_journal(const fs::path& dir, const Candidate& c) {
  std::string line = "candidate";
  // One field per part of the candidate: key=item,item,...
  auto field = [&](const char* key, size_t count, const std::function<std::string(size_t)>& item) {
    line += ' ';
    line += key;
    line += '=';
    for (size_t k = 0; k < count; ++k) {
      if (k) line += ',';
      line += item(k);
    }
  };
  field("nodes", c.nodes.size(), [&](size_t k) { return std::to_string(c.nodes[k]); });
  field("frozen", c.frozen.size(), [&](size_t k) { return percent_encode(c.frozen[k]); });
  field("outputs", c.outputs.size(), [&](size_t k) { return percent_encode(c.outputs[k]); });
  const std::vector<std::pair<std::string, Shape>> shapes(c.input_shapes.begin(), c.input_shapes.end());
  field("shapes", shapes.size(), [&](size_t k) {
    std::string s = percent_encode(shapes[k].first);
    s += ':';
    for (size_t d = 0; d < shapes[k].second.size(); ++d) {
      if (d) s += 'x';
      s += std::to_string(shapes[k].second[d]);
    }
    return s;
  });
  const std::vector<std::pair<std::string, double>> filled(c.filled.begin(), c.filled.end());
  field("filled", filled.size(), [&](size_t k) {
    std::string s = percent_encode(filled[k].first);
    s += ':';
    s += format_number(filled[k].second);
    return s;
  });
  field("dropped", c.dropped_attributes.size(), [&](size_t k) {
    std::string s = std::to_string(c.dropped_attributes[k].first);
    s += ':';
    s += percent_encode(c.dropped_attributes[k].second);
    return s;
  });
  std::ofstream out(dir / "journal", std::ios::app);
  out << line << "\n";
  out.flush();
  if (!out) return Error{(dir / "journal").string(), "cannot append"};
  return {};
}

Expected<Candidate> read_journal(const fs::path& dir) {
  std::ifstream in(dir / "journal");
  if (!in) return Error{(dir / "journal").string(), "no journal to resume from"};
  std::string last;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("candidate ", 0) == 0) last = line;
  if (last.empty()) return Error{(dir / "journal").string(), "the journal has no candidate"};
  Candidate c;
  try {
    for (const auto& field : split(std::string_view(last).substr(10), ' ')) {
      const size_t eq = field.find('=');
      if (eq == std::string::npos) throw std::invalid_argument(field);
      const std::string key = field.substr(0, eq);
      const auto items = split(std::string_view(field).substr(eq + 1), ',');
      for (const auto& item : items) {
        if (key == "nodes") c.nodes.push_back(std::stoull(item));
        else if (key == "frozen") c.frozen.push_back(percent_decode(item));
        else if (key == "outputs") c.outputs.push_back(percent_decode(item));
        else if (key == "shapes") {
          const size_t colon = item.rfind(':');
          Shape shape;
          for (const auto& d : split(std::string_view(item).substr(colon + 1), 'x')) shape.push_back(std::stoll(d));
          c.input_shapes[percent_decode(item.substr(0, colon))] = shape;
        } else if (key == "filled") {
          const size_t colon = item.rfind(':');
          c.filled[percent_decode(item.substr(0, colon))] = std::stod(item.substr(colon + 1));
        } else if (key == "dropped") {
          const size_t colon = item.find(':');
          c.dropped_attributes.emplace_back(std::stoull(item.substr(0, colon)), percent_decode(item.substr(colon + 1)));
        }
      }
    }
  } catch (const std::exception&) {
    return Error{(dir / "journal").string(), "malformed journal line: " + last};
  }
  return c;
}

}  // namespace reduce::cli
