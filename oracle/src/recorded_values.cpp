// Recording a reference run: every value kept in memory up to a budget, the rest spilled to disk
// and memory-mapped back.
#include "oracle/recorded_values.h"

#include <unistd.h>

#include <fstream>
#include <random>

#include "core/extract.h"
#include "core/mapped_file.h"

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

// Writes tensors into one file and maps it back as views (each at a 64-byte aligned offset).
Status spill(const std::vector<std::pair<std::string, Tensor>>& group, const fs::path& file,
             std::map<std::string, Tensor, std::less<>>& into) {
  std::vector<uint64_t> offsets;
  {
    std::ofstream out(file, std::ios::binary);
    if (!out) return Error{file.string(), "cannot write spill file"};
    uint64_t pos = 0;
    static const char zeros[64] = {};
    for (const auto& [name, t] : group) {
      const uint64_t pad = (64 - pos % 64) % 64;
      out.write(zeros, static_cast<std::streamsize>(pad));
      pos += pad;
      offsets.push_back(pos);
      out.write(reinterpret_cast<const char*>(t.bytes().data()), static_cast<std::streamsize>(t.byte_size()));
      pos += t.byte_size();
    }
    out.write(zeros, 1);  // never map an empty file
    if (!out) return Error{file.string(), "cannot write spill file (disk full?)"};
  }
  REDUCE_ASSIGN(auto mapped, MappedFile::open(file));
  for (size_t k = 0; k < group.size(); ++k) {
    const Tensor& t = group[k].second;
    REDUCE_ASSIGN(Tensor view, Tensor::view(t.dtype(), t.shape(), mapped, mapped->bytes().data() + offsets[k], t.byte_size()));
    into[group[k].first] = std::move(view);
  }
  return {};
}

}  // namespace

RecordedValues::~RecordedValues() {
  if (own_spill_dir_ && !spill_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(spill_dir_, ec);
  }
}

const Tensor* RecordedValues::find(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

Expected<RecordedValues> RecordedValues::record(const Model& model, Engine& reference,
                                                const std::vector<NamedTensor>& inputs, const RecordOptions& options) {
  RecordedValues rec;
  REDUCE_ASSIGN(auto prepared, reference.prepare(model));
  TensorMap feed;
  for (const auto& in : inputs) {
    feed[in.name] = in.tensor;
    rec.values_[in.name] = in.tensor;
    rec.bytes_in_memory_ += in.tensor.byte_size();
  }
  // Node outputs in node order; requested in groups so that a group's values fit the budget.
  std::vector<std::string> wanted;
  for (const Node& n : model.graph.nodes)
    for (const auto& v : n.outputs)
      if (!v.empty()) wanted.push_back(v);
  // Groups sized from the inferred shapes, so one run never holds much more than the budget.
  std::vector<size_t> group_ends;
  {
    auto types = infer_value_types(model);
    uint64_t acc = 0;
    for (size_t k = 0; k < wanted.size(); ++k) {
      uint64_t bytes = 0;
      if (types) {
        auto it = types->find(wanted[k]);
        if (it != types->end() && it->second.is_tensor() && it->second.has_shape) {
          bytes = dtype_size(static_cast<DType>(it->second.elem_type));
          for (const Dim& d : it->second.dims) bytes *= d.is_static() ? static_cast<uint64_t>(d.value) : 1;
        }
      }
      if (acc > 0 && acc + bytes > options.memory_budget / 2) group_ends.push_back(k), acc = 0;
      acc += bytes;
    }
    group_ends.push_back(wanted.size());
  }
  size_t next = 0;
  size_t group_size = group_ends[0];
  size_t group_index = 0;
  int spill_files = 0;
  while (next < wanted.size()) {
    RunOptions ro;
    ro.cancel = options.cancel;
    ro.outputs.assign(wanted.begin() + next, wanted.begin() + std::min(wanted.size(), next + group_size));
    REDUCE_ASSIGN(TensorMap values, prepared->run(feed, ro));
    uint64_t group_bytes = 0;
    for (const auto& [name, t] : values) group_bytes += t.byte_size();
    if (rec.bytes_in_memory_ + group_bytes <= options.memory_budget) {
      for (auto& [name, t] : values) rec.values_[name] = std::move(t);
      rec.bytes_in_memory_ += group_bytes;
    } else {
      if (rec.spill_dir_.empty()) {
        if (options.spill_dir.empty()) {
          REDUCE_ASSIGN(rec.spill_dir_, make_temp_dir());
          rec.own_spill_dir_ = true;
        } else {
          rec.spill_dir_ = options.spill_dir;
        }
      }
      // Keep what fits, spill the rest of this group.
      std::vector<std::pair<std::string, Tensor>> to_spill;
      for (const auto& name : ro.outputs) {
        Tensor& t = values[name];
        if (rec.bytes_in_memory_ + t.byte_size() <= options.memory_budget) {
          rec.bytes_in_memory_ += t.byte_size();
          rec.values_[name] = std::move(t);
        } else {
          rec.bytes_spilled_ += t.byte_size();
          to_spill.emplace_back(name, std::move(t));
        }
      }
      values.clear();
      const fs::path file = rec.spill_dir_ / ("values_" + std::to_string(getpid()) + "_" + std::to_string(spill_files++) + ".bin");
      REDUCE_TRY(spill(to_spill, file, rec.values_));
    }
    next += ro.outputs.size();
    if (++group_index < group_ends.size()) group_size = group_ends[group_index] - next;
  }
  return rec;
}

}  // namespace reduce
