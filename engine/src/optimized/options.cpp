// Parses `opt:OPTIONS` and lists the passes and faults (from passes.def and faults.def).
#include <algorithm>

#include "engine/optimized.h"

namespace reduce {

std::vector<std::pair<std::string, std::string>> optimized_passes() {
  return {
#define REDUCE_PASS(name, function, help) {name, help},
#include "passes.def"
#undef REDUCE_PASS
  };
}

std::vector<std::pair<std::string, std::string>> optimized_faults() {
  return {
#define REDUCE_FAULT(name, help) {name, help},
#include "faults.def"
#undef REDUCE_FAULT
  };
}

namespace {

std::string name_list(const std::vector<std::pair<std::string, std::string>>& entries, const std::string& prefix = "") {
  std::string out;
  for (const auto& [name, help] : entries) out += (out.empty() ? "" : ", ") + prefix + name;
  return out;
}

bool known(const std::vector<std::pair<std::string, std::string>>& entries, std::string_view name) {
  return std::any_of(entries.begin(), entries.end(), [&](const auto& e) { return e.first == name; });
}

void add_unique(std::vector<std::string>& list, std::string_view name) {
  if (std::find(list.begin(), list.end(), name) == list.end()) list.emplace_back(name);
}

}  // namespace

Expected<OptimizedOptions> parse_optimized_options(std::string_view options) {
  OptimizedOptions out;
  size_t start = 0;
  while (start <= options.size()) {
    const size_t comma = std::min(options.find(',', start), options.size());
    const std::string_view word = options.substr(start, comma - start);
    start = comma + 1;
    if (word.empty()) {
      if (comma == options.size() && options.empty()) break;
      return make_error("empty option in '" + std::string(options) + "'");
    }
    if (word == "fp32") out.precision = Precision::FP32;
    else if (word == "fp16") out.precision = Precision::FP16;
    else if (word == "bf16") out.precision = Precision::BF16;
    else if (word.substr(0, 6) == "fault=") {
      std::string_view names = word.substr(6);
      size_t s = 0;
      while (s <= names.size()) {
        const size_t plus = std::min(names.find('+', s), names.size());
        const std::string_view fault = names.substr(s, plus - s);
        s = plus + 1;
        if (!known(optimized_faults(), fault))
          return make_error("unknown fault '" + std::string(fault) + "' (known: " + name_list(optimized_faults()) + ")");
        add_unique(out.faults, fault);
      }
    } else if (word.substr(0, 3) == "no-" && known(optimized_passes(), word.substr(3))) {
      add_unique(out.disabled_passes, word.substr(3));
    } else if (word.substr(0, 3) == "no-") {
      return make_error("unknown pass '" + std::string(word.substr(3)) + "' (known: " + name_list(optimized_passes()) + ")");
    } else {
      return make_error("unknown option '" + std::string(word) + "' (known: fp32, fp16, bf16, fault=NAME[+NAME...], " +
                        name_list(optimized_passes(), "no-") + ")");
    }
  }
  return out;
}

}  // namespace reduce
