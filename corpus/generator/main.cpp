// reduce-corpus: writes the failing corpus models and their manifest.
//   reduce-corpus OUT_DIR [--seed N] [--sizes 10,100,1000,10000] [--faults a,b|all] [--precision a,b|all]
//                 [--quantized a,b|all] [--in-if|--in-loop]
#include <algorithm>
#include <charconv>
#include <optional>
#include <span>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "corpus_model.h"

namespace {

using reduce::corpus::Family;

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> parts;
  while (!s.empty()) {
    const size_t comma = s.find(',');
    parts.push_back(s.substr(0, comma));
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return parts;
}

template <typename T>
bool parse_number(std::string_view s, T& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

// The families a comma list (or "all") names, from `table`, into `out`; the first unknown name.
std::optional<std::string> family_list(std::string_view list, std::span<const Family> table, std::vector<const Family*>& out) {
  out.clear();
  for (const auto& f : table)
    if (list == "all") out.push_back(&f);
  if (list == "all") return std::nullopt;
  for (auto part : split(list)) {
    auto it = std::find_if(table.begin(), table.end(), [&](const Family& f) { return f.fault == part; });
    if (it == table.end()) return std::string(part);
    out.push_back(&*it);
  }
  return std::nullopt;
}

int usage(const std::string& problem) {
  if (!problem.empty()) std::cerr << "error: " << problem << "\n";
  std::cerr << "usage: reduce-corpus OUT_DIR [--seed N] [--sizes 10,100,1000,10000] [--faults a,b|all] "
               "[--precision a,b|all] [--quantized a,b|all] [--in-if|--in-loop]\nfaults:";
  for (const auto& f : reduce::corpus::families()) std::cerr << " " << f.fault;
  std::cerr << "\nprecision families (precision_manifest.tsv; without --faults, only these are written):";
  for (const auto& f : reduce::corpus::precision_families()) std::cerr << " " << f.fault;
  std::cerr << "\nquantized families (quantized_manifest.tsv, each model with its float model; without --faults, "
               "only these are written):";
  for (const auto& f : reduce::corpus::quantized_families()) std::cerr << " " << f.fault;
  std::cerr << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir;
  uint64_t seed = reduce::corpus::kDefaultSeed;
  std::vector<size_t> sizes{10, 100, 1000, 10000};
  std::vector<const Family*> chosen, precision, quantized;
  for (const auto& f : reduce::corpus::families()) chosen.push_back(&f);
  bool faults_given = false, precision_given = false, quantized_given = false;
  auto wrapping = reduce::corpus::Wrapping::None;

  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--help" || arg == "-h") return usage("");
    if (arg == "--in-if" || arg == "--in-loop") {
      wrapping = arg == "--in-if" ? reduce::corpus::Wrapping::If : reduce::corpus::Wrapping::Loop;
      continue;
    }
    if (arg == "--seed") {
      if (!has_value || !parse_number(argv[++i], seed)) return usage("--seed needs a non-negative integer");
    } else if (arg == "--sizes") {
      if (!has_value) return usage("--sizes needs a list of node counts");
      sizes.clear();
      for (auto part : split(argv[++i])) {
        size_t n = 0;
        if (!parse_number(part, n) || n == 0 || n > 1000000) return usage("bad size '" + std::string(part) + "'");
        sizes.push_back(n);
      }
      if (sizes.empty()) return usage("--sizes needs at least one size");
    } else if (arg == "--faults") {
      if (!has_value) return usage("--faults needs a list of faults or 'all'");
      const std::string_view list = argv[++i];
      faults_given = true;
      if (list != "all") {
        chosen.clear();
        for (auto part : split(list)) {
          const Family* f = reduce::corpus::find_family(part);
          if (!f) return usage("unknown fault '" + std::string(part) + "'");
          chosen.push_back(f);
        }
      }
    } else if (arg == "--precision" || arg == "--quantized") {
      const bool is_precision = arg == "--precision";
      const std::string kind = is_precision ? "precision" : "quantized";
      if (!has_value) return usage(std::string(arg) + " needs a list of " + kind + " families or 'all'");
      auto& list = is_precision ? precision : quantized;
      (is_precision ? precision_given : quantized_given) = true;
      if (auto unknown = family_list(argv[++i], is_precision ? reduce::corpus::precision_families()
                                                             : reduce::corpus::quantized_families(), list))
        return usage("unknown " + kind + " family '" + *unknown + "'");
    } else if (!arg.empty() && arg[0] == '-') {
      return usage("unknown option '" + std::string(arg) + "'");
    } else if (out_dir.empty()) {
      out_dir = arg;
    } else {
      return usage("more than one output folder");
    }
  }
  if (out_dir.empty()) return usage("missing OUT_DIR");

  if ((precision_given || quantized_given) && !faults_given) chosen.clear();
  if (auto status = reduce::corpus::write_corpus(out_dir, chosen, sizes, seed, precision, wrapping, quantized); !status) {
    std::cerr << "error: " << status.error().message() << "\n";
    return 1;
  }
  return 0;
}
