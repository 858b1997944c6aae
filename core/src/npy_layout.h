// Private to core: the layout of a .npy image read from its first bytes, so an archive entry can
// be checked against its header before it is inflated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/status.h"

namespace reduce::detail {

// Bytes needed to know the header's length (magic, version, length field).
inline constexpr size_t kNpyPreambleBytes = 12;

// The size of the whole header (preamble, dict, padding) from the image's first bytes (at least
// 10, or kNpyPreambleBytes for versions 2 and 3).
Expected<uint64_t> npy_header_size(std::span<const std::byte> preamble);
// The data size, in bytes, the complete header `header` declares (its shape times its element size).
Expected<uint64_t> npy_data_size(std::span<const std::byte> header);

}  // namespace reduce::detail
