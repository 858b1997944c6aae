// Resolves kernels from kernels.def by op type, domain and opset; attribute helpers for factories.
#include <algorithm>

#include "kernel.h"

namespace reduce::ref {

#define REDUCE_KERNEL(op, domain, since, until, factory) Expected<KernelPtr> factory(const Node&, int64_t);
#include "kernels.def"
#undef REDUCE_KERNEL

namespace {
struct KernelEntry {
  const char* op;
  const char* domain;
  int64_t since;
  int64_t until;
  KernelFactory factory;
};
const KernelEntry kKernels[] = {
#define REDUCE_KERNEL(op, domain, since, until, factory) {op, domain, since, until, &factory},
#include "kernels.def"
#undef REDUCE_KERNEL
};
}  // namespace

KernelFactory find_kernel(const std::string& op_type, const std::string& domain, int64_t opset) {
  const std::string d = domain == "ai.onnx" ? "" : domain;
  for (const auto& k : kKernels)
    if (op_type == k.op && d == k.domain && opset >= k.since && opset <= k.until) return k.factory;
  return nullptr;
}

int64_t attr_int(const Node& node, std::string_view name, int64_t fallback) {
  const Attribute* a = node.attribute(name);
  return a && a->kind == Attribute::Kind::Int ? a->i : fallback;
}

float attr_float(const Node& node, std::string_view name, float fallback) {
  const Attribute* a = node.attribute(name);
  return a && a->kind == Attribute::Kind::Float ? a->f : fallback;
}

std::string attr_string(const Node& node, std::string_view name, std::string fallback) {
  const Attribute* a = node.attribute(name);
  return a && a->kind == Attribute::Kind::String ? a->s : fallback;
}

std::vector<int64_t> attr_ints(const Node& node, std::string_view name, std::vector<int64_t> fallback) {
  const Attribute* a = node.attribute(name);
  return a && a->kind == Attribute::Kind::Ints ? a->ints : fallback;
}

Expected<size_t> normalize_axis(int64_t axis, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= std::max<int64_t>(r, 1))
    return make_error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

}  // namespace reduce::ref
