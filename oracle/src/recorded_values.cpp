// Recording a reference run: large values written to a spill file as they are computed and
// memory-mapped back, small ones kept in memory up to a budget.
#include "oracle/recorded_values.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "core/extract.h"
#include "core/graph_algorithms.h"
#include "core/graph_index.h"

namespace reduce {

namespace fs = std::filesystem;

namespace {

Expected<fs::path> make_temp_dir() {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string templ = (base / "reduce-values-XXXXXX").string();
  if (!mkdtemp(templ.data())) return make_error("cannot create a temporary folder in " + base.string());
  return fs::path(templ);
}

// Appends values to one file, each at a page-aligned offset (so that releasing one value's pages
// never touches another's), and maps the file back when done.
class SpillFile {
 public:
  // A new file with a unique name in `dir`.
  static Expected<std::unique_ptr<SpillFile>> create(const fs::path& dir) {
    std::string templ = (dir / "values-XXXXXX").string();
    const int fd = ::mkstemp(templ.data());
    if (fd < 0) return Error{dir.string(), std::string("cannot create a spill file: ") + std::strerror(errno)};
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    return std::unique_ptr<SpillFile>(new SpillFile(templ, fd));
  }
  ~SpillFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  // Where `value` starts in the file.
  Expected<uint64_t> append(const Tensor& value) {
    constexpr uint64_t kAlign = 4096;
    const uint64_t offset = (size_ + kAlign - 1) / kAlign * kAlign;
    const auto bytes = value.bytes();
    uint64_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Error{path_.string(), std::string("cannot write spill file (disk full?): ") + std::strerror(errno)};
      done += static_cast<uint64_t>(n);
    }
    size_ = offset + bytes.size();
    return offset;
  }

  Expected<std::shared_ptr<MappedFile>> map() {
    if (::ftruncate(fd_, static_cast<off_t>(size_ + 1)) != 0)  // never map an empty file
      return Error{path_.string(), std::string("cannot write spill file: ") + std::strerror(errno)};
    ::close(fd_);
    fd_ = -1;
    auto mapped = MappedFile::open(path_);
    ::unlink(path_.c_str());  // the mapping keeps the data; nothing is left behind, even on a crash later
    return mapped;
  }

