// Fuzz harness: .npy images through parse_npy, as a view (with an owner) and as a copy; what parses
// must survive npy_bytes and parse to the same tensor.
#include <cstring>
#include <memory>

#include "core/tensor_file.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace reduce;
  // An owned copy of exactly `size` bytes, so that reading past the end is an ASan report.
  auto owned = std::shared_ptr<std::byte[]>(new std::byte[size]);
  if (size) std::memcpy(owned.get(), data, size);
  const std::span<const std::byte> bytes(owned.get(), size);
  auto viewed = parse_npy(bytes, owned);
  auto copied = parse_npy(bytes);
  if (viewed.ok() != copied.ok()) fuzz::invariant_failed("parse_npy accepts a view and a copy differently");
  if (!copied) return 0;
  if (!viewed->equals(*copied)) fuzz::invariant_failed("parse_npy: the view and the copy differ");
  auto image = npy_bytes(*copied);
  if (!image) return 0;
  auto again = parse_npy(std::as_bytes(std::span<const char>(image->data(), image->size())));
  if (!again) fuzz::invariant_failed("npy_bytes wrote an image parse_npy refuses: " + again.error().message());
  if (!again->equals(*copied)) fuzz::invariant_failed("npy round trip changed the tensor");
  return 0;
}
