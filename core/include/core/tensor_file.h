// Tensor files: ONNX TensorProto .pb (ONNX test data), NumPy .npy and .npz archives.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace reduce {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// --- ONNX TensorProto, the format of test_data_set_N/input_K.pb ---
// Raw and typed (float_data, int64_data, ...) values are read; external data is refused.
Expected<NamedTensor> read_tensor_pb(const std::filesystem::path& path);
// Writes raw_data and the name. Tensors over 2 GB do not fit in a protobuf and are refused.
Status write_tensor_pb(const std::filesystem::path& path, const std::string& name, const Tensor& tensor);

// --- NumPy .npy (format versions 1.0, 2.0, 3.0) ---
// Accepted descrs: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1 c8 c16, in either byte order ('<', '>',
// '=', and '|' for one-byte types). Big-endian data is converted; fortran_order arrays are
// transposed into C order. numpy has no bfloat16, so bfloat16 tensors cannot be written.
Expected<Tensor> read_npy(const std::filesystem::path& path);
// Parses a whole .npy image. With an `owner` keeping `bytes` alive the tensor is a view of them
// when no conversion is needed; without one the data is copied.
Expected<Tensor> parse_npy(std::span<const std::byte> bytes, std::shared_ptr<const void> owner = nullptr);
// Writes format 1.0 (2.0 when the header needs it), native little-endian, C order.
Status write_npy(const std::filesystem::path& path, const Tensor& tensor);
// The header that precedes the tensor's bytes in a .npy file (magic, version, dict, padding).
Expected<std::string> npy_header(const Tensor& tensor);
// Header plus data: the whole .npy image in memory.
Expected<std::string> npy_bytes(const Tensor& tensor);

// --- NumPy .npz: a zip of .npy entries, stored or deflated ---
// Entry "x.npy" gives the tensor named "x"; tensors come in archive order. Other entries are refused.
// The entries together may inflate to at most `max_bytes` (0: each up to max_tensor_bytes()), checked
// from the sizes the archive declares before anything is allocated: a small archive of zeros can
// claim gigabytes.
Expected<std::vector<NamedTensor>> read_npz(const std::filesystem::path& path, uint64_t max_bytes = 0);
// Writes one "<name>.npy" entry per tensor, deflated when `compress` (np.savez_compressed).
Status write_npz(const std::filesystem::path& path, const std::vector<NamedTensor>& tensors, bool compress);

}  // namespace reduce
