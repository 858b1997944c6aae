// Fuzz harness: TensorProto .pb files (ONNX test data) through read_tensor_pb (raw and typed
// fields); what reads must write and read back the same.
#include "core/tensor_file.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace reduce;
  const fuzz::ScratchFolder scratch;
  auto named = read_tensor_pb(scratch.write("in.pb", data, size));
  if (!named) return 0;
  const auto out = scratch.path() / "out.pb";
  if (!write_tensor_pb(out, named->name, named->tensor).ok()) return 0;
  auto again = read_tensor_pb(out);
  if (!again) fuzz::invariant_failed("write_tensor_pb wrote a file read_tensor_pb refuses: " + again.error().message());
  if (again->name != named->name || !again->tensor.equals(named->tensor))
    fuzz::invariant_failed("TensorProto round trip changed the tensor");
  return 0;
}
