// What `reduce batch` reduces: the rows of a manifest, or every .onnx of a folder on one engine.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace reduce {

struct BatchItem {
  std::filesystem::path model;
  std::string engine;
  std::string expected_kind;  // from the manifest, may be empty
  std::string expected_ops;   // ground truth op multiset, may be empty
  // The row's bundle folder under OUT: the model's stem, unique per row (batch_items): two rows with
  // one stem (x/model.onnx and y/model.onnx, or one model under two engines) never share a bundle.
  std::string folder;
};

// A manifest file (tab-separated, with 'model' and 'engine' columns, as written by reduce-corpus),
// a folder's manifest.tsv, or, without one, the folder's .onnx files on `engine`.
Expected<std::vector<BatchItem>> batch_items(const std::filesystem::path& source,
                                             const std::optional<std::string>& engine);

}  // namespace reduce
