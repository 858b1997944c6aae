// Fuzz harness: the ONNX text syntax through parse_model_text (ONNX's parser, import, validation),
// then validate_model, the ONNX checker and serialization. Nothing touches the disk: external data
// is refused without a base folder.
#include <string_view>

#include "core/model_io.h"
#include "core/validate.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace reduce;
  auto model = parse_model_text(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!model) return 0;
  if (Status s = validate_model(*model); !s.ok()) fuzz::invariant_failed("parsed model fails validation: " + s.error().message());
  (void)check_model(*model);
  (void)serialize_model(*model);
  return 0;
}
