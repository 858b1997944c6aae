// "Did you mean": the known word nearest to a misspelt one, for the one-line errors of commands,
// options, engine kinds and faults.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reduce {

// Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`.
size_t edit_distance(std::string_view a, std::string_view b);

// The known word nearest to `word`: within max(1, length / 3) edits, ignoring case (`--Engine`),
// or one that starts with `word` (at least 3 letters); nearest first, ties in `known`'s order.
// Nothing when no word is near: a guess far off misleads more than no guess.
std::optional<std::string> closest_word(std::string_view word, const std::vector<std::string>& known);

// " (did you mean 'X'?)" with `prefix` before X (e.g. "--"), or "" when nothing is near.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& known, std::string_view prefix = "");

}  // namespace reduce
