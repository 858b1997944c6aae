// The bundle's standalone reproduction: the model as the engine ran it, .npz data, the engine's own scripts.
#pragma once

#include <filesystem>
#include <string>

#include "oracle/oracle.h"
#include "report/report.h"

namespace reduce {

// Whether the engine under test reads Polygraphy's files (TensorRT, a cmd: template with
// {inputs_json}): the bundle then writes inputs.json and expected.json whatever --save-format says.
bool wants_polygraphy_files(const Oracle& oracle);

// Writes, next to model.onnx: the converted model a typed engine ran (model_fp16.onnx,
// model_bf16.onnx), inputs.npz and expected.npz, and reproduction_files() for the engine; fills the
// report's reproducer_* and reproduction_* fields. Tensors .npy cannot hold (bfloat16) leave the
// .npz files and the scripts that read them out, with a note.
Status write_reproduction(const std::filesystem::path& dir, const Oracle& oracle, const CandidateRun& run,
                          const Verdict& verdict, ReductionReport& report);

// issue.md (report/issue_markdown), once the report is complete: the engine's bug template with
// the bundle's script inline (repro.mjs, else repro.py, else repro.sh); removes an earlier one when
// the engine has no template. Sets report.reproduction_issue.
Status write_issue(const std::filesystem::path& dir, ReductionReport& report);

}  // namespace reduce
