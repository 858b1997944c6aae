// Tensor sets: the inputs (or outputs) of one run, read from a file or folder and bound to a graph.
#pragma once

#include <filesystem>
#include <vector>

#include "core/model.h"
#include "core/tensor_file.h"

namespace reduce {

// Reads the tensors at `path`:
// - a .npz archive (entries named after the values);
// - a .npy or .pb file (one tensor; a .npy is named after its file stem);
// - a Polygraphy .json file with one iteration (core/polygraphy_json.h);
// - a folder: ONNX test data (`input_K.pb` or `output_K.pb`, ordered by K; a `test_data_set_N` folder
//   is one) or `.npy` files named after the values. `prefix` selects "input" or "output" files.
// Unnamed .pb tensors keep an empty name and are bound by position.
// `max_bytes` (0: no limit but max_tensor_bytes() per tensor) bounds what compressed files (.npz)
// may inflate to (`--max-memory`); other files hold their bytes as they are.
Expected<std::vector<NamedTensor>> read_tensor_set(const std::filesystem::path& path, std::string_view prefix = "input",
                                                   uint64_t max_bytes = 0);

// One input sample: the tensors of one run and where they were read from.
struct TensorSample {
  std::string source;  // the file or folder
  std::vector<NamedTensor> tensors;
};

// At most this many samples are read from one path (each is a run of the model per check).
inline constexpr size_t kMaxTensorSamples = 1000;

// The samples at `path`:
// - a folder holding `test_data_set_N` folders (ONNX test data): one sample per folder, by N;
// - a folder holding `.npz` archives and no other tensor file: one sample per archive, by name;
// - a Polygraphy .json file (--save-inputs or --save-outputs): one sample per iteration;
// - anything else read_tensor_set reads: one sample.
// Errors name the file or folder (an empty folder of samples, a missing `test_data_set_N`, too many).
Expected<std::vector<TensorSample>> read_tensor_samples(const std::filesystem::path& path,
                                                        std::string_view prefix = "input", uint64_t max_bytes = 0);

// Binds tensors to the graph's inputs that have no initializer (the ones a run must be given):
// by name when every tensor has a name, otherwise by position. Unknown names, duplicates, too many
// tensors, and a tensor whose element type or static dimensions differ from the input's declared
// type are errors naming `source`. Inputs left unbound are simply absent. A uint16 tensor given
// for a bfloat16 input is taken as its bits (numpy, and ONNX test data written by it, have no bfloat16).
Expected<std::vector<NamedTensor>> bind_inputs(const Graph& graph, std::vector<NamedTensor> tensors,
                                               const std::string& source);

// Binds expected values (reference outputs written by another tool, e.g. Polygraphy's
// --save-outputs) to the values the graph's nodes compute: by name when every tensor has one (any
// node output, so a file with every value marked serves intermediates too), otherwise by position
// to the graph outputs. A name no node computes, a duplicate, or a tensor whose type differs from
// the declared one is an error naming `source`.
Expected<std::vector<NamedTensor>> bind_expected(const Graph& graph, std::vector<NamedTensor> tensors,
                                                 const std::string& source);

// The graph inputs a run must be given (declared inputs without an initializer), in order.
std::vector<const ValueInfo*> runtime_inputs(const Graph& graph);

}  // namespace reduce
