// The narrow element types in core: values, rounding and saturation, ONNX's packing, and their I/O
// (.pb, .onnx, .npy), including hostile sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <vector>

#include "core/model_io.h"
#include "core/narrow_types.h"
#include "core/tensor_file.h"
#include "core/tensor_set.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::TempDir;

constexpr DType kPacked[] = {DType::Int4, DType::UInt4, DType::Float4E2M1, DType::Int2, DType::UInt2};

// Every value a packed type can hold, as the byte stored in memory, repeated to `n` elements.
std::vector<std::byte> all_values(DType t, size_t n) {
  std::vector<std::byte> out;
  const unsigned count = 1u << dtype_bits(t);
  for (size_t i = 0; i < n; ++i) {
    const unsigned raw = static_cast<unsigned>(i) % count;
    out.push_back(static_cast<std::byte>(dtype_is_small_int(t) ? narrow_int_from_int64(t, raw) : raw));
  }
  return out;
}

TEST(NarrowTypes, PackingRoundTripsForOddAndEvenElementCounts) {
  for (DType t : kPacked)
    for (size_t n : {0, 1, 2, 3, 5, 7, 8, 33}) {
      const auto values = all_values(t, n);
      std::vector<std::byte> packed(dtype_packed_bytes(t, n), std::byte{0xAA});
      pack_elements(t, values, packed);
      std::vector<std::byte> back(n);
      unpack_elements(t, packed, back);
      EXPECT_EQ(back, values) << dtype_name(t) << " n=" << n;
    }
}

TEST(NarrowTypes, PackingPutsTheFirstElementInTheLowBitsAndZeroesTheUnusedOnes) {
  const std::vector<std::byte> int4 = {std::byte{0xff} /* -1 */, std::byte{2}, std::byte{7}};
  std::vector<std::byte> packed(2);
  pack_elements(DType::Int4, int4, packed);
  EXPECT_EQ(packed, (std::vector<std::byte>{std::byte{0x2f}, std::byte{0x07}}));
  const std::vector<std::byte> uint2 = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{0}, std::byte{3}};
  packed.assign(2, std::byte{0});
  pack_elements(DType::UInt2, uint2, packed);
  EXPECT_EQ(packed, (std::vector<std::byte>{std::byte{0x39}, std::byte{0x03}}));
}

TEST(NarrowTypes, Int4AndInt2AreSignExtendedWhenUnpacked) {
  std::vector<std::byte> out(2);
  unpack_elements(DType::Int4, std::vector<std::byte>{std::byte{0x87}}, out);
  EXPECT_EQ(static_cast<int8_t>(out[0]), 7);
  EXPECT_EQ(static_cast<int8_t>(out[1]), -8);
  out.resize(4);
  unpack_elements(DType::Int2, std::vector<std::byte>{std::byte{0x39}}, out);
  EXPECT_EQ(static_cast<int8_t>(out[0]), 1);
  EXPECT_EQ(static_cast<int8_t>(out[1]), -2);
  EXPECT_EQ(static_cast<int8_t>(out[2]), -1);
  EXPECT_EQ(static_cast<int8_t>(out[3]), 0);
}

