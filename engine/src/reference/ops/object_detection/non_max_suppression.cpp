// NonMaxSuppression (opset 10+): greedy per batch and class selection of boxes by score and IoU.
#include <algorithm>
#include <numeric>

#include "reference/kernel.h"
#include "reference/numeric.h"

namespace reduce::ref {

namespace {

struct Box {
  float x0, y0, x1, y1;  // normalized so that x0 <= x1 and y0 <= y1
};

// True when the boxes overlap by more than the threshold (boxes with no area never suppress).
bool suppresses(const Box& a, const Box& b, float threshold) {
  const float ix0 = std::max(a.x0, b.x0), iy0 = std::max(a.y0, b.y0);
  const float ix1 = std::min(a.x1, b.x1), iy1 = std::min(a.y1, b.y1);
  if (ix1 <= ix0 || iy1 <= iy0) return false;
  const float area_a = (a.x1 - a.x0) * (a.y1 - a.y0), area_b = (b.x1 - b.x0) * (b.y1 - b.y0);
  if (area_a <= 0 || area_b <= 0) return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  const float uni = area_a + area_b - inter;
  if (uni <= 0) return false;
  return inter / uni > threshold;
}

class NmsKernel : public Kernel {
 public:
  explicit NmsKernel(bool center) : center_(center) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& boxes_t = *ctx.input(0);
    const Tensor& scores_t = *ctx.input(1);
    auto opt = [&](size_t i) -> const Tensor* { return i < ctx.input_count() ? ctx.input(i) : nullptr; };
    if (boxes_t.dtype() != DType::Float || scores_t.dtype() != DType::Float) return make_error("boxes and scores must be float");
    if (boxes_t.rank() != 3 || boxes_t.shape()[2] != 4) return make_error("boxes must be (batch, boxes, 4), got " + shape_to_string(boxes_t.shape()));
    if (scores_t.rank() != 3 || scores_t.shape()[0] != boxes_t.shape()[0] || scores_t.shape()[2] != boxes_t.shape()[1])
      return make_error("scores " + shape_to_string(scores_t.shape()) + " do not match boxes " + shape_to_string(boxes_t.shape()));
    int64_t max_out = 0;
    float iou = 0, score_min = 0;
    bool has_score_min = false;
    if (const Tensor* t = opt(2); t && t->elements() > 0) {
      if (t->dtype() != DType::Int64) return make_error("max_output_boxes_per_class must be int64");
      max_out = t->data<int64_t>()[0];
    }
    if (const Tensor* t = opt(3); t && t->elements() > 0) {
      if (t->dtype() != DType::Float) return make_error("iou_threshold must be float");
      iou = t->data<float>()[0];
    }
    if (const Tensor* t = opt(4); t && t->elements() > 0) {
      if (t->dtype() != DType::Float) return make_error("score_threshold must be float");
      score_min = t->data<float>()[0];
      has_score_min = true;
    }
    const int64_t B = boxes_t.shape()[0], N = boxes_t.shape()[1], C = scores_t.shape()[1];
    auto bx = boxes_t.data<float>();
    auto sc = scores_t.data<float>();
    std::vector<int64_t> selected;
    std::vector<Box> boxes(static_cast<size_t>(N));
    std::vector<int64_t> order;
    for (int64_t b = 0; b < B && max_out > 0; ++b) {
      for (int64_t i = 0; i < N; ++i) {
        const float* p = &bx[static_cast<size_t>((b * N + i) * 4)];
        Box& box = boxes[static_cast<size_t>(i)];
        if (center_) {
          box = {p[0] - p[2] / 2, p[1] - p[3] / 2, p[0] + p[2] / 2, p[1] + p[3] / 2};
        } else {
          box = {std::min(p[1], p[3]), std::min(p[0], p[2]), std::max(p[1], p[3]), std::max(p[0], p[2])};
        }
      }
      for (int64_t c = 0; c < C; ++c) {
        const float* s = &sc[static_cast<size_t>((b * C + c) * N)];
        order.clear();
        for (int64_t i = 0; i < N; ++i)
          if (!has_score_min || s[i] > score_min) order.push_back(i);
        // Highest score first; equal scores keep the lower box index first.
        std::stable_sort(order.begin(), order.end(), [&](int64_t l, int64_t r) { return s[l] > s[r]; });
        std::vector<int64_t> kept;
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= max_out) break;
          bool drop = false;
          for (int64_t k : kept)
            if (suppresses(boxes[static_cast<size_t>(k)], boxes[static_cast<size_t>(i)], iou)) {
              drop = true;
              break;
            }
          if (!drop) kept.push_back(i);
        }
        for (int64_t k : kept) selected.insert(selected.end(), {b, c, k});
      }
    }
    REDUCE_ASSIGN(Tensor * out, ctx.allocate_output(0, DType::Int64, {static_cast<int64_t>(selected.size() / 3), 3}));
    std::copy(selected.begin(), selected.end(), out->mutable_data<int64_t>().begin());
    return {};
  }

 private:
  bool center_;
};

}  // namespace

Expected<KernelPtr> make_non_max_suppression(const Node& node, int64_t) {
  const int64_t c = attr_int(node, "center_point_box", 0);
  if (c != 0 && c != 1) return make_error("center_point_box must be 0 or 1");
  return KernelPtr(new NmsKernel(c == 1));
}

}  // namespace reduce::ref
