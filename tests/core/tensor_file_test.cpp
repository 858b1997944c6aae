// Tensor files: .pb, .npy and .npz round trips, formats written by others, and refusal of bad input.
#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <thread>

#include <bit>
#include <cstring>
#include <optional>
#include <random>

#include "core/half.h"
#include "core/tensor_file.h"
#include "core/tensor_set.h"
#include "test_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;
using namespace std::string_literals;

const DType kNumpyDtypes[] = {DType::Float, DType::Float16, DType::Double, DType::Int8,  DType::Int16,
                              DType::Int32, DType::Int64,   DType::UInt8,  DType::UInt16, DType::UInt32,
                              DType::UInt64, DType::Bool,   DType::Complex64, DType::Complex128};

// A [2,3] tensor whose bytes differ from element to element (bools hold 0 or 1).
Tensor sample(DType dtype, Shape shape = {2, 3}) {
  auto t = Tensor::allocate(dtype, std::move(shape));
  EXPECT_TRUE(t.ok());
  auto bytes = t->mutable_bytes();
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<std::byte>(dtype == DType::Bool ? i % 2 : (i * 37 + 11) % 251);
  return *t;
}

// Every bad input must name the file and say what is wrong in one line.
void expect_error(const Error& e, const fs::path& path, const std::string& words) {
  EXPECT_EQ(e.where, path.string());
  EXPECT_NE(e.what.find(words), std::string::npos) << e.what;
  EXPECT_EQ(e.what.find('\n'), std::string::npos) << e.what;
}

std::string le(uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// --- A little protobuf encoder, to write TensorProtos the way other tools do ---
std::string varint(uint64_t v) {
  std::string s;
  for (; v >= 0x80; v >>= 7) s += static_cast<char>((v & 0x7f) | 0x80);
  return s + static_cast<char>(v);
}
std::string pb_int(int field, int64_t v) {
  return varint(static_cast<uint64_t>(field) << 3) + varint(static_cast<uint64_t>(v));
}
std::string pb_bytes(int field, const std::string& s) {
  return varint(static_cast<uint64_t>(field) << 3 | 2) + varint(s.size()) + s;
}
template <typename T>
std::string pb_packed(int field, const std::vector<T>& values) {
  std::string payload;
  for (T v : values) {
    if constexpr (std::is_floating_point_v<T>) payload += std::string(reinterpret_cast<const char*>(&v), sizeof(T));
    else payload += varint(static_cast<uint64_t>(static_cast<int64_t>(v)));
  }
  return pb_bytes(field, payload);
}
// TensorProto field numbers.
enum : int { kDims = 1, kDataType = 2, kFloatData = 4, kInt32Data = 5, kInt64Data = 7, kName = 8, kRawData = 9,
             kDoubleData = 10, kUint64Data = 11, kExternalData = 13, kDataLocation = 14 };

std::string pb_dims(const Shape& shape) {
  std::string s;
  for (int64_t d : shape) s += pb_int(kDims, d);
  return s;
}

// --- Hand-written .npy images ---
Expected<Tensor> parse_image(const std::string& image) { return parse_npy(std::as_bytes(std::span(image))); }
std::string npy_image(int major, const std::string& dict, const std::string& data) {
  const size_t len_size = major == 1 ? 2 : 4;
  std::string header = dict;
  while ((8 + len_size + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  return std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0' + le(header.size(), len_size) + header + data;
}
std::string dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
}

// --- Hand-written zip archives, to build what libzip would refuse to write ---
uint32_t crc32(const std::string& s) {
  uint32_t c = 0xffffffffu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
  }
  return ~c;
}
struct ZipEntrySpec {
  std::string name;
  std::string data;
  uint16_t method = 0;  // 0 stored, 8 deflated (the data is then written as given)
  std::optional<uint32_t> claimed_size = std::nullopt;  // a lie about the uncompressed size
};
// `numpy_layout` writes local headers the way numpy's savez does (zip64 extra, version 45).
std::string hand_written_zip(const std::vector<ZipEntrySpec>& entries, bool numpy_layout = false) {
  std::string out, central;
  for (const auto& e : entries) {
    const uint32_t size = e.claimed_size.value_or(static_cast<uint32_t>(e.data.size()));
    const auto comp_size = static_cast<uint32_t>(e.data.size());
    const std::string common = le(0, 2) + le(e.method, 2) + le(0, 2) + le(0x21, 2) + le(crc32(e.data), 4);
    const std::string sizes = le(comp_size, 4) + le(size, 4);
    const std::string zip64 = le(1, 2) + le(16, 2) + le(size, 8) + le(comp_size, 8);
    central += "PK\x01\x02" + le(45, 2) + le(numpy_layout ? 45 : 20, 2) + common + sizes + le(e.name.size(), 2) +
               le(0, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(out.size(), 4) + e.name;
    if (numpy_layout)
      out += "PK\x03\x04" + le(45, 2) + common + le(0xffffffffu, 4) + le(0xffffffffu, 4) + le(e.name.size(), 2) +
             le(zip64.size(), 2) + e.name + zip64 + e.data;
    else
      out += "PK\x03\x04" + le(20, 2) + common + sizes + le(e.name.size(), 2) + le(0, 2) + e.name + e.data;
  }
  return out + central + "PK\x05\x06" + le(0, 4) + le(entries.size(), 2) + le(entries.size(), 2) +
         le(central.size(), 4) + le(out.size(), 4) + le(0, 2);
}

// ---------------------------------------------------------------- .pb

TEST(TensorPb, RoundTripsEveryDtype) {
  TempDir dir;
  std::vector<DType> dtypes(std::begin(kNumpyDtypes), std::end(kNumpyDtypes));
  dtypes.push_back(DType::BFloat16);
  for (DType dtype : dtypes) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const Tensor t = sample(dtype);
    ASSERT_TRUE(write_tensor_pb(dir / "t.pb", "input", t).ok());
    auto back = read_tensor_pb(dir / "t.pb");
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_EQ(back->name, "input");
    EXPECT_TRUE(back->tensor.equals(t));
  }
}

TEST(TensorPb, ReadsOfficialOnnxTestData) {
  const fs::path path = "/usr/share/libonnx-testdata/data/node/test_abs/test_data_set_0/input_0.pb";
  if (!fs::exists(path)) GTEST_SKIP() << "ONNX test data not installed";
  auto t = read_tensor_pb(path);
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->name, "x");
  EXPECT_EQ(t->tensor.dtype(), DType::Float);
  EXPECT_EQ(t->tensor.shape(), (Shape{3, 4, 5}));
  // np.random.seed(0); np.random.randn(3, 4, 5).astype(np.float32)
  const float expected[] = {1.7640524f, 0.4001572f, 0.978738f, 2.2408931f, 1.867558f};
  for (size_t i = 0; i < 5; ++i) EXPECT_FLOAT_EQ(t->tensor.data<float>()[i], expected[i]);
  // raw_data is the file's last field: the tensor holds exactly those bytes.
  const std::string file = read_bytes(path);
  EXPECT_EQ(std::memcmp(t->tensor.bytes().data(), file.data() + file.size() - 240, 240), 0);
}

