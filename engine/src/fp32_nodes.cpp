// Fp32Nodes: `fp32=NAME+NAME` and `fp32=@FILE`, their canonical form, and the check against a model.
#include "engine/fp32_nodes.h"

#include <algorithm>
#include <unordered_set>

#include "core/mapped_file.h"

namespace reduce {

namespace {

constexpr uint64_t kMaxFileBytes = uint64_t{64} << 20;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const int hi = s[i] == '%' && i + 2 < s.size() ? hex_digit(s[i + 1]) : -1;
    const int lo = hi >= 0 ? hex_digit(s[i + 2]) : -1;
    if (lo >= 0) {
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string encode(std::string_view s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '%' || c == '+' || c == ',' || c == ']' || (c == '@' && i == 0)) {
      out += '%';
      out += kHex[(static_cast<unsigned char>(c) >> 4) & 15];
      out += kHex[static_cast<unsigned char>(c) & 15];
    } else {
      out += c;
    }
  }
  return out;
}

std::string_view trimmed(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

void add_unique(std::vector<std::string>& names, std::string name) {
  if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
}

void collect_names(const Graph& graph, std::unordered_set<std::string>& names) {
  for (const Node& n : graph.nodes) {
    names.insert(n.name);
    for (const Attribute& a : n.attributes) {
      if (a.g) collect_names(*a.g, names);
      for (const auto& g : a.graphs) collect_names(*g, names);
    }
  }
}

}  // namespace

bool Fp32Nodes::contains(std::string_view name) const {
  return std::find(names.begin(), names.end(), name) != names.end();
}

Expected<Fp32Nodes> parse_fp32_nodes(std::string_view value) {
  Fp32Nodes out;
  if (value.empty()) return make_error("fp32= needs node names (fp32=NAME+NAME or fp32=@FILE)");
  if (value.front() == '@') {
    out.file = std::string(value.substr(1));
    if (out.file.empty()) return make_error("fp32=@ needs a file name");
    auto text = read_file(out.file, kMaxFileBytes);
    if (!text) return text.error().at(out.file);
    std::string_view rest = *text;
    while (!rest.empty()) {
      const size_t eol = std::min(rest.find('\n'), rest.size());
      const std::string_view line = trimmed(rest.substr(0, eol));
      rest.remove_prefix(std::min(eol + 1, rest.size()));
      if (!line.empty()) add_unique(out.names, std::string(line));
    }
    if (out.names.empty()) return Error{out.file, "no node names (one name per line) for fp32=@" + out.file};
    return out;
  }
  size_t start = 0;
  while (start <= value.size()) {
    const size_t plus = std::min(value.find('+', start), value.size());
    const std::string_view name = value.substr(start, plus - start);
    start = plus + 1;
    if (name.empty()) return make_error("empty node name in fp32=" + std::string(value));
    add_unique(out.names, decode(name));
  }
  return out;
}

std::string to_string(const Fp32Nodes& nodes) {
  std::string out;
  for (const auto& name : nodes.names) out += (out.empty() ? "" : "+") + encode(name);
  return out;
}

std::vector<std::string> Fp32Nodes::present_in(const Graph& graph) const {
  std::unordered_set<std::string> known;
  collect_names(graph, known);
  std::vector<std::string> out;
  for (const auto& name : names)
    if (!name.empty() && known.count(name)) out.push_back(name);
  return out;
}

Status check_fp32_nodes(const Fp32Nodes& nodes, const Graph& graph) {
  const std::vector<std::string> present = nodes.present_in(graph);
  for (const auto& name : nodes.names)
    if (std::find(present.begin(), present.end(), name) == present.end())
      return Error{nodes.file, "fp32: no node named '" + name + "' in the model"};
  return {};
}

}  // namespace reduce
