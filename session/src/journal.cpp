// The journal as JSON lines, read and written with nlohmann-json.
#include "session/journal.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <optional>

namespace reduce {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

Json candidate_json(const Candidate& c) {
  Json shapes = Json::object(), filled = Json::object(), dropped = Json::array();
  for (const auto& [name, shape] : c.input_shapes) shapes[name] = shape;
  for (const auto& [name, value] : c.filled) filled[name] = value;
  for (const auto& [node, attribute] : c.dropped_attributes) dropped.push_back(Json::array({node, attribute}));
  return {{"nodes", c.nodes},   {"frozen", c.frozen}, {"outputs", c.outputs},
          {"input_shapes", shapes}, {"filled", filled}, {"dropped_attributes", dropped}};
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
  return c;
}

}  // namespace

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

Status append_journal(const fs::path& dir, const Candidate& candidate, const JournalStamp& stamp) {
  const Json record = {{"candidate", candidate_json(candidate)},
                       {"nodes", stamp.nodes},
                       {"seconds", stamp.seconds},
                       {"engine_runs", stamp.engine_runs},
                       {"simplify_runs", stamp.simplify_runs}};
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
      last = JournalEntry{candidate_from(record.at("candidate")), record.value("simplify_runs", size_t{0})};
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
