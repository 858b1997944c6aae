// Parses and prints `opt:OPTIONS`, and lists the passes (from passes.def; faults: engine/fault.h).
#include <algorithm>

#include "core/spelling.h"
#include "engine/optimized.h"

namespace reduce {

std::vector<std::pair<std::string, std::string>> optimized_passes() {
  return {
#define OPT_PASS(name, function, help) {name, help},
#include "passes.def"
#undef OPT_PASS
  };
}

bool OptimizedOptions::has(Fault fault) const { return std::find(faults.begin(), faults.end(), fault) != faults.end(); }

namespace {

std::string pass_names(const std::string& prefix = "") {
  std::string out;
  for (const auto& [name, help] : optimized_passes()) out += (out.empty() ? "" : ", ") + prefix + name;
  return out;
}

bool known_pass(std::string_view name) {
  const auto passes = optimized_passes();
  return std::any_of(passes.begin(), passes.end(), [&](const auto& p) { return p.first == name; });
}

template <typename T, typename U>
void add_unique(std::vector<T>& list, const U& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.emplace_back(item);
}

// `A+B+...` after `fault=`.
Status parse_faults(std::string_view names, std::vector<Fault>& out) {
  size_t s = 0;
  while (s <= names.size()) {
    const size_t plus = std::min(names.find('+', s), names.size());
    const std::string_view name = names.substr(s, plus - s);
    s = plus + 1;
    const std::optional<Fault> fault = find_fault(name);
    if (!fault) {
      std::vector<std::string> known;
      for (const FaultInfo& f : faults()) known.emplace_back(f.name);
      return make_error("unknown fault '" + std::string(name) + "'" + did_you_mean(name, known) + " (known: " + fault_names() + ")");
    }
    add_unique(out, *fault);
  }
  return {};
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
    if (word.substr(0, 5) == "fp32=") {
      REDUCE_ASSIGN(Fp32Nodes nodes, parse_fp32_nodes(word.substr(5)));
      for (auto& name : nodes.names)
        if (!out.fp32_nodes.contains(name)) out.fp32_nodes.names.push_back(std::move(name));
      if (out.fp32_nodes.file.empty()) out.fp32_nodes.file = nodes.file;
    } else if (word == "fp32") out.precision = Precision::FP32;
    else if (word == "fp16") out.precision = Precision::FP16;
    else if (word == "bf16") out.precision = Precision::BF16;
    else if (word.substr(0, 6) == "fault=") REDUCE_TRY(parse_faults(word.substr(6), out.faults));
    else if (word.substr(0, 3) == "no-" && known_pass(word.substr(3))) add_unique(out.disabled_passes, word.substr(3));
    else if (word.substr(0, 3) == "no-")
      return make_error("unknown pass '" + std::string(word.substr(3)) + "' (known: " + pass_names() + ")");
    else
      return make_error("unknown option '" + std::string(word) + "' (known: fp32, fp16, bf16, fp32=NODE+NODE|@FILE, fault=NAME[+NAME...], " +
                        pass_names("no-") + ")");
  }
  return out;
}

std::string to_string(const OptimizedOptions& options) {
  std::vector<std::string> words;
  if (options.precision == Precision::FP16) words.push_back("fp16");
  if (options.precision == Precision::BF16) words.push_back("bf16");
  if (!options.fp32_nodes.empty()) words.push_back("fp32=" + to_string(options.fp32_nodes));
  if (!options.faults.empty()) {
    std::string faults = "fault=";
    for (size_t i = 0; i < options.faults.size(); ++i) faults += (i ? "+" : "") + std::string(fault_name(options.faults[i]));
    words.push_back(faults);
  }
  for (const auto& pass : options.disabled_passes) words.push_back("no-" + pass);
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ",") + w;
  return out;
}

}  // namespace reduce
