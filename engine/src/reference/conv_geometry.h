// Shape arithmetic shared by Conv, ConvTranspose, ConvInteger and QLinearConv: attributes and output sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model.h"

namespace reduce::ref {

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

// The attributes of a convolution node, validated once by the kernel factory.
struct ConvAttributes {
  AutoPad auto_pad = AutoPad::NotSet;
  int64_t group = 1;
  std::vector<int64_t> kernel_shape, strides, dilations, pads;  // empty when not given
  std::vector<int64_t> output_padding, output_shape;            // ConvTranspose only
};

Expected<ConvAttributes> parse_conv_attributes(const Node& node, bool transpose);

// Everything a convolution kernel needs, with the padding resolved. Spatial vectors have one
// entry per spatial dimension; pad_begin can be negative for ConvTranspose with output_shape.
struct ConvGeometry {
  size_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  std::vector<size_t> in, kernel, out, strides, dilations;
  std::vector<int64_t> pad_begin;

  size_t in_size() const;      // product of in
  size_t out_size() const;     // product of out
  size_t kernel_size() const;  // product of kernel
  Shape output_shape() const;  // [batch, out_channels, out...]
};

// Conv: x is [N, C, spatial...], w is [M, C/group, kernel...].
Expected<ConvGeometry> conv_geometry(const ConvAttributes& attrs, const Shape& x, const Shape& w);
// ConvTranspose: x is [N, C, spatial...], w is [C, M/group, kernel...].
Expected<ConvGeometry> conv_transpose_geometry(const ConvAttributes& attrs, const Shape& x, const Shape& w);

// The float operands of Conv/ConvTranspose widened to float (half types) or kept (float, double).
struct ConvOperands {
  Tensor x, w, b;  // b is empty without a bias
};

// What Conv and ConvTranspose compute from: checked, widened operands and the output geometry.
struct ConvProblem {
  ConvOperands ops;
  ConvGeometry geometry;
};

// Checks X, W and the optional bias B (one floating type; B of shape [out_channels]), widens them
// and computes the geometry of a convolution (or, with `transpose`, a transposed convolution).
Expected<ConvProblem> float_conv_problem(const ConvAttributes& attrs, const Tensor& x, const Tensor& w,
                                         const Tensor* b, bool transpose);

}  // namespace reduce::ref
