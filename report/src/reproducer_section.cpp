// report.md's Reproducer section (reproducer_section.h).
#include "report/reproducer_section.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <sstream>
#include <unordered_map>

#include "core/extract.h"

namespace reduce {

namespace {

// Tensors are summarized from their values up to this many elements (a report line reads at most
// 4 MB of a float weight); lists show this many items.
constexpr uint64_t kScannedElements = uint64_t{1} << 20;
constexpr size_t kListed = 8;
constexpr size_t kStringChars = 40;
constexpr size_t kBodyOpTypes = 6;

std::string number_text(double v, bool integral) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  if (integral) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

bool integral_type(DType t) { return !dtype_is_float(t) && dtype_size(t) > 0 && !dtype_is_small_float(t); }

std::string quoted(const std::string& s) {
  return "\"" + (s.size() > kStringChars ? s.substr(0, kStringChars) + "..." : s) + "\"";
}

template <typename T, typename Show>
std::string list_text(const std::vector<T>& items, Show show) {
  std::string out = "[";
  for (size_t k = 0; k < items.size() && k < kListed; ++k) out += (k ? ", " : "") + show(items[k]);
  if (items.size() > kListed) out += ", ... (" + std::to_string(items.size()) + ")";
  return out + "]";
}

// A few values in full, else all one value or the range: a weight is summarized, never dumped.
std::string values_text(const Tensor& t) {
  const uint64_t n = t.elements();
  const bool integral = integral_type(t.dtype());
  if (dtype_size(t.dtype()) == 0 || t.dtype() == DType::String) return "";
  if (n == 0) return "empty";
  if (n > kScannedElements) return byte_size_text(t.byte_size()) + ", values not read";
  double lo = INFINITY, hi = -INFINITY;
  uint64_t nan = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const double v = t.element_as_double(i);
    if (std::isnan(v)) ++nan;
    else lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (n <= kListed && (n == 1 || lo != hi || nan > 0)) {
    std::string out = "= [";
    for (uint64_t i = 0; i < n; ++i) out += (i ? ", " : "") + number_text(t.element_as_double(i), integral);
    return out + "]";
  }
  std::string out = nan == n ? "all nan" : lo == hi ? "all " + number_text(lo, integral)
                                                    : number_text(lo, integral) + ".." + number_text(hi, integral);
  return nan > 0 && nan < n ? out + ", " + std::to_string(nan) + " nan" : out;
}

std::string tensor_text(const Tensor& t) {
  const std::string values = values_text(t);
  return ValueType::tensor(t.dtype(), t.shape()).to_string() + (values.empty() ? "" : " " + values);
}

std::string body_text(const Graph& g) {
  std::map<std::string, size_t> ops;
  for (const Node& n : g.nodes) ++ops[n.op_type];
  std::string out = "graph(" + std::to_string(g.nodes.size()) + " nodes";
  size_t shown = 0;
  for (const auto& [op, count] : ops) {
    if (shown++ == kBodyOpTypes) {
      out += ", ...";
      break;
    }
    out += (shown == 1 ? ": " : ", ") + op + (count > 1 ? " x" + std::to_string(count) : "");
  }
  return out + ")";
}

std::string attribute_text(const Attribute& a) {
  using K = Attribute::Kind;
  if (!a.ref_attr_name.empty()) return "@" + a.ref_attr_name;
  switch (a.kind) {
    case K::Float: return number_text(a.f, false);
    case K::Int: return std::to_string(a.i);
    case K::String: return quoted(a.s);
    case K::Tensor: return tensor_text(a.t);
    case K::Graph: return a.g ? body_text(*a.g) : "graph";
    case K::Floats: return list_text(a.floats, [](float f) { return number_text(f, false); });
    case K::Ints: return list_text(a.ints, [](int64_t i) { return std::to_string(i); });
    case K::Strings: return list_text(a.strings, quoted);
    case K::Tensors: return list_text(a.tensors, tensor_text);
    case K::Graphs: return list_text(a.graphs, [](const auto& g) { return g ? body_text(*g) : std::string("graph"); });
    default: return "(kind " + std::to_string(static_cast<int>(a.kind)) + ")";
  }
}

// Value name -> type text: the run's tensors first, then inference, then declarations.
class ValueTypes {
 public:
  ValueTypes(const Model& model, const std::vector<NamedTensor>& inputs, const std::vector<NamedTensor>& outputs) {
    const Graph& g = model.graph;
    for (const auto* list : {&g.value_info, &g.inputs, &g.outputs})
      for (const auto& vi : *list) types_[vi.name] = vi.type.to_string();
    if (auto inferred = infer_value_types(model))
      for (const auto& [name, type] : *inferred) types_[name] = type.to_string();
    for (const auto* list : {&inputs, &outputs})
      for (const auto& t : *list) types_[t.name] = ValueType::tensor(t.tensor.dtype(), t.tensor.shape()).to_string();
  }
  std::string of(const std::string& name) const {
    auto it = types_.find(name);
    return name + ": " + (it == types_.end() ? "?" : it->second);
  }