TEST(TensorPb, ReadsTypedFields) {
  TempDir dir;
  auto read = [&](const std::string& bytes) {
    write_bytes(dir / "t.pb", bytes);
    auto t = read_tensor_pb(dir / "t.pb");
    EXPECT_TRUE(t.ok()) << t.error().message();
    return t.ok() ? t->tensor : Tensor{};
  };
  Tensor f = read(pb_dims({2}) + pb_int(kDataType, 1) + pb_packed<float>(kFloatData, {1.5f, -2.0f}));
  EXPECT_EQ(f.dtype(), DType::Float);
  EXPECT_EQ(f.data<float>()[1], -2.0f);
  Tensor i = read(pb_dims({3}) + pb_int(kDataType, 7) + pb_packed<int64_t>(kInt64Data, {-3, 7, int64_t{1} << 40}));
  EXPECT_EQ(i.data<int64_t>()[0], -3);
  EXPECT_EQ(i.data<int64_t>()[2], int64_t{1} << 40);
  Tensor h = read(pb_dims({1}) + pb_int(kDataType, 10) + pb_packed<int32_t>(kInt32Data, {0x3c00}));
  EXPECT_EQ(h.element_as_double(0), 1.0);
  Tensor b = read(pb_dims({3}) + pb_int(kDataType, 9) + pb_packed<int32_t>(kInt32Data, {1, 0, 1}));
  EXPECT_EQ(b.element_as_double(2), 1.0);
  Tensor u = read(pb_dims({1}) + pb_int(kDataType, 12) + pb_packed<uint64_t>(kUint64Data, {4000000000u}));
  EXPECT_EQ(u.data<uint32_t>()[0], 4000000000u);
  Tensor c = read(pb_dims({1}) + pb_int(kDataType, 15) + pb_packed<double>(kDoubleData, {1.0, -2.0}));
  EXPECT_EQ(c.data<double>()[1], -2.0);
  Tensor s = read(pb_int(kDataType, 11) + pb_packed<double>(kDoubleData, {0.25}));  // 0-d
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.data<double>()[0], 0.25);
}

