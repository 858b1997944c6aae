// Loading and saving ONNX models: embedded or external weights, memory-mapped, zero-copy.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/mapped_file.h"
#include "core/model.h"

namespace reduce {

// Loads a binary `.onnx` file, or the ONNX text format when the name ends in `.onnxtxt`.
// External data is memory-mapped and confined to the model's folder. Constant nodes become
// initializers. Errors name the file.
// A binary file without external data is remembered (Model::source): while the model stays as
// read, it is saved and serialized as the file's own bytes.
Expected<Model> load_model(const std::filesystem::path& path);

// The files reading the model at `path` opens: the file itself and the external-data files it names
// (resolved against its folder, whether or not they exist). Found without loading the model; a
// file that is not a model gives itself alone. For guards that must never write over an input.
std::vector<std::filesystem::path> files_model_reads(const std::filesystem::path& path);

// The file a model was read from, and the model as read (sharing its weights).
struct ModelSource {
  std::shared_ptr<const MappedFile> file;
  Model as_read;
};
// The bytes of the file `model` was read from, when the model is still what the file says (no node,
// value, attribute, weight, opset or metadata changed since load_model); otherwise nothing.
std::optional<std::span<const std::byte>> source_bytes(const Model& model);
// Parses a model from the ONNX text syntax (as in onnx/defs/parser.h). External data in text
// models resolves against `base_dir`.
Expected<Model> parse_model_text(std::string_view text, const std::filesystem::path& base_dir = {});

// Where a tensor already lives in an external-data file: lets candidates reference weights
// instead of writing them again.
class SharedWeights {
 public:
  struct Location {
    uint64_t offset = 0;
    uint64_t length = 0;
  };
  SharedWeights() = default;
  SharedWeights(std::string file_name) : file_name_(std::move(file_name)) {}
  const std::string& file_name() const { return file_name_; }
  void add(const Tensor& tensor, Location where) { locations_[tensor.bytes().data()] = where; }
  const Location* find(const Tensor& tensor) const;

 private:
  std::string file_name_;  // relative to the folder of the models that refer to it
  std::map<const std::byte*, Location> locations_;
};

struct SaveOptions {
  enum class Weights { Inline, External };
  Weights weights = Weights::Inline;
  // External: file name (in the model's folder) that receives the weights; default "<stem>.data".
  std::string external_file;
  // External: tensors smaller than this stay inline.
  size_t external_threshold = 1024;
  // When set, tensors it knows are referenced in its file (in the model's folder), not written.
  const SharedWeights* shared = nullptr;
  // Weights that still view one of the model's original external-data files (Model::external_data)
  // are referenced in a hard link of that file next to the model, `<stem>.original.data` (then
  // `<stem>.original1.data`, ...), instead of being written again. Where the link cannot be made
  // (another filesystem, not permitted) they are saved as `weights` says.
  bool link_external_data = false;
};

// How much of its original external-data files (Model::external_data) a model still reads: the
// bytes of its weights that view them (each counted once), and the size of those files. A save with
// link_external_data links `file_bytes` to reference `viewed_bytes`.
struct ExternalDataUse {
  uint64_t viewed_bytes = 0;
  uint64_t file_bytes = 0;
};
ExternalDataUse external_data_use(const Model& model);

// Saves atomically (the model and any weight file are written whole, then renamed into place).
Status save_model(const Model& model, const std::filesystem::path& path, const SaveOptions& options = {});
// Serializes with all weights inline (or referencing `shared`), e.g. for engines that read from memory.
Expected<std::string> serialize_model(const Model& model, const SharedWeights* shared = nullptr);
// Writes every initializer (with at least `threshold` bytes) of the model into one file and
// returns where each one went.
Expected<SharedWeights> write_shared_weights(const Model& model, const std::filesystem::path& file,
                                             size_t threshold = 1024);

// Runs the ONNX checker on a model (in memory) or a saved file; its message becomes the error.
// The linked library (ONNX 1.12) knows IR <= 8 and opsets <= 17: it refuses anything newer.
Status check_model(const Model& model);
Status check_model_file(const std::filesystem::path& path);

// Whether the linked ONNX library knows the model's IR version and every opset it imports from
// the domains it has schemas for (other domains are left to the engines).
bool onnx_checker_knows(const Model& model);
// The check every model written for an engine passes: the project's own structural validation
// (the one every loaded model passes: SSA, definitions, cycles, arity, attributes), then ONNX's
// checker only where it knows the model's IR version and opsets, never to refuse what is newer
// than the library (a PyTorch export at IR 10, opset 20, is as valid as one at IR 8).
Status check_model_for_engines(const Model& model);

}  // namespace reduce
