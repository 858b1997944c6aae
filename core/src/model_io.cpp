// Loading, validating, saving and checking models; the only place files and protobuf meet.
#include "core/model_io.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/defs/parser.h>

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>
#include <unordered_map>
#include <unordered_set>

#include "core/graph_index.h"
#include "core/mapped_file.h"
#include "core/validate.h"
#include "onnx_convert.h"

namespace reduce {

namespace fs = std::filesystem;

namespace {

// Structural checks every loaded model must pass before anything else looks at it.
Status validate(const Model& m) {
  if (m.ir_version <= 0) return make_error("the model has no IR version (is the file truncated?)");
  if (m.opset_imports.empty()) return make_error("the model imports no opset (is the file truncated?)");
  auto ix = GraphIndex::build(m.graph);
  if (!ix) return ix.error();
  return validate_model(m);
}

// ONNX's text parser recurses once per bracket level (a subgraph body is one `{` level deeper);
// text nested deeper than this is refused before the parser runs out of stack.
constexpr int kMaxTextNesting = kMaxSubgraphDepth + 16;

Status check_text_nesting(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  bool in_comment = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_comment) {
      in_comment = c != '\n';
    } else if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '#') {
      in_comment = true;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '(' || c == '[') {
      if (++depth > kMaxTextNesting)
        return make_error("brackets are nested more than " + std::to_string(kMaxTextNesting) +
                          " deep (subgraphs may nest " + std::to_string(kMaxSubgraphDepth) + " deep)");
    } else if (c == '}' || c == ')' || c == ']') {
      --depth;
    }
  }
  return {};
}

Expected<Model> import_proto(onnx::ModelProto& proto, const fs::path& base_dir) {
  detail::ImportContext ctx;
  ctx.base_dir = base_dir;
  try {
    REDUCE_ASSIGN(Model m, detail::model_from_proto(proto, ctx));
    REDUCE_TRY(validate(m));
    return m;
  } catch (const std::exception& e) {
    return make_error(std::string("cannot import the model: ") + e.what());
  }
}

}  // namespace

Expected<Model> load_model(const fs::path& path) {
  const std::string where = path.string();
  std::error_code ec;
  if (fs::is_directory(path, ec)) return Error{where, "is a folder, not a model file"};
  if (path.extension() == ".onnxtxt") {
    REDUCE_ASSIGN(std::string text, read_file(path));
    auto m = parse_model_text(text, path.parent_path().empty() ? fs::path(".") : path.parent_path());
    if (!m) return m.error().at(where);
    return m;
  }
  onnx::ModelProto proto;
  std::shared_ptr<const MappedFile> file;
  REDUCE_TRY(detail::parse_model_file(path, proto, &file));
  auto m = import_proto(proto, path.parent_path().empty() ? fs::path(".") : path.parent_path());
  if (!m) return m.error().at(where);
  // External data is resolved against the model's folder: only a self-contained file is handed on.
  if (m->external_data_files.empty()) m->source = std::make_shared<const ModelSource>(ModelSource{std::move(file), *m});
  return m;
}

std::vector<fs::path> files_model_reads(const fs::path& path) {
  std::vector<fs::path> files{path};
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return files;
  auto file = MappedFile::open(path);
  if (!file) return files;
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  for (const auto& location : detail::external_data_locations((*file)->bytes())) files.push_back(dir / location);
  return files;
}

std::optional<std::span<const std::byte>> source_bytes(const Model& model) {
  if (!model.source || !model.source->file || !model.external_data_files.empty()) return std::nullopt;
  const Model& read = model.source->as_read;
  const bool same = model.producer_name == read.producer_name && model.producer_version == read.producer_version &&
                    model.domain == read.domain && model.model_version == read.model_version &&
                    model.doc_string == read.doc_string && model.metadata_props == read.metadata_props &&
                    !first_difference(model, read);
  if (!same) return std::nullopt;
  return model.source->file->bytes();
}