TEST(TensorPb, ZeroDimensionalAndZeroSizeTensorsRoundTrip) {
  TempDir dir;
  for (const Tensor& t : {sample(DType::Int64, {}), sample(DType::Float, {0, 3})}) {
    ASSERT_TRUE(write_tensor_pb(dir / "t.pb", "t", t).ok());
    auto back = read_tensor_pb(dir / "t.pb");
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_TRUE(back->tensor.equals(t));
  }
}

TEST(TensorPb, ByteSizeDisagreeingWithShapeIsAnError) {
  TempDir dir;
  write_bytes(dir / "t.pb", pb_dims({2, 3}) + pb_int(kDataType, 1) + pb_bytes(kRawData, std::string(8, '\0')));
  auto t = read_tensor_pb(dir / "t.pb");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.pb", "does not match");
}

TEST(TensorPb, TypedFieldCountDisagreeingWithShapeIsAnError) {
  TempDir dir;
  write_bytes(dir / "t.pb", pb_dims({3}) + pb_int(kDataType, 1) + pb_packed<float>(kFloatData, {1, 2}));
  auto t = read_tensor_pb(dir / "t.pb");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.pb", "has 2 values");
}

TEST(TensorPb, HugeShapeWithLittleDataIsAnError) {
  TempDir dir;
  write_bytes(dir / "t.pb",
              pb_dims({1 << 30, 1 << 30}) + pb_int(kDataType, 1) + pb_bytes(kRawData, std::string(8, '\0')));
  auto t = read_tensor_pb(dir / "t.pb");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.pb", "does not match");
}

TEST(TensorPb, TruncatedFileIsAnError) {
  TempDir dir;
  ASSERT_TRUE(write_tensor_pb(dir / "t.pb", "t", sample(DType::Float, {4, 4})).ok());
  const std::string whole = read_bytes(dir / "t.pb");
  write_bytes(dir / "t.pb", whole.substr(0, whole.size() / 2));
  auto t = read_tensor_pb(dir / "t.pb");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.pb", "protobuf parsing failed");
}

TEST(TensorPb, RandomBytesAreAnError) {
  TempDir dir;
  std::mt19937 rng(1);
  std::string junk(1000, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  write_bytes(dir / "t.pb", junk);
  auto t = read_tensor_pb(dir / "t.pb");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.pb", "");
}

TEST(TensorPb, EmptyFileIsAnError) {
  TempDir dir;
  write_bytes(dir / "t.pb", "");
  auto t = read_tensor_pb(dir / "t.pb");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.pb", "empty");
}

TEST(TensorPb, ExternalDataIsRefused) {
  TempDir dir;
  write_bytes(dir / "w.bin", std::string(16, '\0'));
  write_bytes(dir / "t.pb", pb_dims({4}) + pb_int(kDataType, 1) +
                                pb_bytes(kExternalData, pb_bytes(1, "location") + pb_bytes(2, "w.bin")) +
                                pb_int(kDataLocation, 1));
  auto t = read_tensor_pb(dir / "t.pb");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.pb", "external data");
}

TEST(TensorPb, StringTensorIsRefused) {
  TempDir dir;
  write_bytes(dir / "t.pb", pb_dims({1}) + pb_int(kDataType, 8) + pb_bytes(6, "hello"));
  auto t = read_tensor_pb(dir / "t.pb");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.pb", "string tensors are not supported");
}

TEST(TensorPb, MissingFileIsAnError) {
  TempDir dir;
  auto t = read_tensor_pb(dir / "absent.pb");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "absent.pb", "cannot open");
}

// ---------------------------------------------------------------- .npy

TEST(Npy, RoundTripsEveryNumpyDtype) {
  TempDir dir;
  for (DType dtype : kNumpyDtypes) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const Tensor t = sample(dtype);
    ASSERT_TRUE(write_npy(dir / "t.npy", t).ok());
    auto back = read_npy(dir / "t.npy");
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_TRUE(back->equals(t));
  }
}

TEST(Npy, ZeroDimensionalAndZeroSizeTensorsRoundTrip) {
  TempDir dir;
  for (const Tensor& t : {sample(DType::Double, {}), sample(DType::Int32, {0}), sample(DType::Float, {2, 0, 3})}) {
    SCOPED_TRACE(shape_to_string(t.shape()));
    ASSERT_TRUE(write_npy(dir / "t.npy", t).ok());
    auto back = read_npy(dir / "t.npy");
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_TRUE(back->equals(t));
  }
}

