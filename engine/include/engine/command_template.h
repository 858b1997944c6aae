// Command templates (`cmd:` and `check:` engines, --slot-env): split into argv once, placeholders filled per run.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace reduce {

// Splits a template into argv tokens like a POSIX shell's word splitting, without any expansion:
// tokens are separated by whitespace; '...' keeps everything literally; "..." keeps everything but
// `\"` and `\\`; outside quotes a backslash escapes the next character. An unterminated quote or
// a trailing backslash is an error, as is an empty template.
Expected<std::vector<std::string>> split_command_template(std::string_view command_template);

// Placeholder values by name without braces: {"model", "/tmp/a b/model.onnx"}.
using Placeholders = std::map<std::string, std::string, std::less<>>;

// Replaces every `{name}` of `placeholders` in each token by plain string replacement. The result
// is never split again, so a value with spaces or shell syntax stays one argument, intact.
// Braces that name no placeholder are left as they are.
std::vector<std::string> fill_placeholders(const std::vector<std::string>& tokens, const Placeholders& placeholders);
std::string fill_placeholders(std::string_view text, const Placeholders& placeholders);

}  // namespace reduce
