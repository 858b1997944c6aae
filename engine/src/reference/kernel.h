// Kernel: one operator of the reference interpreter; built once per node, then computes per run.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/model.h"

namespace reduce::ref {

// What a kernel sees while computing: its inputs, a place for its outputs, and subgraph execution.
class KernelContext {
 public:
  virtual ~KernelContext() = default;
  virtual size_t input_count() const = 0;
  // nullptr when the optional input is omitted ("" or past the end).
  virtual const Tensor* input(size_t i) const = 0;
  // True when input i is an initializer (not fed, not computed): the same tensor on every run.
  virtual bool input_is_constant(size_t i) const = 0;
  virtual size_t output_count() const = 0;
  // Allocates output i (bounded by max_tensor_bytes()); the kernel writes into it.
  virtual Expected<Tensor*> allocate_output(size_t i, DType dtype, Shape shape) = 0;
  // Sets output i to an existing tensor (Identity, Reshape share storage).
  virtual void set_output(size_t i, Tensor tensor) = 0;
  // Counts memory the kernel holds outside its outputs (a loop's stacked scan parts) against the
  // run's budget until the kernel returns; fails when the budget has no room.
  virtual Status reserve(uint64_t bytes) = 0;
  // Runs a subgraph attribute (If/Loop bodies) with the given inputs; outer values are visible.
  virtual Expected<std::vector<Tensor>> run_subgraph(const Graph& graph, const std::vector<Tensor>& inputs) = 0;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Status compute(KernelContext& ctx) const = 0;
};

using KernelPtr = std::unique_ptr<Kernel>;
// Builds a kernel for a node (validating attributes once); `opset` is the node domain's version.
using KernelFactory = Expected<KernelPtr> (*)(const Node& node, int64_t opset);

// The factory registered for an op type, domain and opset, or nullptr.
KernelFactory find_kernel(const std::string& op_type, const std::string& domain, int64_t opset);

// Attribute helpers for factories: typed lookups with defaults and clear errors.
int64_t attr_int(const Node& node, std::string_view name, int64_t fallback);
float attr_float(const Node& node, std::string_view name, float fallback);
std::string attr_string(const Node& node, std::string_view name, std::string fallback);
std::vector<int64_t> attr_ints(const Node& node, std::string_view name, std::vector<int64_t> fallback = {});

// Runs `fn.template operator()<T>()` with T the C++ type of `dtype` (uint16_t for float16/bfloat16).
template <typename Fn>
decltype(auto) visit_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::Float: return fn.template operator()<float>();
    case DType::Double: return fn.template operator()<double>();
    case DType::Int8: return fn.template operator()<int8_t>();
    case DType::Int16: return fn.template operator()<int16_t>();
    case DType::Int32: return fn.template operator()<int32_t>();
    case DType::Int64: return fn.template operator()<int64_t>();
    case DType::UInt8: return fn.template operator()<uint8_t>();
    case DType::UInt16: return fn.template operator()<uint16_t>();
    case DType::UInt32: return fn.template operator()<uint32_t>();
    case DType::UInt64: return fn.template operator()<uint64_t>();
    case DType::Bool: return fn.template operator()<bool>();
    case DType::Float16:
    case DType::BFloat16: return fn.template operator()<uint16_t>();
    default: return fn.template operator()<uint8_t>();
  }
}

// Normalizes a possibly negative axis against `rank`, or fails.
Expected<size_t> normalize_axis(int64_t axis, size_t rank);

}  // namespace reduce::ref