TEST(NarrowTypes, Float8ValuesDecodeWithTheirOwnSpecials) {
  EXPECT_EQ(narrow_to_double(DType::Float8E4M3FN, 0x7e), 448.0);
  EXPECT_TRUE(std::isnan(narrow_to_double(DType::Float8E4M3FN, 0x7f)));
  EXPECT_EQ(narrow_to_double(DType::Float8E4M3FN, 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(narrow_to_double(DType::Float8E4M3FNUZ, 0x7f), 240.0);
  EXPECT_TRUE(std::isnan(narrow_to_double(DType::Float8E4M3FNUZ, 0x80)));
  EXPECT_EQ(narrow_to_double(DType::Float8E5M2, 0x7b), 57344.0);
  EXPECT_EQ(narrow_to_double(DType::Float8E5M2, 0xfc), -INFINITY);
  EXPECT_TRUE(std::isnan(narrow_to_double(DType::Float8E5M2, 0x7d)));
  EXPECT_EQ(narrow_to_double(DType::Float8E5M2FNUZ, 0x7f), 57344.0);
  EXPECT_TRUE(std::isnan(narrow_to_double(DType::Float8E5M2FNUZ, 0x80)));
  EXPECT_EQ(narrow_to_double(DType::Float4E2M1, 0x7), 6.0);
  EXPECT_EQ(narrow_to_double(DType::Float4E2M1, 0x9), -0.5);
  EXPECT_EQ(narrow_to_double(DType::Float8E8M0, 0x7f), 1.0);
  EXPECT_EQ(narrow_to_double(DType::Float8E8M0, 0x00), std::ldexp(1.0, -127));
  EXPECT_TRUE(std::isnan(narrow_to_double(DType::Float8E8M0, 0xff)));
}

TEST(NarrowTypes, EveryFloat8ValueSurvivesARoundTripThroughDouble) {
  for (DType t : {DType::Float8E4M3FN, DType::Float8E4M3FNUZ, DType::Float8E5M2, DType::Float8E5M2FNUZ, DType::Float8E8M0})
    for (unsigned b = 0; b < 256; ++b) {
      const double v = narrow_to_double(t, static_cast<uint8_t>(b));
      if (std::isnan(v) || std::isinf(v)) continue;
      EXPECT_EQ(narrow_float_from_double(t, v, false), b) << dtype_name(t) << " " << b;
    }
}

TEST(NarrowTypes, Float8RoundsHalfToEven) {
  // 1.0625 lies halfway between 1.0 (0x38, even) and 1.125 (0x39); 1.1875 between 0x39 and 1.25 (0x3a).
  EXPECT_EQ(narrow_float_from_double(DType::Float8E4M3FN, 1.0625, true), 0x38);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E4M3FN, 1.1875, true), 0x3a);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E4M3FN, 1.0626, true), 0x39);
  // Subnormals: 2^-10 is halfway between 0 and the smallest subnormal 2^-9 of E4M3FN.
  EXPECT_EQ(narrow_float_from_double(DType::Float8E4M3FN, std::ldexp(1.0, -10), true), 0x00);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E4M3FN, std::ldexp(3.0, -10), true), 0x02);
  // float4e2m1: 0.25 lies halfway between 0 and 0.5, 5 between 4 (0x6) and 6 (0x7).
  EXPECT_EQ(narrow_float_from_double(DType::Float4E2M1, 0.25, true), 0x0);
  EXPECT_EQ(narrow_float_from_double(DType::Float4E2M1, 5.0, true), 0x6);
  EXPECT_EQ(narrow_float_from_double(DType::Float4E2M1, -3.5, true), 0xe);
}

TEST(NarrowTypes, SaturationClampsToTheLargestFiniteValueOfEachFloat8Type) {
  struct Case {
    DType t;
    uint8_t max, neg_max;
  };
  for (const Case& c : {Case{DType::Float8E4M3FN, 0x7e, 0xfe}, Case{DType::Float8E4M3FNUZ, 0x7f, 0xff},
                        Case{DType::Float8E5M2, 0x7b, 0xfb}, Case{DType::Float8E5M2FNUZ, 0x7f, 0xff}}) {
    EXPECT_EQ(narrow_float_from_double(c.t, 1e6, true), c.max) << dtype_name(c.t);
    EXPECT_EQ(narrow_float_from_double(c.t, INFINITY, true), c.max) << dtype_name(c.t);
    EXPECT_EQ(narrow_float_from_double(c.t, -INFINITY, true), c.neg_max) << dtype_name(c.t);
  }
}

TEST(NarrowTypes, WithoutSaturationOverflowIsInfinityOrNaNAsEachTypeHas) {
  EXPECT_EQ(narrow_float_from_double(DType::Float8E4M3FN, 1e6, false), 0x7f);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E4M3FN, -INFINITY, false), 0xff);
  // Rounding comes first: 464 is halfway between 448 (mantissa 110, even) and 480 (beyond the range),
  // so it is 448; anything above rounds to 480 and overflows.
  EXPECT_EQ(narrow_float_from_double(DType::Float8E4M3FN, 464.0, false), 0x7e);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E4M3FN, 465.0, false), 0x7f);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E5M2, 1e6, false), 0x7c);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E5M2, -INFINITY, false), 0xfc);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E4M3FNUZ, 1e6, false), 0x80);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E5M2FNUZ, -INFINITY, false), 0x80);
  // float4e2m1 has neither: it saturates regardless.
  EXPECT_EQ(narrow_float_from_double(DType::Float4E2M1, 100.0, false), 0x7);
}

TEST(NarrowTypes, NaNAndNegativeZeroFollowEachType) {
  EXPECT_EQ(narrow_float_from_double(DType::Float8E4M3FN, NAN, true), 0x7f);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E5M2, NAN, true), 0x7e);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E4M3FNUZ, NAN, true), 0x80);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E5M2FNUZ, NAN, false), 0x80);
  EXPECT_EQ(narrow_float_from_double(DType::Float4E2M1, NAN, true), 0x8);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E4M3FN, -0.0, true), 0x80);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E4M3FNUZ, -0.0, true), 0x00);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E5M2FNUZ, -1e-30, true), 0x00);
}

