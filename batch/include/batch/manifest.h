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
  // ONNX's test-case layout (NAME/model.onnx beside NAME/test_data_set_0/): the data set, used as
  // the model's inputs and expected outputs (--inputs and --expected); empty for other models.
  std::filesystem::path data;
  // The reference to reduce against, when the row names one (a release scan's passing release).
  std::string reference;
  bool test_case = false;  // found as NAME/model.onnx in a folder: its bundle folder is NAME
};
// The name of an item's bundle folder before it is made unique: the model's stem, or for ONNX's
// test-case layout the case's folder name ("test_abs" for test_abs/model.onnx).
std::string item_stem(const BatchItem& item);

// A manifest file (tab-separated, with 'model' and 'engine' columns, as written by reduce-corpus),
// a folder's manifest.tsv, or, without one, the folder's .onnx files and the ONNX test cases in it
// (subfolders with a model.onnx, their test_data_set_0/ as data) on `engine`, in name order.
Expected<std::vector<BatchItem>> batch_items(const std::filesystem::path& source,
                                             const std::optional<std::string>& engine);

}  // namespace reduce
