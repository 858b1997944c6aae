// The nearest known word to a misspelt one (spelling.h).
#include "core/spelling.h"

#include <algorithm>
#include <cctype>

namespace reduce {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Words longer than this are not compared (a pasted paragraph is not a misspelt option).
constexpr size_t kMaxWord = 64;

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: three rows of the Damerau-Levenshtein table.
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t replace = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, replace});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) current[j] = std::min(current[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::optional<std::string> closest_word(std::string_view word, const std::vector<std::string>& known) {
  if (word.empty() || word.size() > kMaxWord) return std::nullopt;
  const std::string w = lower(word);
  const size_t limit = std::max<size_t>(1, w.size() / 3);
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const auto& k : known) {
    if (k.empty() || k.size() > kMaxWord) continue;
    const std::string candidate = lower(k);
    if (candidate == w) return k;  // differs only in case
    size_t d = edit_distance(w, candidate);
    if (w.size() >= 3 && candidate.rfind(w, 0) == 0) d = std::min(d, limit);  // a prefix of it
    if (d < best_distance) best_distance = d, best = k;
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& known, std::string_view prefix) {
  const auto best = closest_word(word, known);
  return best ? " (did you mean '" + std::string(prefix) + *best + "'?)" : "";
}

}  // namespace reduce