namespace {

// ONNX's text parser reports "[ParseError at position (line: L column: C)]\nError context: TEXT\nWHAT";
// users get one line: "line L column C: WHAT (near `TEXT`)". Any other message has its lines joined.
std::string one_line_parse_error(const std::string& message) {
  auto trim = [](std::string s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return std::string();
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
  };
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= message.size()) {
    const size_t end = std::min(message.find('\n', start), message.size());
    std::string line = trim(message.substr(start, end - start));
    if (!line.empty()) lines.push_back(std::move(line));
    start = end + 1;
  }
  std::string position, context, what;
  for (const auto& line : lines) {
    static constexpr std::string_view kAt = "[ParseError at position (";
    static constexpr std::string_view kContext = "Error context:";
    if (line.rfind(kAt, 0) == 0 && line.size() > kAt.size() + 2) {
      position = line.substr(kAt.size(), line.size() - kAt.size() - 2);  // "line: L column: C"
      for (const char* label : {"line:", "column:"}) {
        const auto at = position.find(label);
        if (at != std::string::npos) position.erase(at + std::strlen(label) - 1, 1);
      }
    } else if (line.rfind(kContext, 0) == 0) {
      context = trim(line.substr(kContext.size()));
    } else {
      what += (what.empty() ? "" : "; ") + line;
    }
  }
  constexpr size_t kMaxContext = 60;
  if (context.size() > kMaxContext) context = "..." + context.substr(context.size() - kMaxContext);
  std::string out = position.empty() ? what : position + ": " + what;
  if (!context.empty()) out += " (near `" + context + "`)";
  return out;
}

}  // namespace

Expected<Model> parse_model_text(std::string_view text, const fs::path& base_dir) {
  REDUCE_TRY(check_text_nesting(text));
  onnx::ModelProto proto;
  try {
    const std::string owned(text);
    auto status = onnx::OnnxParser::Parse(proto, owned.c_str());
    if (!status.IsOK()) return make_error("cannot parse the model text: " + one_line_parse_error(status.ErrorMessage()));
  } catch (const std::exception& e) {
    return make_error("cannot parse the model text: " + one_line_parse_error(e.what()));
  }
  if (proto.ir_version() == 0) proto.set_ir_version(8);
  return import_proto(proto, base_dir);
}

const SharedWeights::Location* SharedWeights::find(const Tensor& tensor) const {
  auto it = locations_.find(tensor.bytes().data());
  if (it == locations_.end() || it->second.length != tensor.byte_size()) return nullptr;
  return &it->second;
}

namespace {

constexpr uint64_t kExternalAlignment = 64;

// Hard links of a model's original external-data files next to a model being saved: made under
// temporary names first, renamed into place by commit() when a weight refers to them, removed
// otherwise (and on every error).
class LinkedFiles {
 public:
  struct Link {
    const MappedFile* file;
    std::string name;  // next to the saved model
    fs::path tmp;
    bool used = false;
  };
  LinkedFiles(const Model& model, const fs::path& dir, const std::string& stem) : dir_(dir) {
    std::random_device rd;
    for (const auto& file : model.external_data) {
      if (!file || file->bytes().empty()) continue;
      const size_t k = links_.size();
      Link link{file.get(), stem + ".original" + (k ? std::to_string(k) : "") + ".data", {}};
      link.tmp = dir / ("." + link.name + ".tmp" + std::to_string(rd()));
      // Not permitted (another filesystem, protected_hardlinks): the weights are written instead.
      if (::link(file->path().c_str(), link.tmp.c_str()) == 0) links_.push_back(std::move(link));
    }
  }
  ~LinkedFiles() {
    for (const auto& l : links_)
      if (!l.tmp.empty()) ::unlink(l.tmp.c_str());
  }
  LinkedFiles(const LinkedFiles&) = delete;
  LinkedFiles& operator=(const LinkedFiles&) = delete;

  // The link holding `tensor`'s bytes and their offset there, if any.
  std::optional<std::pair<const std::string*, uint64_t>> find(const Tensor& tensor) {
    const std::byte* data = tensor.bytes().data();
    for (auto& l : links_) {
      const auto bytes = l.file->bytes();
      if (tensor.byte_size() == 0 || data < bytes.data() || data + tensor.byte_size() > bytes.data() + bytes.size()) continue;
      l.used = true;
      return std::pair{&l.name, static_cast<uint64_t>(data - bytes.data())};
    }
    return std::nullopt;
  }

  Status commit() {
    for (auto& l : links_) {
      if (!l.used) continue;
      const fs::path to = dir_ / l.name;
      if (::rename(l.tmp.c_str(), to.c_str()) != 0) return Error{to.string(), std::string("cannot link the weights: ") + std::strerror(errno)};
      // `to` already linked the same file: rename did nothing, and the destructor removes `tmp`.
    }
    return {};
  }