TEST(NarrowTypes, E8M0RoundsByItsRoundMode) {
  EXPECT_EQ(narrow_float_from_double(DType::Float8E8M0, 3.0, true, E8M0Rounding::Up), 0x81);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E8M0, 3.0, true, E8M0Rounding::Down), 0x80);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E8M0, 3.0, true, E8M0Rounding::Nearest), 0x81);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E8M0, 2.9, true, E8M0Rounding::Nearest), 0x80);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E8M0, 2.0, true, E8M0Rounding::Up), 0x80);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E8M0, -0.124, true, E8M0Rounding::Up), 0x7c);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E8M0, 0.0, true), 0x00);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E8M0, INFINITY, true), 0xfe);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E8M0, INFINITY, false), 0xff);
  EXPECT_EQ(narrow_float_from_double(DType::Float8E8M0, 1e300, false), 0xff);
}

TEST(NarrowTypes, IntegersKeepTheirLowBits) {
  EXPECT_EQ(static_cast<int8_t>(narrow_int_from_int64(DType::Int4, 9)), -7);
  EXPECT_EQ(static_cast<int8_t>(narrow_int_from_int64(DType::Int4, -9)), 7);
  EXPECT_EQ(narrow_int_from_int64(DType::UInt4, 17), 1);
  EXPECT_EQ(static_cast<int8_t>(narrow_int_from_int64(DType::Int2, 2)), -2);
  EXPECT_EQ(narrow_int_from_int64(DType::UInt2, -1), 3);
}

// TensorProto's wire format, written by hand (the tests do not link the onnx library): dims (1),
// data_type (2), int32_data (5), name (8), raw_data (9).
std::string varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7f) | 0x80);
  return out + static_cast<char>(v);
}
std::string int_field(int field, uint64_t v) { return varint(static_cast<uint64_t>(field) << 3) + varint(v); }
std::string bytes_field(int field, const std::string& s) {
  return varint((static_cast<uint64_t>(field) << 3) | 2) + varint(s.size()) + s;
}

struct TensorBytes {
  DType dtype;
  std::vector<int64_t> dims;
  std::vector<int32_t> int32_data;
  std::string raw_data;
  std::string name;
  std::string serialize() const {
    std::string out;
    for (int64_t d : dims) out += int_field(1, static_cast<uint64_t>(d));
    out += int_field(2, static_cast<uint64_t>(dtype));
    for (int32_t v : int32_data) out += int_field(5, static_cast<uint64_t>(static_cast<int64_t>(v)));
    if (!name.empty()) out += bytes_field(8, name);
    if (!raw_data.empty()) out += bytes_field(9, raw_data);
    return out;
  }
};

std::filesystem::path write_proto(const TempDir& dir, const TensorBytes& proto) {
  const auto path = dir / "t.pb";
  testing::write_bytes(path, proto.serialize());
  return path;
}

TEST(NarrowTypes, PbTensorsReadPackedRawDataAndPackedInt32Data) {
  TempDir dir;
  TensorBytes proto{DType::Int4, {5}, {}, std::string("\x87\x21\x0f", 3), ""};
  auto raw = read_tensor_pb(write_proto(dir, proto));
  ASSERT_TRUE(raw.ok()) << raw.error().message();
  const std::vector<double> want = {7, -8, 1, 2, -1};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(raw->tensor.element_as_double(i), want[i]);
  proto.raw_data.clear();
  proto.int32_data = {0x87, 0x21, 0x0f};
  auto typed = read_tensor_pb(write_proto(dir, proto));
  ASSERT_TRUE(typed.ok()) << typed.error().message();
  EXPECT_TRUE(typed->tensor.equals(raw->tensor));
}

TEST(NarrowTypes, PbWithAHugeDeclaredPackedSizeIsRefusedBeforeAllocating) {
  TempDir dir;
  TensorBytes proto{DType::UInt4, {int64_t{1} << 40, 1024}, {}, "abcd", ""};
  const size_t before = testing::heap_bytes_in_use();
  auto t = read_tensor_pb(write_proto(dir, proto));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message().find("t.pb"), std::string::npos) << t.error().message();
  EXPECT_NE(t.error().message().find("packed bytes"), std::string::npos) << t.error().message();
  EXPECT_LT(testing::heap_bytes_in_use(), before + (size_t{1} << 20));
  proto.raw_data.clear();
  proto.int32_data = {1};
  auto typed = read_tensor_pb(write_proto(dir, proto));
  ASSERT_FALSE(typed.ok());
  EXPECT_NE(typed.error().message().find("packed bytes"), std::string::npos) << typed.error().message();
}