TEST(Npy, WritesVersion1LittleEndianCOrderAlignedTo64) {
  auto bytes = npy_bytes(sample(DType::Float, {3}));
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t header_len = static_cast<unsigned char>((*bytes)[8]) | static_cast<unsigned char>((*bytes)[9]) << 8;
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_EQ(bytes->size(), 10 + header_len + 12);
  EXPECT_EQ(bytes->substr(10, header_len).find("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"), 0u);
  EXPECT_EQ((*bytes)[10 + header_len - 1], '\n');
  auto scalar = npy_header(sample(DType::Bool, {}));
  ASSERT_TRUE(scalar.ok());
  EXPECT_NE(scalar->find("'descr': '|b1'"), std::string::npos);
  EXPECT_NE(scalar->find("'shape': ()"), std::string::npos);
}

TEST(Npy, BFloat16IsRefusedOnWrite) {
  TempDir dir;
  auto s = write_npy(dir / "t.npy", sample(DType::BFloat16));
  ASSERT_FALSE(s.ok());
  expect_error(s.error(), dir / "t.npy", "bfloat16");
  EXPECT_FALSE(fs::exists(dir / "t.npy"));
}

TEST(Npy, ReadsVersion2And3Headers) {
  const std::string data = le(7, 4) + le(static_cast<uint32_t>(-8), 4);
  for (int major : {2, 3}) {
    auto t = parse_image(npy_image(major, dict("<i4", "(2,)"), data));
    ASSERT_TRUE(t.ok()) << t.error().message();
    EXPECT_EQ(t->dtype(), DType::Int32);
    EXPECT_EQ(t->data<int32_t>()[1], -8);
  }
}

TEST(Npy, ConvertsBigEndianData) {
  auto i = parse_image(npy_image(1, dict(">i4", "(2,)"), "\x00\x00\x01\x02\xff\xff\xff\xfe"s));
  ASSERT_TRUE(i.ok()) << i.error().message();
  EXPECT_EQ(i->data<int32_t>()[0], 258);
  EXPECT_EQ(i->data<int32_t>()[1], -2);
  auto d = parse_image(npy_image(1, dict(">f8", "()"), "\x3f\xf8\0\0\0\0\0\0"s));
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(d->data<double>()[0], 1.5);
  auto c = parse_image(npy_image(1, dict(">c8", "(1,)"), "\x3f\x80\0\0\xc0\0\0\0"s));
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->data<float>()[0], 1.0f);
  EXPECT_EQ(c->data<float>()[1], -2.0f);
  auto h = parse_image(npy_image(1, dict(">f2", "(1,)"), "\x3c\x00"s));
  ASSERT_TRUE(h.ok()) << h.error().message();
  EXPECT_EQ(h->element_as_double(0), 1.0);
}

TEST(Npy, AcceptsNativeAndNotApplicableByteOrderMarks) {
  auto native = parse_image(npy_image(1, dict("=u2", "(1,)"), le(513, 2)));
  ASSERT_TRUE(native.ok()) << native.error().message();
  EXPECT_EQ(native->data<uint16_t>()[0], 513);
  auto byte = parse_image(npy_image(1, dict("|i1", "(1,)"), "\xff"s));
  ASSERT_TRUE(byte.ok()) << byte.error().message();
  EXPECT_EQ(byte->data<int8_t>()[0], -1);
}

TEST(Npy, TransposesFortranOrderIntoCOrder) {
  // (2, 3, 4) array with a[i, j, k] = 100 i + 10 j + k, stored column-major (i fastest).
  std::string data;
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) data += le(100 * i + 10 * j + k, 4);
  auto t = parse_image(npy_image(1, dict("<i4", "(2, 3, 4)", true), data));
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->shape(), (Shape{2, 3, 4}));
  size_t n = 0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) EXPECT_EQ(t->data<int32_t>()[n++], 100 * i + 10 * j + k);
}

TEST(Npy, ReadsPython2LongDimensions) {
  auto t = parse_image(npy_image(1, dict("|u1", "(2L, 1L)"), "ab"));
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->shape(), (Shape{2, 1}));
}

TEST(Npy, ReadMapsTheFileInsteadOfCopying) {
  TempDir dir;
  ASSERT_TRUE(write_npy(dir / "t.npy", sample(DType::Float, {64})).ok());
  auto t = read_npy(dir / "t.npy");
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->writable());  // a view of the mapping; copies are writable
}

TEST(Npy, HugeShapeWithLittleDataIsRefusedBeforeAllocating) {
  TempDir dir;
  write_bytes(dir / "t.npy", npy_image(1, dict("<f4", "(1000000000, 1000000000)"), std::string(16, '\0')));
  auto t = read_npy(dir / "t.npy");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.npy", "needs 4000000000000000000 bytes of data, the file has 16");
  write_bytes(dir / "t.npy", npy_image(1, dict("<f4", "(99999999999, 99999999999, 99999999999)"), ""));
  auto overflow = read_npy(dir / "t.npy");
  ASSERT_FALSE(overflow.ok());
  expect_error(overflow.error(), dir / "t.npy", "too many elements");
}

