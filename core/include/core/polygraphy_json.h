// Polygraphy's JSON data files: `polygraphy run --save-inputs` (a list of feed dicts, one per
// iteration) and `--save-outputs` (RunResults: per runner, one output dict per iteration). Each
// array is `{"array": <base64 of its .npy bytes>, "polygraphy_class": "ndarray"}`; an output's is
// wrapped in `{"values": ..., "polygraphy_class": "LazyArray"}`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/tensor_set.h"

namespace reduce {

// The iterations of a Polygraphy JSON file, one sample each (source "FILE iteration K"): the feed
// dicts of an inputs file, or the outputs of a RunResults file's first runner. Errors name the
// file and the problem (not JSON, an unknown layout, a bad array, too many iterations).
Expected<std::vector<TensorSample>> read_polygraphy_json(const std::filesystem::path& path);

// Whether `path` names a Polygraphy JSON file (by its .json extension).
bool is_polygraphy_json(const std::filesystem::path& path);

// Writes samples as Polygraphy reads them: an inputs file (a list of feed dicts) or, with a
// runner name, a RunResults file with one iteration per sample. Written to a temporary file
// and renamed into place.
Status write_polygraphy_inputs(const std::filesystem::path& path, const std::vector<std::vector<NamedTensor>>& iterations);
Status write_polygraphy_outputs(const std::filesystem::path& path, const std::string& runner,
                                const std::vector<std::vector<NamedTensor>>& iterations);

}  // namespace reduce