 private:
  fs::path dir_;
  std::vector<Link> links_;
};

// Places tensors in a shared file when known there, or in a link of the file they came from,
// otherwise (optionally) appends them to a new file.
class ExternalPlacement : public detail::WeightPlacement {
 public:
  ExternalPlacement(const SharedWeights* shared, std::string new_file, size_t threshold, LinkedFiles* links = nullptr)
      : shared_(shared), new_file_(std::move(new_file)), threshold_(threshold), links_(links) {}

  // Every inline initializer's bytes are written from its tensor by a StreamedModel.
  // Packed types (int4, ...) are one byte per element in memory: their serialized bytes are packed by
  // tensor_to_proto instead, and they stay inline (docs/core.md, "Narrow element types").
  bool stream_inline(const Tensor& tensor, const onnx::TensorProto& proto) override {
    if (dtype_is_packed(tensor.dtype())) return false;
    streamed_.emplace_back(&proto, tensor);
    return true;
  }
  const std::vector<std::pair<const onnx::TensorProto*, Tensor>>& streamed() const { return streamed_; }

  bool place_external(const Tensor& tensor, onnx::TensorProto& proto) override {
    if (dtype_is_packed(tensor.dtype())) return false;
    if (links_) {
      if (auto at = links_->find(tensor)) {
        detail::set_external_location(proto, *at->first, at->second, tensor.byte_size());
        return true;
      }
    }
    if (shared_) {
      if (const auto* loc = shared_->find(tensor)) {
        detail::set_external_location(proto, shared_->file_name(), loc->offset, loc->length);
        return true;
      }
    }
    if (new_file_.empty() || tensor.byte_size() < threshold_ || tensor.byte_size() == 0) return false;
    auto [it, inserted] = placed_.try_emplace(tensor.bytes().data(), SharedWeights::Location{});
    if (inserted) {
      end_ = (end_ + kExternalAlignment - 1) / kExternalAlignment * kExternalAlignment;
      it->second = {end_, tensor.byte_size()};
      end_ += tensor.byte_size();
      pending_.push_back(tensor);
    }
    detail::set_external_location(proto, new_file_, it->second.offset, it->second.length);
    return true;
  }

  // Writes the placed tensors, in placement order, at their offsets.
  Status write(const fs::path& path) const {
    AtomicFileWriter out(path);
    REDUCE_TRY(out.open());
    uint64_t pos = 0;
    static const std::byte zeros[kExternalAlignment] = {};
    for (const Tensor& t : pending_) {
      const uint64_t offset = placed_.at(t.bytes().data()).offset;
      REDUCE_TRY(out.write({zeros, static_cast<size_t>(offset - pos)}));
      REDUCE_TRY(out.write(t.bytes()));
      pos = offset + t.byte_size();
    }
    return out.commit();
  }

  SharedWeights table() const {
    SharedWeights table(new_file_);
    for (const Tensor& t : pending_) table.add(t, placed_.at(t.bytes().data()));
    return table;
  }

 private:
  const SharedWeights* shared_;
  std::string new_file_;
  size_t threshold_;
  LinkedFiles* links_;
  uint64_t end_ = 0;
  std::unordered_map<const std::byte*, SharedWeights::Location> placed_;
  std::vector<Tensor> pending_;
  std::vector<std::pair<const onnx::TensorProto*, Tensor>> streamed_;
};

// Protobuf's output, block by block, into an AtomicFileWriter.
class FileWriterStream : public google::protobuf::io::CopyingOutputStream {
 public:
  explicit FileWriterStream(AtomicFileWriter& out) : out_(out) {}
  bool Write(const void* buffer, int size) override {
    status = out_.write({static_cast<const std::byte*>(buffer), static_cast<size_t>(size)});
    return status.ok();
  }
  Status status;

 private:
  AtomicFileWriter& out_;
};

// Writes the serialized model straight to the file (then renames it into place): the inline
// weights are held neither a second time in the proto nor as one serialized string.
Status write_model_atomic(const detail::StreamedModel& model, const fs::path& path) {
  AtomicFileWriter out(path);
  REDUCE_TRY(out.open());
  FileWriterStream file(out);
  {
    google::protobuf::io::CopyingOutputStreamAdaptor stream(&file);
    const bool serialized = model.write(stream) && stream.Flush();
    if (!file.status.ok()) return file.status;
    if (!serialized) return Error{path.string(), "cannot serialize the model"};
  }
  return out.commit();
}

// Protobuf refuses to parse a message of 2 GB or more.
Status check_serialized_size(const detail::StreamedModel& model) {
  if (model.size() > static_cast<uint64_t>(INT_MAX))
    return make_error("the model is larger than 2 GB with inline weights; save its weights as external data");
  return {};
}

}  // namespace

