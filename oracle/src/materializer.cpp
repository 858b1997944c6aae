// CandidateMaterializer: extraction, recorded inputs and outputs, declared shapes, and candidate edits.
#include "oracle/materializer.h"

#include <algorithm>
#include <bit>
#include <unordered_set>

#include "core/model_io.h"
#include "leading_slice.h"

namespace reduce {

namespace {

// Declares new shapes for (sliced) inputs; inferred shapes of everything downstream are dropped.
void redeclare_inputs(Model& model, const std::map<std::string, Shape, std::less<>>& shapes) {
  for (auto& vi : model.graph.inputs) {
    auto it = shapes.find(vi.name);
    if (it == shapes.end()) continue;
    vi.type.dims.clear();
    for (int64_t d : it->second) vi.type.dims.push_back(Dim::fixed(d));
    vi.type.has_shape = true;
  }
  model.graph.value_info.clear();
  for (auto& vi : model.graph.outputs) {
    vi.type.dims.clear();
    vi.type.has_shape = false;
  }
}

// A tensor declaration whose shape inference left dims unknown gets them from `value` (the value
// it had in the original run, as the engine saw it), when the element types agree. A symbolic dim
// (a dim_param that inference carried from the model's inputs) stays symbolic: the value is as
// dynamic there as it was in the original, and an engine that fails on a dynamic dim (OpenCV's
// Shape) fails on the cut model too. Shape-faithful cuts: what 1-minimal is relative to.
void declare_shape_of(ValueInfo& vi, const Tensor* value) {
  if (!vi.type.is_tensor() || !value || value->dtype() != static_cast<DType>(vi.type.elem_type)) return;
  const Shape& shape = value->shape();
  if (!vi.type.has_shape || vi.type.dims.size() != shape.size()) {
    vi.type.has_shape = true;
    vi.type.dims.clear();
    for (int64_t d : shape) vi.type.dims.push_back(Dim::fixed(d));
    return;
  }
  for (size_t k = 0; k < shape.size(); ++k) {
    Dim& d = vi.type.dims[k];
    if (!d.is_static() && d.param.empty()) d = Dim::fixed(shape[k]);
  }
}

}  // namespace

Expected<Tensor> CandidateMaterializer::shared_fill(const std::string& name, const Tensor& like, double value) const {
  std::lock_guard<std::mutex> lock(fills_mutex_);
  std::erase_if(fills_, [](const auto& held) { return held.second.owner.expired(); });
  const auto key = std::make_pair(name, std::bit_cast<uint64_t>(value));
  if (auto it = fills_.find(key); it != fills_.end() && it->second.dtype == like.dtype() && it->second.shape == like.shape())
    if (auto owner = it->second.owner.lock())
      return Tensor::view(like.dtype(), like.shape(), std::move(owner), it->second.data, like.byte_size());
  REDUCE_ASSIGN(Tensor t, filled_like(like, value));
  fills_[key] = {t.owner(), t.bytes().data(), t.dtype(), t.shape()};
  // Read-only for every candidate, the first included: no engine may write a weight it shares.
  return Tensor::view(t.dtype(), t.shape(), t.owner(), t.bytes().data(), t.byte_size());
}

std::unordered_set<std::string> CandidateMaterializer::constant_fed_values(const Graph& g) {
  // Values that differ from run to run: the recorded one is not the value.
  static const std::unordered_set<std::string_view> kRandom = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                                               "RandomUniformLike", "Multinomial", "Bernoulli", "Dropout"};
  std::unordered_set<std::string_view> inputs;
  for (const auto& vi : g.inputs) inputs.insert(vi.name);
  std::unordered_set<std::string> constant;
  for (const auto& init : g.initializers)
    if (!inputs.count(init.name)) constant.insert(init.name);  // an input with a default is no constant
  std::vector<bool> done(g.nodes.size(), false);
  for (bool changed = true; changed;) {  // one pass when the nodes are in topological order
    changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (done[i] || !(n.domain.empty() || n.domain == "ai.onnx") || n.has_subgraphs() || kRandom.count(n.op_type)) continue;
      if (!std::all_of(n.inputs.begin(), n.inputs.end(), [&](const std::string& in) { return in.empty() || constant.count(in); }))
        continue;
      done[i] = changed = true;
      for (const auto& out : n.outputs)
        if (!out.empty()) constant.insert(out);
    }
  }
  for (const auto& init : g.initializers) constant.erase(init.name);  // weights are weights already
  return constant;
}

bool CandidateMaterializer::whole_is_file(const Model& model) { return source_bytes(model).has_value(); }

