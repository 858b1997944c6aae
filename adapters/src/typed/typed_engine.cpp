// The typed wrapper's engine: each prepared model converted to FP16/BF16 (core/precision_conversion.h),
// the keep set's nodes present in it left in FP32, then prepared on the inner engine.
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "core/half.h"
#include "core/precision_conversion.h"
#include "factories/engine_factories.h"

namespace reduce {

namespace {

// Values the engine computed in the low type are handed over in FP32 (exact), as every other engine
// hands over a float model's values: comparisons and reports see one type per value.
Expected<Tensor> widened(const Tensor& t) {
  if (t.dtype() != DType::Float16 && t.dtype() != DType::BFloat16) return t;
  REDUCE_ASSIGN(Tensor out, Tensor::allocate_uninitialized(DType::Float, t.shape()));
  const auto bits = t.data<uint16_t>();
  auto values = out.mutable_data<float>();
  for (size_t i = 0; i < bits.size(); ++i)
    values[i] = t.dtype() == DType::Float16 ? half_to_float(bits[i]) : bfloat16_to_float(bits[i]);
  return out;
}

// Values of the model as given whose type is already FP16 or BF16 (graph inputs and outputs,
// value_info, initializers): the conversion leaves them as they are, and so does the hand-over.
std::set<std::string, std::less<>> low_float_values(const Model& model) {
  std::set<std::string, std::less<>> names;
  auto low = [](DType t) { return t == DType::Float16 || t == DType::BFloat16; };
  for (const auto* list : {&model.graph.inputs, &model.graph.outputs, &model.graph.value_info})
    for (const ValueInfo& vi : *list)
      if (vi.type.is_tensor() && low(static_cast<DType>(vi.type.elem_type))) names.insert(vi.name);
  for (const auto& init : model.graph.initializers)
    if (low(init.tensor.dtype())) names.insert(init.name);
  return names;
}

class TypedPrepared : public PreparedModel {
 public:
  TypedPrepared(std::unique_ptr<Model> model, std::unique_ptr<PreparedModel> inner, std::set<std::string, std::less<>> low)
      : model_(std::move(model)), inner_(std::move(inner)), low_(std::move(low)) {}

  Expected<TensorMap> run(const TensorMap& inputs, const RunOptions& options) override {
    RunOptions through = options;
    if (options.on_output)
      through.on_output = [&options, this](const std::string& name, Tensor value) -> Status {
        if (low_.count(name)) return options.on_output(name, std::move(value));
        REDUCE_ASSIGN(Tensor wide, widened(value));
        return options.on_output(name, std::move(wide));
      };
    REDUCE_ASSIGN(TensorMap values, inner_->run(inputs, through));
    for (auto& entry : values) {
      if (low_.count(entry.first)) continue;  // the user's model has it in that type
      REDUCE_ASSIGN(Tensor wide, widened(entry.second));
      entry.second = std::move(wide);
    }
    return values;
  }
  bool streams_outputs() const override { return inner_->streams_outputs(); }

 private:
  std::unique_ptr<Model> model_;  // the converted model the inner engine prepared
  std::unique_ptr<PreparedModel> inner_;
  std::set<std::string, std::less<>> low_;  // values handed over in their own low type
};

class TypedEngine : public Engine {
 public:
  TypedEngine(DType to, Fp32Nodes keep, std::unique_ptr<Engine> inner, std::string name)
      : to_(to), keep_(std::move(keep)), inner_(std::move(inner)), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::optional<DType> converts_models_to() const override { return to_; }
  std::string release() const override { return inner_->release(); }

  Expected<std::unique_ptr<PreparedModel>> prepare(const Model& model) override {
    MixedPrecisionOptions options;
    options.to = to_;
    options.convert_weight = [this](const Tensor& weight, DType to) { return converted_weight(weight, to); };
    // A candidate holds some of the set's nodes: the others are not there to keep.
    for (const auto& name : keep_.present_in(model.graph)) options.keep_nodes.insert(name);
    auto converted = convert_to_mixed_precision(model, options);
    if (!converted) return Error{name_, "cannot convert the model: " + converted.error().message(), ErrorKind::Setup};
    auto owned = std::make_unique<Model>(std::move(converted->model));
    REDUCE_ASSIGN(auto inner, inner_->prepare(*owned));
    return std::unique_ptr<PreparedModel>(
        std::make_unique<TypedPrepared>(std::move(owned), std::move(inner), low_float_values(model)));
  }

 private:
  // Candidates view the original's weights: each is converted once and shared while its source lives
  // (a source that is gone, e.g. a weight filled for one candidate, takes its conversion with it).
  Expected<Tensor> converted_weight(const Tensor& weight, DType to) {
    std::lock_guard lock(mutex_);
    std::erase_if(converted_, [](const auto& entry) { return entry.second.source.expired(); });
    const auto key = std::make_pair(static_cast<const void*>(weight.bytes().data()), weight.byte_size());
    if (auto it = converted_.find(key); it != converted_.end() && it->second.source.lock() == weight.owner() &&
                                        it->second.tensor.shape() == weight.shape())
      return it->second.tensor;
    REDUCE_ASSIGN(Tensor low, to_low_precision(weight, to));
    converted_[key] = {weight.owner(), low};
    return low;
  }

  struct Converted {
    std::weak_ptr<const void> source;
    Tensor tensor;
  };
  std::mutex mutex_;
  std::map<std::pair<const void*, size_t>, Converted> converted_;
  DType to_;
  Fp32Nodes keep_;
  std::unique_ptr<Engine> inner_;
  std::string name_;
};

}  // namespace

Expected<std::unique_ptr<Engine>> make_typed_engine(DType to, Fp32Nodes keep, std::unique_ptr<Engine> inner,
                                                    std::string name) {
  return std::unique_ptr<Engine>(std::make_unique<TypedEngine>(to, std::move(keep), std::move(inner), std::move(name)));
}

}  // namespace reduce