 private:
  SpillFile(fs::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  fs::path path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Where a value went in the spill file. No member allocates: these are made while the reference
// runs, between two large allocations, and an allocation that lives on would split the freed large
// blocks malloc could otherwise reuse (the heap would grow by every value recorded).
struct SpilledValue {
  size_t name;  // position in the list of node outputs
  DType dtype;
  size_t dims_at, rank;  // in the flat list of dims
  uint64_t offset;
  uint64_t bytes;
};

// `names` (node outputs in node order) cut into groups of about `group_bytes` by their inferred
// sizes (for references that return a run's values all at once).
std::vector<std::vector<std::string>> value_groups(const Model& model, const std::vector<std::string>& names,
                                                   uint64_t group_bytes) {
  std::vector<std::vector<std::string>> groups(1);
  auto types = infer_value_types(model);
  uint64_t acc = 0;
  for (const auto& v : names) {
    uint64_t bytes = 0;
    if (types) {
      auto it = types->find(v);
      if (it != types->end() && it->second.is_tensor() && it->second.has_shape) {
        bytes = dtype_size(static_cast<DType>(it->second.elem_type));
        for (const Dim& d : it->second.dims) bytes *= d.is_static() ? static_cast<uint64_t>(d.value) : 1;
      }
    }
    if (acc > 0 && acc + bytes > group_bytes) groups.emplace_back(), acc = 0;
    acc += bytes;
    groups.back().push_back(v);
  }
  return groups;
}

// The part of `model` the reference can prepare: every node except those it refuses and those
// that read what they compute. Each refused node is found by bisecting the topological prefixes
// of what is left (a prefix holds its producers, so it needs only the graph's inputs): about
// log2(nodes) prepares per refused node, and only when the whole model was refused.
struct RunnablePart {
  std::optional<Model> model;  // nullopt: nothing is left
  std::string first_refusal;
  size_t refused = 0;
  size_t unknown_values = 0;
};

Expected<RunnablePart> runnable_part(const Model& model, Engine& reference, const Error& refusal) {
  REDUCE_ASSIGN(Extractor extractor, Extractor::create(model));
  REDUCE_ASSIGN(GraphIndex index, GraphIndex::build(model.graph));
  const auto& order = index.topological_order();
  NodeMask left(model.graph.nodes.size(), true);
  RunnablePart part;
  part.first_refusal = refusal.what;
  auto kept = [&](size_t count) {  // the first `count` nodes still left, in topological order
    std::vector<size_t> nodes;
    for (size_t i : order) {
      if (nodes.size() == count) break;
      if (left[i]) nodes.push_back(i);
    }
    return nodes;
  };
  auto all_outputs = [&](const std::vector<size_t>& nodes) {
    ExtractOptions eo;
    for (size_t i : nodes)
      for (const auto& v : model.graph.nodes[i].outputs)
        if (!v.empty()) eo.outputs.push_back(v);
    return eo;
  };
  // A prefix that cannot even be extracted (a value of a node the reference lacks has no type)
  // counts as refused.
  auto prepares = [&](const std::vector<size_t>& nodes) -> Expected<bool> {
    if (nodes.empty()) return true;
    auto sub = extractor.extract(nodes, all_outputs(nodes));
    return sub.ok() && reference.prepare(*sub).ok();
  };
  for (bool first = true;; first = false) {
    const size_t count = static_cast<size_t>(std::count(left.begin(), left.end(), true));
    const std::vector<size_t> nodes = kept(count);
    REDUCE_ASSIGN(bool whole, first ? Expected<bool>(false) : prepares(nodes));  // the whole model was refused
    if (whole) {
      if (!nodes.empty()) {
        REDUCE_ASSIGN(Model sub, extractor.extract(nodes, all_outputs(nodes)));
        part.model = std::move(sub);
      }
      break;
    }
    // The shortest prefix that is refused ends with a refused node: prefixes of `lo` nodes prepare,
    // of `hi` nodes do not.
    size_t lo = 0, hi = count;
    while (hi - lo > 1) {
      const size_t mid = lo + (hi - lo) / 2;
      REDUCE_ASSIGN(bool ok, prepares(kept(mid)));
      (ok ? lo : hi) = mid;
    }
    const size_t refused = kept(hi).back();
    ++part.refused;
    const size_t start[] = {refused};
    const NodeMask gone = descendants(index, start, left);
    for (size_t i = 0; i < gone.size(); ++i)
      if (gone[i] && left[i]) {
        left[i] = false;
        for (const auto& v : model.graph.nodes[i].outputs) part.unknown_values += !v.empty();
      }
  }
  return part;
}

}  // namespace

RecordedValues::OwnedFolder::~OwnedFolder() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

RecordedValues::~RecordedValues() {
  if (ledger_) ledger_->discharge(bytes_in_memory_);
  values_.clear();
  spilled_.reset();
}

const Tensor* RecordedValues::find(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

void RecordedValues::release_pages(const Tensor& value) const {
  if (spilled_ && value.owner().get() == static_cast<const void*>(spilled_.get())) spilled_->release_pages(value.bytes());
}

// One recording as it is made: values kept in memory up to the budget, the others appended to the
// spill file and mapped back at the end; given values first, then what the reference computes.
class RecordedValues::Recorder {
 public:
  Recorder(const Model& model, const std::vector<NamedTensor>& inputs, const RecordOptions& options)
      : model_(model), options_(options) {
    rec_.ledger_ = options.ledger;
    for (const auto& in : inputs) {
      feed_[in.name] = in.tensor;
      rec_.values_[in.name] = in.tensor;
      hold(in.tensor.byte_size());
    }
    for (const Node& n : model.graph.nodes)
      for (const auto& v : n.outputs)
        if (!v.empty()) names_.push_back(v);
    position_.reserve(names_.size());
    for (size_t k = 0; k < names_.size(); ++k) position_.emplace(names_[k], k);
    spilled_.reserve(names_.size());
    dims_.reserve(names_.size() * 6);
  }

  // The given values (RecordOptions::given), kept as given.
  Status take_given() {
    for (const auto& g : options_.given) {
      if (!position_.count(g.name))
        return Error{options_.given_source, "'" + g.name + "' is not a value computed by a node of the model"};
      given_.emplace(g.name, &g.tensor);
      REDUCE_TRY(keep(g.name, g.tensor));
    }
    rec_.reference_ran_ = given_.empty() || given_.size() < names_.size();
    return {};
  }
  // False when every value was given: nothing left for the reference to compute.
  bool reference_needed() const { return rec_.reference_ran_; }

  // The reference's values of the model, or of the part of it the reference can run when it
  // refuses the whole model and the expected values come from elsewhere (values that depend on a
  // refused node then stay unknown).
  Status run_reference(Engine& reference) {
    auto whole = reference.prepare(model_);
    if (!whole && !options_.partial) {
      Error e = whole.error();
      e.what += " (give the expected values another way: --reference ENGINE that runs it, e.g. --reference ort, or "
                "--expected FILE with every output)";
      return e;
    }
    std::optional<Model> part;
    if (!whole) {
      REDUCE_ASSIGN(RunnablePart runnable, runnable_part(model_, reference, whole.error()));
      rec_.refusal_ = runnable.first_refusal;
      rec_.refused_nodes_ = runnable.refused;
      rec_.unknown_values_ = runnable.unknown_values;
      if (!runnable.model) return {};
      part = std::move(runnable.model);
      whole = reference.prepare(*part);
      if (!whole) return whole.error();
    }
    return compute(**whole, part ? &*part : nullptr);
  }

  Expected<RecordedValues> finish() {
    if (file_) {
      REDUCE_ASSIGN(auto mapped, file_->map());
      for (const auto& s : spilled_) {
        Shape shape(dims_.begin() + static_cast<ptrdiff_t>(s.dims_at), dims_.begin() + static_cast<ptrdiff_t>(s.dims_at + s.rank));
        REDUCE_ASSIGN(Tensor view, Tensor::view(s.dtype, std::move(shape), mapped, mapped->bytes().data() + s.offset, s.bytes));
        rec_.values_[names_[s.name]] = std::move(view);
      }
      rec_.spilled_ = std::move(mapped);
    }
    return std::move(rec_);
  }

 private:
  void hold(uint64_t bytes) {
    rec_.bytes_in_memory_ += bytes;
    if (rec_.ledger_) rec_.ledger_->charge(bytes);
  }

  // Every node output of what runs (`part`, or the whole model), fed its own inputs.
  Status compute(PreparedModel& prepared, const Model* part) {
    std::vector<std::string> wanted;
    if (part) {
      for (const Node& n : part->graph.nodes)
        for (const auto& v : n.outputs)
          if (!v.empty()) wanted.push_back(v);
      std::erase_if(feed_, [&](const auto& entry) {
        return std::none_of(part->graph.inputs.begin(), part->graph.inputs.end(),
                            [&](const ValueInfo& vi) { return vi.name == entry.first; });
      });
    }
    const std::vector<std::string>& to_compute = part ? wanted : names_;
    const auto keep_computed = [this](const std::string& name, Tensor value) { return this->keep_computed(name, std::move(value)); };
    RunOptions ro;
    ro.cancel = options_.cancel;
    if (prepared.streams_outputs()) {
      ro.outputs = to_compute;
      if (!ro.outputs.empty()) REDUCE_TRY(run_streaming(prepared, feed_, ro, keep_computed));
      return {};
    }
    for (auto& group : value_groups(part ? *part : model_, to_compute, uint64_t{1} << 30)) {
      if (group.empty()) continue;
      ro.outputs = std::move(group);
      REDUCE_TRY(run_streaming(prepared, feed_, ro, keep_computed));
    }
    return {};
  }

  // The reference's values, except the given ones: those are checked against it, not kept.
  Status keep_computed(const std::string& name, Tensor value) {
    auto at = given_.find(name);
    if (at == given_.end()) return keep(name, std::move(value));
    const Tensor& g = *at->second;
    if (g.dtype() != value.dtype() || g.shape() != value.shape())
      return Error{options_.given_source, "'" + name + "' is " + std::string(dtype_name(g.dtype())) + shape_to_string(g.shape()) +
                                              " but the model computes " + std::string(dtype_name(value.dtype())) +
                                              shape_to_string(value.shape())};
    if (options_.on_given) options_.on_given(name, value, g);
    return {};
  }

  Status keep(const std::string& name, Tensor value) {
    const uint64_t bytes = value.byte_size();
    if (bytes < options_.spill_bytes && rec_.bytes_in_memory_ + bytes <= options_.memory_budget) {
      // A view (Reshape, Slice) would keep the whole buffer it views alive: keep a copy instead.
      if (!value.writable()) {
        REDUCE_ASSIGN(value, Tensor::copy_of(value.dtype(), value.shape(), value.bytes()));
      }
      hold(bytes);
      rec_.values_[name] = std::move(value);
      return {};
    }
    if (!file_) {
      fs::path dir = options_.spill_dir;
      if (dir.empty()) {
        REDUCE_ASSIGN(dir, make_temp_dir());
        rec_.spill_folder_ = std::make_shared<OwnedFolder>();  // not from a temporary: its destructor removes
        rec_.spill_folder_->path = dir;
      }
      REDUCE_ASSIGN(file_, SpillFile::create(dir));
    }
    REDUCE_ASSIGN(uint64_t offset, file_->append(value));
    auto at = position_.find(name);
    if (at == position_.end()) return make_error("the reference returned an unrequested value '" + name + "'");
    spilled_.push_back({at->second, value.dtype(), dims_.size(), value.rank(), offset, bytes});
    dims_.insert(dims_.end(), value.shape().begin(), value.shape().end());
    rec_.bytes_spilled_ += bytes;
    return {};
  }

  const Model& model_;
  const RecordOptions& options_;
  RecordedValues rec_;
  TensorMap feed_;
  std::vector<std::string> names_;  // node outputs in node order
  std::unordered_map<std::string_view, size_t> position_;
  std::unique_ptr<SpillFile> file_;
  std::vector<SpilledValue> spilled_;
  std::vector<int64_t> dims_;
  std::unordered_map<std::string_view, const Tensor*> given_;
};

Expected<RecordedValues> RecordedValues::record(const Model& model, Engine& reference,
                                                const std::vector<NamedTensor>& inputs, const RecordOptions& options) {
  Recorder recorder(model, inputs, options);
  REDUCE_TRY(recorder.take_given());
  if (recorder.reference_needed()) REDUCE_TRY(recorder.run_reference(reference));
  return recorder.finish();
}

}  // namespace reduce
