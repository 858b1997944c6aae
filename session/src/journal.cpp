// The journal as JSON lines, read and written with nlohmann-json, and the identity of a reduction.
#include "session/journal.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <optional>

#include "core/mapped_file.h"

namespace reduce {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

Json candidate_json(const Candidate& c) {
  Json shapes = Json::object(), filled = Json::object(), dropped = Json::array();
  for (const auto& [name, shape] : c.input_shapes) shapes[name] = shape;
  for (const auto& [name, value] : c.filled) filled[name] = value;
  for (const auto& [node, attribute] : c.dropped_attributes) dropped.push_back(Json::array({node, attribute}));
  Json j = {{"nodes", c.nodes},   {"frozen", c.frozen}, {"outputs", c.outputs},
            {"input_shapes", shapes}, {"filled", filled}, {"dropped_attributes", dropped}};
  if (!c.removed_body_nodes.empty()) j["removed_body_nodes"] = c.removed_body_nodes;
  return j;
}

// Throws Json::exception on a malformed record.
Candidate candidate_from(const Json& j) {
  Candidate c;
  j.at("nodes").get_to(c.nodes);
  j.at("frozen").get_to(c.frozen);
  j.at("outputs").get_to(c.outputs);
  for (const auto& [name, shape] : j.at("input_shapes").items()) c.input_shapes[name] = shape.get<Shape>();
  for (const auto& [name, value] : j.at("filled").items()) c.filled[name] = value.get<double>();
  for (const auto& d : j.at("dropped_attributes")) c.dropped_attributes.emplace_back(d.at(0).get<size_t>(), d.at(1).get<std::string>());
  if (j.contains("removed_body_nodes")) j.at("removed_body_nodes").get_to(c.removed_body_nodes);
  return c;
}

// FNV-1a 64: simple, stable across builds and platforms (a journal outlives the binary that wrote it).
class Fnv1a64 {
 public:
  void add(std::span<const std::byte> bytes) {
    for (std::byte b : bytes) h_ = (h_ ^ static_cast<uint64_t>(b)) * 1099511628211ull;
  }
  void add(std::string_view text) { add(std::as_bytes(std::span<const char>(text.data(), text.size()))); }
  std::string hex() const {
    char out[24];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h_));
    return std::string("fnv1a64:") + out;
  }

 private:
  uint64_t h_ = 1469598103934665603ull;
};

// The model file's bytes, read through a map a piece at a time (pages released as it goes: a
// multi-GB file is not kept resident for this).
std::string file_hash(const fs::path& file) {
  auto mapped = MappedFile::open(file);
  if (!mapped) return "unread (" + mapped.error().what + ")";
  const std::span<const std::byte> all = (*mapped)->bytes();
  Fnv1a64 h;
  constexpr size_t kPiece = size_t{64} << 20;
  for (size_t at = 0; at < all.size(); at += kPiece) {
    const auto piece = all.subspan(at, std::min(kPiece, all.size() - at));
    h.add(piece);
    (*mapped)->release_pages(piece);
  }
  return h.hex();
}

// Names, types, shapes and values: the sample as the engine sees it.
std::string inputs_hash(const std::vector<NamedTensor>& inputs) {
  Fnv1a64 h;
  for (const NamedTensor& t : inputs) {
    h.add(t.name + '\0' + std::to_string(static_cast<int>(t.tensor.dtype())));
    for (int64_t d : t.tensor.shape()) h.add("," + std::to_string(d));
    h.add(t.tensor.bytes());
  }
  return h.hex();
}

// The shortest text that reads back as `v` (0.0001, not 0.00010000000000000000479).
std::string exact(double v) {
  char out[32];
  const auto end = std::to_chars(out, out + sizeof out, v).ptr;
  return std::string(out, end);
}

std::string tolerance_text(const Tolerance& t) {
  return "atol " + exact(t.atol) + " rtol " + exact(t.rtol) + " " + to_string(t.stat) +
         (t.stat == ErrorStat::Quantile ? " " + exact(t.quantile) : "") + (t.by_element_type ? " by element type" : "");
}

}  // namespace

