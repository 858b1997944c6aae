// Fuzz harness: a binary .onnx file through load_model (protobuf parse, import, validation), then
// validate_model, the ONNX checker, and a save/load round trip.
#include "core/model_io.h"
#include "core/validate.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace reduce;
  const fuzz::ScratchFolder scratch;
  auto model = load_model(scratch.write("model.onnx", data, size));
  if (!model) return 0;
  // load_model validates: a loaded model must pass validation again.
  if (Status s = validate_model(*model); !s.ok()) fuzz::invariant_failed("loaded model fails validation: " + s.error().message());
  (void)check_model(*model);
  auto bytes = serialize_model(*model);
  if (!bytes) return 0;
  const auto saved = scratch.write("saved.onnx", reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
  (void)load_model(saved);
  return 0;
}