 private:
  std::unordered_map<std::string, std::string> types_;
};

// The first names of a long list (a Concat of hundreds of values), then how many there are.
std::string names_text(const std::vector<std::string>& names, const std::string& what,
                       const std::function<std::string(const std::string&)>& show) {
  std::string out;
  for (size_t k = 0; k < names.size(); ++k) {
    if (k == kListed * 2 && names.size() > kListed * 3) return out + ", ... (" + std::to_string(names.size()) + " " + what + ")";
    out += (k ? ", " : "") + show(names[k]);
  }
  return out;
}

std::string node_line(const Node& n, const ValueTypes& types) {
  std::string line = names_text(n.outputs, "outputs", [&](const std::string& v) { return v.empty() ? "\"\"" : types.of(v); });
  line += " = " + (n.domain.empty() || n.domain == "ai.onnx" ? "" : n.domain + ".") + n.op_type;
  if (!n.attributes.empty()) {
    line += "<";
    for (size_t k = 0; k < n.attributes.size(); ++k)
      line += (k ? ", " : "") + n.attributes[k].name + "=" + attribute_text(n.attributes[k]);
    line += ">";
  }
  line += "(" + names_text(n.inputs, "inputs", [](const std::string& v) { return v; }) + ")";
  return line + (n.name.empty() ? "" : "  # " + n.name);
}

void write_header(const Model& model, std::ostream& out) {
  out << "ir_version " << model.ir_version << ", opset_import:";
  for (size_t k = 0; k < model.opset_imports.size(); ++k) {
    const auto& op = model.opset_imports[k];
    out << (k ? ", " : " ") << (op.domain.empty() ? "ai.onnx" : op.domain) << " " << op.version;
  }
  out << "\n";
}

// Up to `max` lines of `items`, then how many more.
template <typename T, typename Line>
void write_lines(const std::vector<T>& items, size_t max, const std::string& what, std::ostream& out, Line line) {
  for (size_t k = 0; k < items.size() && k < max; ++k) out << line(items[k]) << "\n";
  if (items.size() > max) out << "... " << items.size() - max << " more " << what << " (model.onnx has them all)\n";
}

}  // namespace

std::string byte_size_text(uint64_t bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) v /= 1024, ++u;
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

std::string reproducer_storage_note(const ReductionReport& r) {
  std::string note;
  if (!r.filled_stored_small.empty()) {
    note += "; filled weight" + std::string(r.filled_stored_small.size() > 1 ? "s" : "");
    for (size_t k = 0; k < r.filled_stored_small.size(); ++k) note += (k ? ", `" : " `") + r.filled_stored_small[k] + "`";
    note += " made by ConstantOfShape";
  }
  if (r.weights_linked)
    note += "; the weights are a hard link of the original's data file (`model.original.data`), most of which the "
            "reproducer reads";
  return note;
}

std::string reproducer_section(const Model& model, const std::vector<NamedTensor>& inputs,
                               const std::vector<NamedTensor>& outputs, size_t max_lines) {
  const Graph& g = model.graph;
  const ValueTypes types(model, inputs, outputs);
  std::ostringstream out;
  out << "```text\n";
  write_header(model, out);
  std::vector<ValueInfo> fed;  // graph inputs that are not weights
  for (const auto& vi : g.inputs)
    if (!g.find_initializer(vi.name)) fed.push_back(vi);
  write_lines(fed, max_lines, "inputs", out, [&](const ValueInfo& vi) { return "input " + types.of(vi.name); });
  write_lines(g.initializers, max_lines, "weights", out,
              [](const Initializer& w) { return "weight " + w.name + ": " + tensor_text(w.tensor); });
  write_lines(g.nodes, max_lines, "nodes", out, [&](const Node& n) { return node_line(n, types); });
  write_lines(g.outputs, max_lines, "outputs", out, [&](const ValueInfo& vi) { return "output " + types.of(vi.name); });
  out << "```\n";
  return out.str();
}

}  // namespace reduce
