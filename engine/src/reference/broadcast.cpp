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

Expected<Shape> legacy_broadcast_shape(const Shape& a, const Shape& b, bool broadcast, std::optional<int64_t> axis) {
  if (!broadcast) {
    if (a != b)
      return make_error("shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
                        " differ and the broadcast attribute is not set");
    return b;
  }
  const int64_t ra = static_cast<int64_t>(a.size()), rb = static_cast<int64_t>(b.size());
  int64_t start = ra - rb;
  if (axis) start = *axis < 0 ? *axis + ra : *axis;
  if (start < 0 || start + rb > ra)
    return make_error("shape " + shape_to_string(b) + " does not fit into " + shape_to_string(a) + " at axis " +
                      std::to_string(start));
  Shape padded(a.size(), 1);
  for (int64_t i = 0; i < rb; ++i) {
    const int64_t d = b[static_cast<size_t>(i)];
    if (d != 1 && d != a[static_cast<size_t>(start + i)])
      return make_error("shape " + shape_to_string(b) + " cannot be broadcast to " + shape_to_string(a));
    padded[static_cast<size_t>(start + i)] = d;
  }
  return padded;
}

}  // namespace reduce::ref
