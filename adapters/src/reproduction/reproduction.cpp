// What reproduction scripts share: their file names, the patterns of recorded messages, config.json.
#include "adapters/reproduction.h"

#include <nlohmann/json.hpp>

#include "reproduction/scripts.h"

namespace reduce {

const std::vector<std::string>& reproduction_file_names() {
  static const std::vector<std::string> names{"repro.py", "repro.mjs", "repro.sh", "compare.py"};
  return names;
}

bool reproduction_needs_polygraphy_files(const EngineSpec& spec) {
  const EngineSpec& computing = spec.innermost();
  return computing.kind == EngineKind::Trt || computing.command.find("{inputs_json}") != std::string::npos;
}

std::string message_pattern(const std::string& normalized, size_t max_literal) {
  // A mask stands for what varied between runs; more than a few wildcards in a row would let a
  // backtracking engine (Python's re, JavaScript's RegExp) take long on a large log.
  constexpr int kMaxMasks = 8;
  static const char* const kMasks[] = {"<name>", "<path>", "<addr>", "<n>"};
  std::string out;
  size_t literal = 0;
  int masks = 0;
  for (size_t at = 0; at < normalized.size() && literal < max_literal;) {
    const char c = normalized[at];
    bool masked = false;
    for (const char* mask : kMasks)
      if (normalized.compare(at, std::char_traits<char>::length(mask), mask) == 0) {
        if (++masks > kMaxMasks) return out;
        if (!out.ends_with("[\\s\\S]*?")) out += "[\\s\\S]*?";
        at += std::char_traits<char>::length(mask);
        masked = true;
        break;
      }
    if (masked) continue;
    if (c == ' ') {
      out += "\\s+";
    } else {
      if (std::string_view("\\.^$|?*+()[]{}/").find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
    ++literal;
    ++at;
  }
  return out;
}

namespace repro {

std::string spec_in_comment(const EngineSpec& spec) {
  std::string text = to_string(spec);
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

std::string config_json(const ReproductionContext& c, const std::string& extra_key, const std::string& extra_json) {
  nlohmann::ordered_json j;
  j["model"] = c.model_file;
  j["inputs"] = c.inputs;
  j["outputs"] = nlohmann::ordered_json::array();
  for (const auto& o : c.outputs) j["outputs"].push_back({{"name", o.name}, {"atol", o.atol}, {"rtol", o.rtol}});
  j["stat"] = c.stat;
  j["quantile"] = c.quantile;
  j["failure"] = c.failure;
  const RecordedFailure& r = c.recorded;
  j["recorded"] = {{"kind", r.kind},     {"message", r.message}, {"patterns", r.patterns}, {"any_kind", r.any_kind},
                   {"shape", r.shape},   {"signal", r.signal},   {"magnitude", r.magnitude},
                   {"exit_code", r.exit_code}};
  j["timeout"] = c.timeout_seconds;
  j["release"] = c.engine_release;
  j["fail_codes"] = c.fail_codes;
  j["ignore_fail_codes"] = c.ignore_fail_codes;
  if (!extra_key.empty()) j[extra_key] = nlohmann::ordered_json::parse(extra_json);
  return j.dump(-1, ' ', true);
}

}  // namespace repro

}  // namespace reduce