// The original's own check on the user's file as given: its inputs and outputs as declared (no
// value that no node reads becomes an output), the recorded values for both. An error when a value
// was not recorded: the extraction decides then.
Expected<CandidateRun> CandidateMaterializer::materialize_file() const {
  CandidateRun run;
  for (const auto& vi : model_.graph.inputs) {
    if (model_.graph.find_initializer(vi.name)) continue;
    const Tensor* t = recorded_.find(vi.name);
    if (!t) return make_error("no recorded value for input '" + vi.name + "'");
    run.inputs.push_back({vi.name, *t});
  }
  for (const auto& vi : model_.graph.outputs) {
    const Tensor* t = recorded_.find(vi.name);
    if (!t && outputs_optional_) continue;
    if (!t) return make_error("no recorded value for output '" + vi.name + "'");
    run.expected.push_back({vi.name, *t});
  }
  run.model = model_;  // shares the weights, and the file's bytes (Model::source)
  return run;
}

Expected<CandidateRun> CandidateMaterializer::materialize(const Candidate& c) const {
  // The whole model, still as its file says (the size first: most candidates are smaller).
  if (whole_is_file_ && c.nodes.size() == model_.graph.nodes.size() && c == Candidate::whole(model_.graph))
    if (auto run = materialize_file()) return run;
  ExtractOptions eo;
  eo.outputs = c.outputs;
  eo.removed_body_nodes = c.removed_body_nodes;
  for (const auto& name : c.frozen) {
    const Tensor* t = recorded_.find(name);
    if (!t) return make_error("no recorded value for frozen '" + name + "'");
    eo.frozen[name] = *t;
  }
  // Cut values the original computes from weights alone are weights of the candidate too.
  if (!constant_fed_.empty()) {
    std::unordered_set<std::string_view> produced;
    for (size_t i : c.nodes)
      for (const auto& out : model_.graph.nodes[i].outputs) produced.insert(out);
    for (size_t i : c.nodes)
      for (const auto* list : {&model_.graph.nodes[i].inputs, &model_.graph.nodes[i].implicit_inputs})
        for (const auto& in : *list)
          if (!in.empty() && !produced.count(in) && constant_fed_.count(in) && !c.input_shapes.count(in) && !eo.frozen.count(in))
            if (const Tensor* t = recorded_.find(in)) eo.frozen.emplace(in, *t);
  }
  CandidateRun run;
  REDUCE_ASSIGN(run.model, extractor_.extract(c.nodes, eo));
  std::unordered_set<std::string_view> original_inputs;
  for (const auto& vi : model_.graph.inputs) original_inputs.insert(vi.name);
  for (auto& vi : run.model.graph.inputs) {
    if (run.model.graph.find_initializer(vi.name)) continue;
    const Tensor* t = recorded_.find(vi.name);
    if (!t) return make_error("no recorded value for input '" + vi.name + "'");
    // Cut values only: the model's own inputs keep their declaration.
    if (!original_inputs.count(vi.name)) declare_shape_of(vi, t);
    auto shape = c.input_shapes.find(vi.name);
    if (shape == c.input_shapes.end()) {
      run.inputs.push_back({vi.name, *t});
    } else {
      REDUCE_ASSIGN(Tensor sliced, leading_slice(*t, shape->second));
      run.inputs.push_back({vi.name, std::move(sliced)});
    }
  }
  // Outputs too: a reproducer declares the shapes its outputs had in the original run, where
  // shape inference gave up (ops newer than the ONNX library), so that importers see them.
  if (c.input_shapes.empty())
    for (auto& vi : run.model.graph.outputs) declare_shape_of(vi, recorded_.find(vi.name));
  REDUCE_TRY(apply_candidate_edits(run.model, model_.graph, c,
                                   [this](const std::string& name, const Tensor& like, double value) {
                                     return shared_fill(name, like, value);
                                   }));
  if (c.input_shapes.empty() && c.filled.empty() && c.dropped_attributes.empty() && c.removed_body_nodes.empty()) {
    for (const auto& vi : run.model.graph.outputs) {
      const Tensor* t = recorded_.find(vi.name);
      if (!t && outputs_optional_) continue;  // the script decides; nothing is compared
      if (!t) return make_error("no recorded value for output '" + vi.name + "'");
      run.expected.push_back({vi.name, *t});
    }
    return run;
  }
  // Reduced shapes, simplified weights and attributes or edited bodies: the recorded outputs no
  // longer apply; the reference computes them.
  redeclare_inputs(run.model, c.input_shapes);
  REDUCE_ASSIGN(auto prepared, reference_.prepare(run.model));
  TensorMap feed;
  for (const auto& in : run.inputs) feed[in.name] = in.tensor;
  REDUCE_ASSIGN(TensorMap values, prepared->run(feed));
  for (const auto& vi : run.model.graph.outputs) run.expected.push_back({vi.name, values[vi.name]});
  for (auto& vi : run.model.graph.outputs)
    if (auto it = values.find(vi.name); it != values.end()) declare_shape_of(vi, &it->second);
  return run;
}

}  // namespace reduce
