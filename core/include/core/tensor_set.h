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
// - a folder: ONNX test data (`input_K.pb` or `output_K.pb`, ordered by K; a `test_data_set_N` folder
//   is one) or `.npy` files named after the values. `prefix` selects "input" or "output" files.
// Unnamed .pb tensors keep an empty name and are bound by position.
Expected<std::vector<NamedTensor>> read_tensor_set(const std::filesystem::path& path, std::string_view prefix = "input");

// Binds tensors to the graph's inputs that have no initializer (the ones a run must be given):
// by name when every tensor has a name, otherwise by position. Unknown names, duplicates and
// too many tensors are errors naming `source`. Inputs left unbound are simply absent.
Expected<std::vector<NamedTensor>> bind_inputs(const Graph& graph, std::vector<NamedTensor> tensors,
                                               const std::string& source);

// The graph inputs a run must be given (declared inputs without an initializer), in order.
std::vector<const ValueInfo*> runtime_inputs(const Graph& graph);

}  // namespace reduce
