// The corpus: the family table, generating one model, laying out body and trigger, the manifest.
#include "corpus_model.h"

#include <algorithm>
#include <fstream>
#include <map>
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
  std::map<std::string, size_t> counts;
  for (size_t i : minimal_nodes) ++counts[model.graph.nodes[i].op_type];
  std::string out;
  for (const auto& [op, n] : counts) out += (out.empty() ? "" : ",") + op + ":" + std::to_string(n);
  return out;
}

Value bury(GraphBuilder& b, Value stream, size_t target, size_t trigger_nodes, GrowFn grow, Random& rng,
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
  g.nodes = count_nodes(g.model.graph);
  g.model.doc_string = "reduce corpus (seed " + std::to_string(seed) + "): " + std::string(family.description) +
                       ". Fails on " + std::string(family.engine) + " (" + std::string(family.kind) + "); " +
                       (family.precision ? "passes with " + g.fp32_node_names() + " in FP32."
                                         : "minimal reproducer " + g.minimal_ops() + ".");
  return g;
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

Status write_corpus(const std::filesystem::path& out_dir, std::span<const Family* const> chosen,
                    std::span<const size_t> sizes, uint64_t seed, std::span<const Family* const> precision) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return Error{out_dir.string(), "cannot create the folder: " + ec.message()};
  if (!chosen.empty()) {
    std::string manifest = manifest_header();
    for (const Family* family : chosen)
      for (size_t size : sizes) {
        GeneratedModel g = generate(*family, size, seed);
        REDUCE_TRY(save_model(g.model, out_dir / g.file_name));
        manifest += manifest_line(g);
      }
    REDUCE_TRY(write_manifest(out_dir / "manifest.tsv", manifest));
  }
  if (!precision.empty()) {
    std::string manifest = precision_manifest_header();
    for (const Family* family : precision)
      for (size_t size : sizes) {
        GeneratedModel g = generate(*family, size, seed);
        REDUCE_TRY(save_model(g.model, out_dir / g.file_name));
        manifest += precision_manifest_line(g);
      }
    REDUCE_TRY(write_manifest(out_dir / "precision_manifest.tsv", manifest));
  }
  return Status::success();
}

}  // namespace reduce::corpus