Status save_model(const Model& model, const fs::path& path, const SaveOptions& options) {
  const std::string where = path.string();
  if (options.weights == SaveOptions::Weights::Inline && !options.shared)
    if (auto bytes = source_bytes(model)) {  // the user's file as given
      AtomicFileWriter out(path);
      REDUCE_TRY(out.open());
      REDUCE_TRY(out.write(*bytes));
      return out.commit();
    }
  std::string external;
  if (options.weights == SaveOptions::Weights::External)
    external = options.external_file.empty() ? path.stem().string() + ".data" : options.external_file;
  if (!external.empty() && (fs::path(external).has_parent_path() || external == path.filename().string()))
    return Error{where, "external data file name '" + external + "' must be a plain file name next to the model"};
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::optional<LinkedFiles> links;
  if (options.link_external_data) links.emplace(model, dir, path.stem().string());
  ExternalPlacement placement(options.shared, external, options.external_threshold, links ? &*links : nullptr);
  const detail::StreamedModel streamed(detail::model_to_proto(model, &placement), placement.streamed());
  if (Status s = check_serialized_size(streamed); !s.ok()) return s.error().at(where);
  if (!external.empty()) REDUCE_TRY(placement.write(dir / external));
  if (links) REDUCE_TRY(links->commit());
  return write_model_atomic(streamed, path);
}

ExternalDataUse external_data_use(const Model& model) {
  ExternalDataUse use;
  std::unordered_set<const std::byte*> seen;
  for (const auto& file : model.external_data) {
    if (!file) continue;
    const auto bytes = file->bytes();
    use.file_bytes += bytes.size();
    for (const auto& init : model.graph.initializers) {
      const std::byte* data = init.tensor.bytes().data();
      const bool inside = init.tensor.byte_size() > 0 && data >= bytes.data() &&
                          data + init.tensor.byte_size() <= bytes.data() + bytes.size();
      if (inside && seen.insert(data).second) use.viewed_bytes += init.tensor.byte_size();
    }
  }
  return use;
}

Expected<std::string> serialize_model(const Model& model, const SharedWeights* shared) {
  if (!shared)
    if (auto bytes = source_bytes(model)) return std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  ExternalPlacement placement(shared, {}, 0);
  const detail::StreamedModel streamed(detail::model_to_proto(model, &placement), placement.streamed());
  REDUCE_TRY(check_serialized_size(streamed));
  std::string out;
  out.reserve(streamed.size());
  {
    google::protobuf::io::StringOutputStream stream(&out);
    if (!streamed.write(stream)) return make_error("cannot serialize the model");
  }
  return out;
}

Expected<SharedWeights> write_shared_weights(const Model& model, const fs::path& file, size_t threshold) {
  ExternalPlacement placement(nullptr, file.filename().string(), threshold);
  onnx::TensorProto scratch;
  for (const auto& init : model.graph.initializers) {
    scratch.Clear();
    placement.place_external(init.tensor, scratch);
  }
  REDUCE_TRY(placement.write(file));
  return placement.table();
}

Status check_model(const Model& model) {
  try {
    onnx::checker::check_model(detail::model_to_proto(model, nullptr));
  } catch (const std::exception& e) {
    return make_error(std::string("ONNX checker: ") + e.what());
  }
  return {};
}

bool onnx_checker_knows(const Model& model) {
  if (model.ir_version > onnx::IR_VERSION) return false;
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const auto& op : model.opset_imports) {
    const std::string domain = op.domain == "ai.onnx" ? std::string() : op.domain;
    auto it = ranges.find(domain);
    // Other domains (plugins, contrib ops) are the engine's business: the checker lets them through.
    if (it != ranges.end() && op.version > it->second.second) return false;
  }
  return true;
}

Status check_model_for_engines(const Model& model) {
  REDUCE_TRY(validate(model));
  if (!onnx_checker_knows(model)) return {};
  return check_model(model);
}

Status check_model_file(const fs::path& path) {
  try {
    onnx::checker::check_model(path.string());
  } catch (const std::exception& e) {
    return Error{path.string(), std::string("ONNX checker: ") + e.what()};
  }
  return {};
}

}  // namespace reduce
