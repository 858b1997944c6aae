// RFC 4648 base64 (Python's base64.b64encode and b64decode): Polygraphy's arrays, files a script carries.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace reduce {

// Strict: length a multiple of 4, '=' padding only at the end; errors name the first bad character.
Expected<std::string> decode_base64(const std::string& text);
std::string encode_base64(std::string_view bytes);

}  // namespace reduce