TEST(Npy, MalformedHeaderIsAnError) {
  TempDir dir;
  const std::string cases[] = {
      "",
      "not a dict",
      "{'descr': '<f4', 'fortran_order': False}",
      "{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}",
      "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': [2]}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
      "{'descr': '<f4",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} trailing",
  };
  for (const auto& header : cases) {
    SCOPED_TRACE(header);
    write_bytes(dir / "t.npy", npy_image(1, header, std::string(8, '\0')));
    auto t = read_npy(dir / "t.npy");
    ASSERT_FALSE(t.ok());
    expect_error(t.error(), dir / "t.npy", "malformed .npy header");
  }
}

TEST(Npy, UnsupportedDtypeIsAnError) {
  TempDir dir;
  for (const std::string descr : {"<U5", "|O", "<M8[ns]", "<f16", "|f4", "<q8", "f4"}) {
    SCOPED_TRACE(descr);
    write_bytes(dir / "t.npy", npy_image(1, dict(descr, "(1,)"), std::string(8, '\0')));
    auto t = read_npy(dir / "t.npy");
    ASSERT_FALSE(t.ok());
    expect_error(t.error(), dir / "t.npy", "unsupported numpy dtype '" + descr + "'");
  }
  write_bytes(dir / "t.npy", npy_image(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "abcd"));
  auto structured = read_npy(dir / "t.npy");
  ASSERT_FALSE(structured.ok());
  expect_error(structured.error(), dir / "t.npy", "structured numpy dtypes");
}

TEST(Npy, TruncatedFileIsAnError) {
  TempDir dir;
  ASSERT_TRUE(write_npy(dir / "t.npy", sample(DType::Float, {8})).ok());
  const std::string whole = read_bytes(dir / "t.npy");
  for (size_t size : {size_t{7}, size_t{9}, size_t{40}, whole.size() - 1}) {
    SCOPED_TRACE(size);
    write_bytes(dir / "t.npy", whole.substr(0, size));
    auto t = read_npy(dir / "t.npy");
    ASSERT_FALSE(t.ok());
    expect_error(t.error(), dir / "t.npy", "");
  }
}

TEST(Npy, FileWithoutMagicIsAnError) {
  TempDir dir;
  write_bytes(dir / "t.npy", "PK\x03\x04 this is a zip, not an npy");
  auto t = read_npy(dir / "t.npy");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.npy", "not a .npy file");
}

TEST(Npy, UnknownFormatVersionIsAnError) {
  TempDir dir;
  std::string image = npy_image(1, dict("<f4", "(1,)"), "abcd");
  image[6] = 4;
  write_bytes(dir / "t.npy", image);
  auto t = read_npy(dir / "t.npy");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.npy", "unsupported .npy format version 4.0");
}

TEST(Npy, WriteIsAtomicAndLeavesNoTemporaryFile) {
  TempDir dir;
  ASSERT_TRUE(write_npy(dir / "t.npy", sample(DType::Int8)).ok());
  ASSERT_TRUE(write_npy(dir / "t.npy", sample(DType::Int16)).ok());
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1u);
  EXPECT_EQ(read_npy(dir / "t.npy")->dtype(), DType::Int16);
}

TEST(Npy, WriteToMissingFolderIsAnError) {
  TempDir dir;
  auto s = write_npy(dir / "absent" / "t.npy", sample(DType::Float));
  ASSERT_FALSE(s.ok());
  expect_error(s.error(), dir / "absent" / "t.npy", "cannot write");
}

// ---------------------------------------------------------------- .npz

std::vector<NamedTensor> every_numpy_dtype() {
  std::vector<NamedTensor> tensors;
  for (DType dtype : kNumpyDtypes) tensors.push_back({"t_" + std::string(dtype_name(dtype)), sample(dtype)});
  tensors.push_back({"scalar", sample(DType::Int64, {})});
  tensors.push_back({"empty", sample(DType::Float, {0, 4})});
  return tensors;
}

void expect_same(const std::vector<NamedTensor>& got, const std::vector<NamedTensor>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].name, want[i].name);
    EXPECT_TRUE(got[i].tensor.equals(want[i].tensor)) << want[i].name;
  }
}

TEST(Npz, StoredRoundTripKeepsNamesOrderAndEveryDtype) {
  TempDir dir;
  const auto tensors = every_numpy_dtype();
  ASSERT_TRUE(write_npz(dir / "t.npz", tensors, false).ok());
  auto back = read_npz(dir / "t.npz");
  ASSERT_TRUE(back.ok()) << back.error().message();
  expect_same(*back, tensors);
}

