// Broadcast shape rules (ONNX multidirectional broadcasting, as numpy).
#include "broadcast.h"

#include <algorithm>

namespace reduce::ref {

Expected<Shape> broadcast_shapes(std::span<const Shape> shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const auto& s : shapes) {
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[rank - s.size() + i];
      const int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string all;
      for (const auto& x : shapes) all += (all.empty() ? "" : " and ") + shape_to_string(x);
      return make_error("shapes " + all + " cannot be broadcast");
    }
  }
  return out;
}

std::vector<size_t> broadcast_strides(const Shape& shape, const Shape& out) {
  std::vector<size_t> strides(out.size(), 0);
  size_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    const size_t o = out.size() - shape.size() + i;
    strides[o] = shape[i] == 1 ? 0 : stride;
    stride *= static_cast<size_t>(shape[i]);
  }
  return strides;
}

}  // namespace reduce::ref
