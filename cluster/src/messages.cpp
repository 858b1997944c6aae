// Messages between ranks as CBOR (nlohmann-json): what a check needs, and what the oracle on rank 0
// needs of a verdict (signature to classify, per-output comparisons, engine time).
#include "cluster/messages.h"

#include <nlohmann/json.hpp>

#include "session/journal.h"

namespace reduce::cluster {

namespace {

using Json = nlohmann::json;

std::string to_bytes(const Json& j) {
  const std::vector<uint8_t> cbor = Json::to_cbor(j);
  return {cbor.begin(), cbor.end()};
}

// A malformed message is a bug or a foreign sender; it must not take the rank down.
template <typename T, typename F>
Expected<T> from_bytes(const std::string& bytes, F&& read) {
  try {
    return read(Json::from_cbor(bytes));
  } catch (const Json::exception& e) {
    return make_error(std::string("malformed message between ranks: ") + e.what());
  }
}

Json comparison_json(const OutputComparison& o) {
  return {o.name, o.passed, o.structural_problem, o.dtype_differs, o.shape_differs, o.elements, o.mismatched, o.nonfinite_new, o.nonfinite_differs,
          o.nan, o.inf, o.max_abs, o.max_rel, o.mean_abs, o.ratio, o.first_bad};
}

OutputComparison comparison_from(const Json& j) {
  OutputComparison o;
  size_t k = 0;
  j.at(k++).get_to(o.name);
  j.at(k++).get_to(o.passed);
  j.at(k++).get_to(o.structural_problem);
  j.at(k++).get_to(o.dtype_differs);
  j.at(k++).get_to(o.shape_differs);
  for (auto* count : {&o.elements, &o.mismatched, &o.nonfinite_new, &o.nonfinite_differs, &o.nan, &o.inf})
    j.at(k++).get_to(*count);
  for (auto* stat : {&o.max_abs, &o.max_rel, &o.mean_abs, &o.ratio}) j.at(k++).get_to(*stat);
  j.at(k++).get_to(o.first_bad);
  return o;
}

}  // namespace

std::string encode_hello(const Hello& h) {
  return to_bytes({{"ready", h.ready}, {"error", h.error}, {"slots", h.slots}, {"model_nodes", h.model_nodes}});
}

Expected<Hello> decode_hello(const std::string& bytes) {
  return from_bytes<Hello>(bytes, [](const Json& j) {
    return Hello{j.at("ready"), j.at("error"), j.at("slots"), j.at("model_nodes")};
  });
}

// The candidate as the journal writes it: one description of a candidate on disk and on the wire.
std::string encode_check(uint64_t id, const Candidate& c) { return to_bytes({{"id", id}, {"candidate", candidate_to_json(c)}}); }

Expected<std::pair<uint64_t, Candidate>> decode_check(const std::string& bytes) {
  auto fields = from_bytes<std::pair<uint64_t, std::string>>(bytes, [](const Json& j) {
    return std::pair<uint64_t, std::string>{j.at("id").get<uint64_t>(), j.at("candidate").get<std::string>()};
  });
  if (!fields) return fields.error();
  REDUCE_ASSIGN(Candidate c, candidate_from_json(fields->second));
  return std::pair<uint64_t, Candidate>{fields->first, std::move(c)};
}

std::string encode_verdict(uint64_t id, const Verdict& v) {
  const FailureSignature& s = v.signature;
  Json outputs = Json::array();
  for (const auto& o : v.outputs) outputs.push_back(comparison_json(o));
  return to_bytes({{"id", id},
                   {"signature", {static_cast<int>(s.kind), s.message, s.normalized, s.signal, s.magnitude, s.exit_code}},
                   {"outputs", outputs},
                   {"seconds", v.seconds},
                   {"cache_hit", v.cache_hit},
                   {"invalid", v.invalid},
                   {"cancelled", v.cancelled},
                   {"invalid_reason", v.invalid_reason},
                   {"cannot_take", v.cannot_take},
                   {"work", {v.work_nodes, v.work_weight_bytes}}});
}

Expected<std::pair<uint64_t, Verdict>> decode_verdict(const std::string& bytes) {
  return from_bytes<std::pair<uint64_t, Verdict>>(bytes, [](const Json& j) {
    Verdict v;
    const Json& s = j.at("signature");
    const int kind = s.at(0);
    if (kind < 0 || kind > static_cast<int>(FailureKind::Shape)) throw Json::other_error::create(501, "failure kind", &s);
    v.signature = {static_cast<FailureKind>(kind), s.at(1), s.at(2), s.at(3), s.at(4), s.size() > 5 ? s.at(5).get<int>() : 0};
    for (const auto& o : j.at("outputs")) v.outputs.push_back(comparison_from(o));
    j.at("seconds").get_to(v.seconds);
    j.at("cache_hit").get_to(v.cache_hit);
    j.at("invalid").get_to(v.invalid);
    j.at("cancelled").get_to(v.cancelled);
    j.at("invalid_reason").get_to(v.invalid_reason);
    if (j.contains("cannot_take")) j.at("cannot_take").get_to(v.cannot_take);
    if (j.contains("work")) {
      v.work_nodes = j.at("work").at(0).get<uint64_t>();
      v.work_weight_bytes = j.at("work").at(1).get<uint64_t>();
    }
    return std::pair<uint64_t, Verdict>{j.at("id").get<uint64_t>(), std::move(v)};
  });
}

std::string encode_id(uint64_t id) { return to_bytes({{"id", id}}); }

Expected<uint64_t> decode_id(const std::string& bytes) {
  return from_bytes<uint64_t>(bytes, [](const Json& j) { return j.at("id").get<uint64_t>(); });
}

std::string encode_stop(bool rank_lost) { return to_bytes({{"rank_lost", rank_lost}}); }

bool decode_stop(const std::string& bytes) {
  auto lost = from_bytes<bool>(bytes, [](const Json& j) { return j.at("rank_lost").get<bool>(); });
  return lost && *lost;
}

namespace {

Json attempt_json(const Attempt& a) { return {{"item", a.item}, {"number", a.number}, {"place", a.place}}; }

Attempt attempt_from(const Json& j) {
  return Attempt{j.at("item").get<uint64_t>(), j.at("number").get<int>(), j.at("place").get<std::string>()};
}

}  // namespace

std::string encode_work(const std::optional<Attempt>& attempt) {
  return to_bytes({{"attempt", attempt ? attempt_json(*attempt) : Json(nullptr)}});
}

Expected<std::optional<Attempt>> decode_work(const std::string& bytes) {
  return from_bytes<std::optional<Attempt>>(bytes, [](const Json& j) -> std::optional<Attempt> {
    const Json& a = j.at("attempt");
    if (a.is_null()) return std::nullopt;
    return attempt_from(a);
  });
}

std::string encode_done(const Attempt& attempt, const std::string& status) {
  return to_bytes({{"attempt", attempt_json(attempt)}, {"status", status}});
}

Expected<std::pair<Attempt, std::string>> decode_done(const std::string& bytes) {
  return from_bytes<std::pair<Attempt, std::string>>(bytes, [](const Json& j) {
    return std::pair<Attempt, std::string>{attempt_from(j.at("attempt")), j.at("status").get<std::string>()};
  });
}

}  // namespace reduce::cluster