TEST(Npz, DeflatedRoundTripKeepsNamesOrderAndEveryDtype) {
  TempDir dir;
  auto tensors = every_numpy_dtype();
  tensors.push_back({"zeros", *Tensor::allocate(DType::Float, {256, 256})});
  ASSERT_TRUE(write_npz(dir / "t.npz", tensors, true).ok());
  EXPECT_LT(fs::file_size(dir / "t.npz"), 256u * 256u);  // really deflated
  auto back = read_npz(dir / "t.npz");
  ASSERT_TRUE(back.ok()) << back.error().message();
  expect_same(*back, tensors);
}

TEST(Npz, SameTensorsGiveByteIdenticalArchives) {
  TempDir dir;
  const auto tensors = every_numpy_dtype();
  ASSERT_TRUE(write_npz(dir / "a.npz", tensors, true).ok());
  // Zip times have a 2-second resolution: write the second archive in another time slot.
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  ASSERT_TRUE(write_npz(dir / "b.npz", tensors, true).ok());
  EXPECT_EQ(read_bytes(dir / "a.npz"), read_bytes(dir / "b.npz"));
}

TEST(Npz, EmptyArchiveRoundTrips) {
  TempDir dir;
  ASSERT_TRUE(write_npz(dir / "t.npz", {}, false).ok());
  auto back = read_npz(dir / "t.npz");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_TRUE(back->empty());
}

TEST(Npz, ReadsArchiveLaidOutLikeNumpy) {
  TempDir dir;
  const std::string a = npy_image(1, dict("<i4", "(3,)"), le(1, 4) + le(2, 4) + le(3, 4));
  const std::string b = npy_image(1, dict("<f8", "()"), "\0\0\0\0\0\0\x04\x40"s);
  write_bytes(dir / "t.npz", hand_written_zip({{"a.npy", a}, {"b.npy", b}}, true));
  auto t = read_npz(dir / "t.npz");
  ASSERT_TRUE(t.ok()) << t.error().message();
  ASSERT_EQ(t->size(), 2u);
  EXPECT_EQ((*t)[0].name, "a");
  EXPECT_EQ((*t)[0].tensor.data<int32_t>()[2], 3);
  EXPECT_EQ((*t)[1].name, "b");
  EXPECT_EQ((*t)[1].tensor.data<double>()[0], 2.5);
}

TEST(Npz, BFloat16IsRefusedAndNothingIsWritten) {
  TempDir dir;
  auto s = write_npz(dir / "t.npz", {{"ok", sample(DType::Float)}, {"bf", sample(DType::BFloat16)}}, true);
  ASSERT_FALSE(s.ok());
  expect_error(s.error(), dir / "t.npz", "tensor 'bf': numpy has no bfloat16");
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(Npz, DuplicateNamesAreAnErrorAndNothingIsWritten) {
  TempDir dir;
  auto s = write_npz(dir / "t.npz", {{"x", sample(DType::Float)}, {"x", sample(DType::Int8)}}, false);
  ASSERT_FALSE(s.ok());
  expect_error(s.error(), dir / "t.npz", "two tensors are named 'x'");
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(Npz, WriteReplacesAtomicallyAndLeavesNoTemporaryFile) {
  TempDir dir;
  ASSERT_TRUE(write_npz(dir / "t.npz", {{"a", sample(DType::Float)}}, false).ok());
  ASSERT_TRUE(write_npz(dir / "t.npz", {{"b", sample(DType::Int8)}}, true).ok());
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1u);
  auto back = read_npz(dir / "t.npz");
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].name, "b");
}

TEST(Npz, FileThatIsNotAZipIsAnError) {
  TempDir dir;
  write_bytes(dir / "t.npz", npy_image(1, dict("<f4", "(1,)"), "abcd"));
  auto t = read_npz(dir / "t.npz");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.npz", "not a zip archive (truncated, or not an .npz file?)");
}

TEST(Npz, EmptyFileIsAnError) {
  TempDir dir;
  write_bytes(dir / "t.npz", "");
  auto t = read_npz(dir / "t.npz");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.npz", "empty");
}

TEST(Npz, EntryThatIsNotNpyIsAnError) {
  TempDir dir;
  write_bytes(dir / "t.npz", hand_written_zip({{"notes.txt", "hello"}}));
  auto t = read_npz(dir / "t.npz");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.npz", "entry 'notes.txt' is not a .npy file");
}

