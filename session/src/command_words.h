// Words of the commands and code the precision reports print for users to paste: shell words,
// Python string literals, regular expressions matching one node name exactly.
#pragma once

#include <string>

namespace reduce {

// One shell word: single-quoted when it holds anything but safe characters (node names are data).
std::string shell_word(const std::string& s);
// A node name as a Python regular expression matching exactly it (re.escape's rule: every
// character that is not a letter, a digit or '_' escaped), anchored.
std::string exact_regex(const std::string& name);
// A Python string literal ('...') of `s`.
std::string python_string(const std::string& s);

}  // namespace reduce