ReductionIdentity reduction_identity(const fs::path& model_file, const Oracle& oracle, const std::string& sample) {
  const OracleOptions& o = oracle.options();
  return {{{"model", file_hash(model_file)},
           {"nodes", std::to_string(count_nodes(oracle.model().graph))},
           {"engine", o.engine},
           {"reference", o.reference},
           {"tolerance", tolerance_text(o.tolerance)},
           {"fail_regexes", Json(o.fail_regexes).dump()},
           {"fail_codes", Json(o.fail_codes).dump()},
           {"ignore_fail_codes", Json(o.ignore_fail_codes).dump()},
           {"repeat", std::to_string(o.repeat)},
           {"sample", sample},
           {"inputs", inputs_hash(oracle.inputs())}}};
}

Status check_journal_identity(const fs::path& dir, const JournalEntry& entry, const ReductionIdentity& now) {
  const std::string where = (dir / "journal").string();
  if (!entry.identity)
    return Error{where, "written by an older reduce that did not record the model, engine and options it belongs to; "
                        "run without --resume to start again"};
  std::string differs;
  for (const auto& [name, value] : now.values) {
    const auto& was = entry.identity->values;
    const auto it = std::find_if(was.begin(), was.end(), [&](const auto& v) { return v.first == name; });
    const std::string then = it == was.end() ? "(none)" : "'" + it->second + "'";
    if (it == was.end() || it->second != value) differs += (differs.empty() ? "" : ", ") + name + " " + then + " (now '" + value + "')";
  }
  if (differs.empty() && entry.identity->values.size() == now.values.size()) return {};
  if (differs.empty()) differs = "values this reduce does not know";
  return Error{where, "belongs to another reduction: " + differs +
                          "; resume with the same model, engine and options, or run without --resume"};
}

std::string candidate_to_json(const Candidate& candidate) {
  return candidate_json(candidate).dump(-1, ' ', false, Json::error_handler_t::replace);
}

Expected<Candidate> candidate_from_json(const std::string& text) {
  try {
    return candidate_from(Json::parse(text));
  } catch (const Json::exception& e) {
    return make_error(std::string("malformed candidate: ") + e.what());
  }
}

Status append_journal(const fs::path& dir, const ReductionIdentity& identity, const Candidate& candidate,
                      const JournalStamp& stamp) {
  Json reduction = Json::object();
  for (const auto& [name, value] : identity.values) reduction[name] = value;
  const Json record = {{"candidate", candidate_json(candidate)},
                       {"nodes", stamp.nodes},
                       {"seconds", stamp.seconds},
                       {"engine_runs", stamp.engine_runs},
                       {"simplify_runs", stamp.simplify_runs},
                       {"reduction", reduction}};
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{dir.string(), "cannot create folder: " + ec.message()};
  std::ofstream out(dir / "journal", std::ios::app);
  out << record.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  out.flush();
  if (!out) return Error{(dir / "journal").string(), "cannot append"};
  return {};
}

Expected<JournalEntry> read_journal_entry(const fs::path& dir) {
  const fs::path path = dir / "journal";
  std::ifstream in(path);
  if (!in) return Error{path.string(), "no journal to resume from"};
  // The last complete record counts: a line cut short by a crash is skipped.
  std::optional<JournalEntry> last;
  std::string bad;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    try {
      const Json record = Json::parse(line);
      last = JournalEntry{candidate_from(record.at("candidate")), record.value("simplify_runs", size_t{0}), std::nullopt};
      if (record.contains("reduction")) {
        ReductionIdentity identity;
        for (const auto& [name, value] : record.at("reduction").items()) identity.values.emplace_back(name, value.get<std::string>());
        last->identity = std::move(identity);
      }
    } catch (const Json::exception&) {
      bad = line;
    }
  }
  if (last) return *last;
  if (!bad.empty()) return Error{path.string(), "malformed journal line: " + bad};
  return Error{path.string(), "the journal has no candidate"};
}

Expected<Candidate> read_journal(const fs::path& dir) {
  REDUCE_ASSIGN(JournalEntry entry, read_journal_entry(dir));
  return std::move(entry.candidate);
}

}  // namespace reduce