TEST(Npz, EntryWithBadNpyIsAnErrorNamingTheEntry) {
  TempDir dir;
  write_bytes(dir / "t.npz", hand_written_zip({{"x.npy", "this is no npy"}}));
  auto t = read_npz(dir / "t.npz");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.npz", "entry 'x.npy': not a .npy file");
}

TEST(Npz, EntryWithHugeShapeIsRefusedBeforeAllocating) {
  TempDir dir;
  write_bytes(dir / "t.npz", hand_written_zip({{"x.npy", npy_image(1, dict("<f8", "(1000000, 1000000)"), "abcdefgh")}}));
  auto t = read_npz(dir / "t.npz");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.npz", "needs 8000000000000 bytes of data, the file has 8");
}

// A small archive of zeros can inflate to gigabytes: with a limit (--max-memory), the sizes the
// archive declares are checked against what is left of it before anything is allocated.
TEST(Npz, EntriesThatInflateBeyondTheLimitAreRefusedBeforeAllocating) {
  TempDir dir;
  std::vector<NamedTensor> tensors{{"small", sample(DType::Float)}, {"zeros", *Tensor::allocate(DType::Float, {512, 512})}};
  ASSERT_TRUE(write_npz(dir / "t.npz", tensors, true).ok());
  ASSERT_LT(fs::file_size(dir / "t.npz"), 8192u);
  EXPECT_TRUE(read_npz(dir / "t.npz", 2u << 20).ok());
  auto t = read_npz(dir / "t.npz", 1u << 20);
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.npz", "entry 'zeros.npy': inflates to 1048704 bytes, more than the");
  EXPECT_NE(t.error().what.find("(--max-memory)"), std::string::npos) << t.error().what;
}

TEST(Npz, StoredEntryWithInconsistentSizesIsAnError) {
  TempDir dir;
  write_bytes(dir / "t.npz", hand_written_zip({{"x.npy", npy_image(1, dict("<f4", "(1,)"), "abcd"), 0, 0x7fffffffu}}));
  auto t = read_npz(dir / "t.npz");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.npz", "");
}

TEST(Npz, DeflatedEntryClaimingMoreThanDeflateCanHoldIsRefusedBeforeAllocating) {
  TempDir dir;
  write_bytes(dir / "t.npz", hand_written_zip({{"x.npy", std::string(100, 'z'), 8, 0x7fffffffu}}));
  auto t = read_npz(dir / "t.npz");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.npz",
               "entry 'x.npy': claims 2147483647 bytes, more than its 100 compressed bytes can hold");
}

// Raw deflate (as in zip entries) of `data`.
std::string deflated(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(Npz, EntryIsCheckedAgainstItsHeaderBeforeTheRestIsInflated) {
  // A header declaring one float, then 1 MiB the entry does hold; the second half of the deflated
  // stream is garbage, so inflating past the header would fail with a read or CRC error instead.
  std::string data(1 << 20, '\0');
  uint64_t state = 1;
  for (char& c : data) c = static_cast<char>((state = state * 6364136223846793005u + 1442695040888963407u) >> 56);
  const std::string image = npy_image(1, dict("<f4", "(1,)"), data);
  std::string compressed = deflated(image);
  for (size_t i = compressed.size() / 2; i < compressed.size(); ++i) compressed[i] = '\xff';
  ZipEntrySpec entry{"x.npy", compressed, 8, static_cast<uint32_t>(image.size())};
  TempDir dir;
  write_bytes(dir / "t.npz", hand_written_zip({entry}));
  auto t = read_npz(dir / "t.npz");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message(), (dir / "t.npz").string() +
                                     ": entry 'x.npy': its .npy header needs 4 bytes of data, the file has 1048576");
}

TEST(Npz, CorruptDataFailsTheCrcCheck) {
  TempDir dir;
  ASSERT_TRUE(write_npz(dir / "t.npz", {{"x", sample(DType::Float, {16})}}, false).ok());
  std::string bytes = read_bytes(dir / "t.npz");
  const size_t data = bytes.find("\x93NUMPY") + 128 + 10;  // inside the tensor's bytes
  bytes[data] = static_cast<char>(bytes[data] ^ 0x55);
  write_bytes(dir / "t.npz", bytes);
  auto t = read_npz(dir / "t.npz");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.npz", "entry 'x.npy'");
}

TEST(Npz, TruncatedArchiveIsAnError) {
  TempDir dir;
  ASSERT_TRUE(write_npz(dir / "t.npz", every_numpy_dtype(), true).ok());
  const std::string whole = read_bytes(dir / "t.npz");
  write_bytes(dir / "t.npz", whole.substr(0, whole.size() / 2));
  auto t = read_npz(dir / "t.npz");
  ASSERT_FALSE(t.ok());
  expect_error(t.error(), dir / "t.npz", "not a zip archive");
}

