// Words of the commands and code the precision reports print for users to paste: shell words,
// Python string literals, regular expressions matching one node name exactly.
#pragma once

#include <string>

#include "adapters/script_words.h"  // shell_word, python_string

namespace reduce {

// A node name as a Python regular expression matching exactly it (re.escape's rule: every
// character that is not a letter, a digit or '_' escaped), anchored.
std::string exact_regex(const std::string& name);

}  // namespace reduce
