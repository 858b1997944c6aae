// trtexec's data files: the raw input files of `--loadInputs=NAME:FILE` and the JSON that
// `--exportOutput=FILE` writes. That JSON is not quite JSON: trtexec prints it with C++ streams, so
// names are written unescaped, values with 6 significant digits, and non-finite values as `inf`,
// `-inf`, `nan` or `-nan`:
//   [
//     { "name" : "Y"
//     , "dimensions" : "2x3"
//     , "values" : [ 1, -0.5, inf, 3.14159, 0, 1e-05 ]
//     }
//   ]
// It carries no element type: the reader takes each output's from the model.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/tensor_file.h"

namespace reduce {

// The outputs of an --exportOutput file, in file order, each typed with `dtypes[name]` (the model's
// element type of that output). Strict: every output must be one of `dtypes` and appear once,
// `dimensions` must be `AxBxC` (empty for a scalar) and `values` hold exactly that many numbers,
// each representable in its type (integers for integer types, 0/1 for bool). Errors name the file,
// the output and the problem.
Expected<std::vector<NamedTensor>> read_trtexec_outputs(const std::filesystem::path& path,
                                                        const std::map<std::string, DType, std::less<>>& dtypes);

// Writes a tensor as trtexec's --loadInputs reads it: its elements' bytes, C order, no header.
Status write_raw_tensor(const std::filesystem::path& path, const Tensor& tensor);

}  // namespace reduce