TEST(NarrowTypes, PbInt32DataOutsideAByteIsAnError) {
  TempDir dir;
  TensorBytes proto{DType::Int4, {2}, {300}, "", ""};
  auto t = read_tensor_pb(write_proto(dir, proto));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message().find("not a packed byte"), std::string::npos) << t.error().message();
}

TEST(NarrowTypes, PbWriteAndReadRoundTripPackedAndFloat8Tensors) {
  TempDir dir;
  for (DType t : {DType::Int4, DType::UInt2, DType::Float4E2M1, DType::Float8E5M2, DType::Float8E8M0}) {
    const auto values = dtype_is_packed(t) ? all_values(t, 7) : std::vector<std::byte>{std::byte{1}, std::byte{0x7e}, std::byte{0xff}};
    auto tensor = Tensor::copy_of(t, {static_cast<int64_t>(values.size())}, values).value();
    const auto path = dir / "w.pb";
    ASSERT_TRUE(write_tensor_pb(path, "w", tensor).ok());
    // Packed as ONNX packs them: the file holds exactly these bytes.
    std::string packed(dtype_packed_bytes(t, values.size()), '\0');
    if (dtype_is_packed(t)) pack_elements(t, values, std::as_writable_bytes(std::span<char>(packed.data(), packed.size())));
    else std::memcpy(packed.data(), values.data(), values.size());
    const TensorBytes want{t, {static_cast<int64_t>(values.size())}, {}, packed, "w"};
    EXPECT_EQ(testing::read_bytes(path), want.serialize()) << dtype_name(t);
    auto back = read_tensor_pb(path);
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_TRUE(back->tensor.equals(tensor)) << dtype_name(t);
  }
}

TEST(NarrowTypes, ModelsSaveAndLoadPackedInitializers) {
  TempDir dir;
  Model m;
  m.ir_version = 10;
  m.opset_imports.push_back({"", 21});
  const auto w = Tensor::copy_of(DType::Int4, {3}, all_values(DType::Int4, 3)).value();
  m.graph.initializers.push_back({"w", w, {}});
  Node n;
  n.name = "dq";
  n.op_type = "DequantizeLinear";
  n.inputs = {"w", "s"};
  n.outputs = {"y"};
  m.graph.initializers.push_back({"s", Tensor::from_vector(DType::Float, {}, std::vector<float>{0.5f}).value(), {}});
  m.graph.nodes.push_back(n);
  m.graph.outputs.push_back({"y", ValueType::tensor(DType::Float, {3}), {}});
  const auto path = dir / "m.onnx";
  ASSERT_TRUE(save_model(m, path).ok());
  auto back = load_model(path);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_TRUE(back->graph.initializers[0].tensor.equals(w));
}

TEST(NarrowTypes, NpyHoldsNarrowValuesAsInt8OrUint8AndReadsThemBackAsDeclared) {
  TempDir dir;
  const auto int4 = Tensor::copy_of(DType::Int4, {4}, all_values(DType::Int4, 4)).value();
  const auto path = dir / "x.npy";
  ASSERT_TRUE(write_npy(path, int4).ok());
  auto raw = read_npy(path);
  ASSERT_TRUE(raw.ok()) << raw.error().message();
  EXPECT_EQ(raw->dtype(), DType::Int8);
  auto retyped = retype_as_narrow(*raw, DType::Int4);
  ASSERT_TRUE(retyped.ok()) << retyped.error().message();
  EXPECT_TRUE(retyped->equals(int4));
  // An int8 value outside int4's range is not an int4.
  auto wide = Tensor::from_vector(DType::Int8, {2}, std::vector<int8_t>{3, 8}).value();
  auto refused = retype_as_narrow(wide, DType::Int4);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("value 8"), std::string::npos) << refused.error().message();
}

TEST(NarrowTypes, StatisticsDecodeTheValues) {
  auto t = Tensor::from_vector(DType::Float8E4M3FN, {2}, std::vector<uint8_t>{0x7e, 0xb8}).value();
  EXPECT_EQ(t.element_as_double(0), 448.0);
  EXPECT_EQ(t.element_as_double(1), -1.0);
}

}  // namespace
}  // namespace reduce
