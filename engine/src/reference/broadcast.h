// Multidirectional (numpy) broadcasting, written once for every elementwise kernel.
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <vector>

#include "core/tensor.h"

namespace reduce::ref {

// The broadcast shape of several shapes, or an error naming the incompatible dims.
Expected<Shape> broadcast_shapes(std::span<const Shape> shapes);

// Element strides of `shape` aligned to the right of `out` (0 where the dim is broadcast).
std::vector<size_t> broadcast_strides(const Shape& shape, const Shape& out);

// Calls fn(out_index, a_index, b_index) for every element of `out`, in order.
template <typename Fn>
void for_each_broadcast2(const Shape& out, const Shape& a, const Shape& b, Fn&& fn) {
  const size_t rank = out.size();
  size_t total = 1;
  for (int64_t d : out) total *= static_cast<size_t>(d);
  if (total == 0) return;
  const auto sa = broadcast_strides(a, out);
  const auto sb = broadcast_strides(b, out);
  if (a == out && b == out) {  // the common case: no broadcasting at all
    for (size_t i = 0; i < total; ++i) fn(i, i, i);
    return;
  }
  std::vector<size_t> idx(rank, 0);
  size_t ia = 0, ib = 0;
  const size_t inner = rank ? static_cast<size_t>(out[rank - 1]) : 1;
  const size_t ias = rank ? sa[rank - 1] : 0, ibs = rank ? sb[rank - 1] : 0;
  for (size_t o = 0; o < total; o += inner) {
    for (size_t k = 0; k < inner; ++k) fn(o + k, ia + k * ias, ib + k * ibs);
    // Advance the outer index (all dims but the last), updating offsets incrementally.
    for (size_t d = rank - 1; d-- > 0;) {
      ++idx[d];
      ia += sa[d];
      ib += sb[d];
      if (idx[d] < static_cast<size_t>(out[d])) break;
      ia -= sa[d] * idx[d];
      ib -= sb[d] * idx[d];
      idx[d] = 0;
    }
  }
}

// Legacy broadcasting of Add/Sub/Mul/Div/Pow/logic ops before opset 7: B broadcasts to A's shape only,
// its dims aligned at `axis` (or at the end) and only when `broadcast` is set. Returns B's shape padded
// with 1s to A's rank, or an error when B does not fit.
Expected<Shape> legacy_broadcast_shape(const Shape& a, const Shape& b, bool broadcast, std::optional<int64_t> axis);

// Iteration over a broadcast of N inputs to `out` in runs: along a run every input advances by 0 or 1
// elements per output element, so kernels can write tight loops for the same-shape and scalar cases.
// Output dims of size 1 are dropped and adjacent dims merged when no input broadcasts differently across
// them, so a bias [1,C,1,1] over [N,C,H,W] becomes runs of H*W with a fixed bias value.
template <size_t N>
class BroadcastRuns {
 public:
  using Offsets = std::array<size_t, N>;

  BroadcastRuns(const Shape& out, const std::array<Shape, N>& inputs) {
    std::array<std::vector<size_t>, N> full;
    for (size_t i = 0; i < N; ++i) full[i] = broadcast_strides(inputs[i], out);
    for (size_t d = 0; d < out.size(); ++d) {
      const size_t n = static_cast<size_t>(out[d]);
      total_ *= n;
      if (n == 1) continue;
      bool merge = !dims_.empty();
      for (size_t i = 0; merge && i < N; ++i) merge = strides_[i].back() == full[i][d] * n;
      if (merge) {
        dims_.back() *= n;
        for (size_t i = 0; i < N; ++i) strides_[i].back() = full[i][d];
      } else {
        dims_.push_back(n);
        for (size_t i = 0; i < N; ++i) strides_[i].push_back(full[i][d]);
      }
    }
    if (dims_.empty()) {
      dims_.push_back(1);
      for (size_t i = 0; i < N; ++i) strides_[i].push_back(0);
    }
    for (size_t i = 0; i < N; ++i) step_[i] = strides_[i].back();
  }

  size_t elements() const { return total_; }

  // Calls fn(out_offset, offsets, steps, length) for consecutive runs covering outputs [begin, end):
  // input i's element for output out_offset + k is offsets[i] + k * steps[i], steps being 0 or 1.
  template <typename Fn>
  void for_each_run(size_t begin, size_t end, Fn&& fn) const {
    if (begin >= end) return;
    const size_t rank = dims_.size();
    std::vector<size_t> idx(rank, 0);
    Offsets off{};
    size_t rem = begin;
    for (size_t d = rank; d-- > 0;) {
      idx[d] = rem % dims_[d];
      rem /= dims_[d];
      for (size_t i = 0; i < N; ++i) off[i] += idx[d] * strides_[i][d];
    }
    const size_t inner = dims_[rank - 1];
    size_t pos = begin;
    while (pos < end) {
      const size_t len = std::min(inner - idx[rank - 1], end - pos);
      fn(pos, off, step_, len);
      pos += len;
      if (pos >= end) break;
      // The run ended at the end of the inner dim: rewind it and carry into the outer dims.
      for (size_t i = 0; i < N; ++i) off[i] -= idx[rank - 1] * step_[i];
      idx[rank - 1] = 0;
      for (size_t d = rank - 1; d-- > 0;) {
        ++idx[d];
        for (size_t i = 0; i < N; ++i) off[i] += strides_[i][d];
        if (idx[d] < dims_[d]) break;
        for (size_t i = 0; i < N; ++i) off[i] -= strides_[i][d] * idx[d];
        idx[d] = 0;
      }
    }
  }

 private:
  size_t total_ = 1;
  std::vector<size_t> dims_;
  std::array<std::vector<size_t>, N> strides_;
  Offsets step_{};
};

}  // namespace reduce::ref
