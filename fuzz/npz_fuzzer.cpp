// Fuzz harness: .npz archives through read_npz (zip directory, stored and deflated entries, .npy
// headers checked before inflating); what reads must write and read back the same.
#include "core/tensor_file.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace reduce;
  const fuzz::ScratchFolder scratch;
  auto tensors = read_npz(scratch.write("in.npz", data, size));
  if (!tensors) return 0;
  const auto out = scratch.path() / "out.npz";
  if (!write_npz(out, *tensors, size % 2 == 0).ok()) return 0;
  auto again = read_npz(out);
  if (!again) fuzz::invariant_failed("write_npz wrote an archive read_npz refuses: " + again.error().message());
  if (again->size() != tensors->size()) fuzz::invariant_failed("npz round trip changed the entry count");
  for (size_t i = 0; i < again->size(); ++i)
    if ((*again)[i].name != (*tensors)[i].name || !(*again)[i].tensor.equals((*tensors)[i].tensor))
      fuzz::invariant_failed("npz round trip changed entry " + (*tensors)[i].name);
  return 0;
}