TEST(Npz, WriteToMissingFolderIsAnError) {
  TempDir dir;
  auto s = write_npz(dir / "absent" / "t.npz", {{"x", sample(DType::Float)}}, false);
  ASSERT_FALSE(s.ok());
  expect_error(s.error(), dir / "absent" / "t.npz", "cannot write");
}

// --- Input samples (read_tensor_samples) and binding (bind_inputs) ---

Tensor small_floats(Shape shape) {
  auto t = Tensor::allocate(DType::Float, std::move(shape));
  EXPECT_TRUE(t.ok());
  return std::move(*t);
}

TEST(TensorSamples, FolderOfNpzIsOneSampleEachInNameOrderAndAFolderOfNpyIsOne) {
  TempDir dir;
  std::filesystem::create_directories(dir / "npz");
  ASSERT_TRUE(write_npz(dir / "npz" / "b.npz", {{"x", small_floats({2})}}, false).ok());
  ASSERT_TRUE(write_npz(dir / "npz" / "a.npz", {{"x", small_floats({2})}}, false).ok());
  auto samples = read_tensor_samples(dir / "npz");
  ASSERT_TRUE(samples.ok()) << samples.error().message();
  ASSERT_EQ(samples->size(), 2u);
  EXPECT_EQ((*samples)[0].source, (dir / "npz" / "a.npz").string());
  EXPECT_EQ((*samples)[1].source, (dir / "npz" / "b.npz").string());
  // .npy files next to the archives: the folder is one sample of .npy tensors, as before.
  std::filesystem::create_directories(dir / "npy");
  ASSERT_TRUE(write_npy(dir / "npy" / "x.npy", small_floats({2})).ok());
  ASSERT_TRUE(write_npz(dir / "npy" / "a.npz", {{"x", small_floats({2})}}, false).ok());
  auto one = read_tensor_samples(dir / "npy");
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].tensors.size(), 1u);
}

TEST(TensorSamples, TestDataSetsAreOrderedByNumberNotByName) {
  TempDir dir;
  for (int k : {0, 1, 2, 10, 3, 4, 5, 6, 7, 8, 9}) {
    const auto set = dir / ("test_data_set_" + std::to_string(k));
    std::filesystem::create_directories(set);
    ASSERT_TRUE(write_tensor_pb(set / "input_0.pb", "x", small_floats({1})).ok());
  }
  auto samples = read_tensor_samples(dir.path());
  ASSERT_TRUE(samples.ok());
  ASSERT_EQ(samples->size(), 11u);
  EXPECT_EQ((*samples)[2].source, (dir / "test_data_set_2").string());
  EXPECT_EQ((*samples)[10].source, (dir / "test_data_set_10").string());
}

TEST(BindInputs, RefusesAnotherTypeOrStaticDimAndReadsUint16AsBfloat16) {
  auto m = parse_model_text(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2, N] x, bfloat16[2] b) => (float[2, N] y) { y = Identity(x) })");
  ASSERT_TRUE(m.ok()) << m.error().message();
  // A symbolic dimension takes any size; a static one must match.
  EXPECT_TRUE(bind_inputs(m->graph, {{"x", small_floats({2, 7})}}, "s").ok());
  auto wrong = bind_inputs(m->graph, {{"x", small_floats({3, 7})}}, "s.npz");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().message(), "s.npz: input 'x' is float[3,7] but the model declares float[2,N]");
  auto rank = bind_inputs(m->graph, {{"x", small_floats({2})}}, "s.npz");
  ASSERT_FALSE(rank.ok());
  auto ints = Tensor::allocate(DType::Int64, {2, 7});
  ASSERT_TRUE(ints.ok());
  EXPECT_FALSE(bind_inputs(m->graph, {{"x", *ints}}, "s.npz").ok());
  // numpy writes bfloat16 as uint16: taken as its bits.
  auto bits = Tensor::from_vector<uint16_t>(DType::UInt16, {2}, {0x3f80, 0xc000});
  ASSERT_TRUE(bits.ok());
  auto bound = bind_inputs(m->graph, {{"x", small_floats({2, 1})}, {"b", *bits}}, "s.npz");
  ASSERT_TRUE(bound.ok()) << bound.error().message();
  EXPECT_EQ((*bound)[1].tensor.dtype(), DType::BFloat16);
  EXPECT_EQ((*bound)[1].tensor.element_as_double(0), 1.0);
  EXPECT_EQ((*bound)[1].tensor.element_as_double(1), -2.0);
}

}  // namespace
}  // namespace reduce
