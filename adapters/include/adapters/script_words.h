// Words of the commands and scripts reduce writes for people to run: shell words and command lines,
// Python string literals. Model-derived strings (node names, paths) are data in them, never code.
#pragma once

#include <string>
#include <vector>

namespace reduce {

// One shell word: single-quoted when it holds anything but safe characters ("it's" -> 'it'\''s').
std::string shell_word(const std::string& s);
// argv as one line a POSIX shell splits back into the same words.
std::string shell_command_line(const std::vector<std::string>& argv);
// A Python string literal ('...') of `s`: quotes, backslashes and control characters escaped.
std::string python_string(const std::string& s);

}  // namespace reduce
