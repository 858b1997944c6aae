// Tensor storage: allocation limits, views, sharing.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <malloc.h>
#include <unistd.h>

#include <fstream>

#include "core/tensor.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::resident_bytes;

TEST(Tensor, AllocateIsZeroFilledAndSized) {
  auto t = Tensor::allocate(DType::Float, {2, 3});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->elements(), 6u);
  EXPECT_EQ(t->byte_size(), 24u);
  for (float v : t->data<float>()) EXPECT_EQ(v, 0.0f);
}

TEST(Tensor, ALargeZeroedValueIsResidentOnlyWhereWritten) {
  // A weight filled with zeros by the reducer is only read: its 64 MiB must not become resident.
  if (!testing::reading_untouched_memory_is_free()) GTEST_SKIP() << "this kernel maps no shared zero page";
  const size_t before = resident_bytes();
  Tensor t = Tensor::allocate(DType::Float, {16 << 20}).value();
  float sum = 0;
  for (float v : t.data<float>()) sum += v;
  EXPECT_EQ(sum, 0.0f);
  EXPECT_LT(resident_bytes(), before + (size_t{16} << 20)) << "reading zeros made them resident";
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.bytes().data()) % 64, 0u);
  // Written pages are private to the tensor, and a copy shares nothing with it.
  t.mutable_data<float>()[5] = 2.0f;
  Tensor copy = Tensor::copy_of(t.dtype(), t.shape(), t.bytes()).value();
  EXPECT_EQ(copy.data<float>()[5], 2.0f);
  copy.mutable_data<float>()[5] = 3.0f;
  EXPECT_EQ(t.data<float>()[5], 2.0f);
}

TEST(Tensor, StorageIsAlignedTo64Bytes) {
  for (int64_t n : {0, 1, 3, 17, 1000, 1 << 20}) {
    auto t = Tensor::allocate(DType::UInt8, {n});
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t->bytes().data()) % 64, 0u) << n;
  }
}

// Storage is aligned by hand inside a larger allocation; the spare bytes must still be out of
// bounds for AddressSanitizer, as past an exact allocation (so a kernel writing past its output is
// caught).
TEST(Tensor, TheSpareBytesAroundTheStorageAreOutOfBoundsUnderAsan) {
  if (!testing::asan_runtime()) GTEST_SKIP() << "needs AddressSanitizer";
  for (int64_t n : {1, 10, 64, 100}) {
    Tensor t = Tensor::allocate(DType::UInt8, {n}).value();
    const std::byte* data = t.bytes().data();
    EXPECT_FALSE(__asan_address_is_poisoned(data)) << n;
    EXPECT_FALSE(__asan_address_is_poisoned(data + n - 1)) << n;
    EXPECT_TRUE(__asan_address_is_poisoned(data + n)) << n;
    EXPECT_TRUE(__asan_address_is_poisoned(data - 1)) << n;
  }
}

// A chain of same-sized activations, each freed after the next is made, while small allocations
// that live on are made in between (names, shapes): the freed storage must serve the next value.
// With memalign's storage every hole was a few bytes too small and the heap grew by every value.
TEST(Tensor, FreedStorageServesTheNextValueOfItsSize) {
  if (testing::asan_runtime()) GTEST_SKIP() << "counts glibc's heap; ASan has its own allocator";
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // as the reference engine: activations from the heap
  const int64_t floats = 2 << 20;       // 8 MiB
  const size_t before = mallinfo2().arena;
  std::vector<std::unique_ptr<std::string>> small;
  Tensor previous = Tensor::allocate(DType::Float, {floats}).value();
  for (int i = 0; i < 40; ++i) {
    Tensor next = Tensor::allocate(DType::Float, {floats}).value();
    small.push_back(std::make_unique<std::string>(40, 'x'));
    previous = std::move(next);
  }
  const size_t grown = mallinfo2().arena - before;
  EXPECT_LE(grown, size_t{4} * floats * sizeof(float)) << "the heap grew by " << grown << " bytes for two live values";
}

TEST(Tensor, ScalarHasOneElement) {
  auto t = Tensor::from_vector(DType::Int64, {}, std::vector<int64_t>{7});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->elements(), 1u);
  EXPECT_EQ(t->element_as_double(0), 7.0);
}

TEST(Tensor, ShapeBombIsRefusedWithoutAllocating) {
  auto t = Tensor::allocate(DType::Float, {1024, 1024, 1024, 256});  // 1 TiB
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().what.find("exceeds the size limit"), std::string::npos);
}

TEST(Tensor, OverflowingShapeIsRefused) {
  auto t = Tensor::allocate(DType::Float, {INT64_MAX, INT64_MAX});
  ASSERT_FALSE(t.ok());
  auto n = Tensor::allocate(DType::Float, {-1, 2});
  ASSERT_FALSE(n.ok());
}

TEST(Tensor, CopyOfRejectsWrongByteCount) {
  std::vector<std::byte> bytes(10);
  EXPECT_FALSE(Tensor::copy_of(DType::Float, {3}, bytes).ok());
}

TEST(Tensor, ViewSharesStorage) {
  auto owner = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4});
  const auto* p = reinterpret_cast<const std::byte*>(owner->data());
  auto t = Tensor::view(DType::Float, {2, 2}, owner, p, 16);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->bytes().data(), p);
  EXPECT_FALSE(t->writable());
  Tensor copy = *t;
  EXPECT_TRUE(copy.shares_storage_with(*t));
  EXPECT_EQ(owner.use_count(), 3);
}

TEST(Tensor, MisalignedViewIsCopied) {
  auto owner = std::make_shared<std::vector<std::byte>>(17);
  auto t = Tensor::view(DType::Float, {4}, owner, owner->data() + 1, 16);
  ASSERT_TRUE(t.ok());
  EXPECT_NE(t->bytes().data(), owner->data() + 1);
}

TEST(Tensor, EqualsComparesTypeShapeAndBytes) {
  auto a = Tensor::from_vector(DType::Int32, {2}, std::vector<int32_t>{1, 2});
  auto b = Tensor::from_vector(DType::Int32, {2}, std::vector<int32_t>{1, 2});
  auto c = Tensor::from_vector(DType::Int32, {1, 2}, std::vector<int32_t>{1, 2});
  EXPECT_TRUE(a->equals(*b));
  EXPECT_FALSE(a->equals(*c));
}

}  // namespace
}  // namespace reduce
