// The script writers behind reproduction_files, one per family of engines, and the pieces they share.
#pragma once

#include <string>
#include <vector>

#include "adapters/reproduction.h"

namespace reduce::repro {

// The context as one JSON object (ensure_ascii: valid in Python and JavaScript source), for the
// scripts' CONFIG: model, inputs, outputs with tolerances, stat, quantile, failure, plus `extra`.
std::string config_json(const ReproductionContext& context, const std::string& extra_key = "",
                        const std::string& extra_json = "");

// The spec as one line for a script's comment (a template's line breaks would end the comment).
std::string spec_in_comment(const EngineSpec& spec);

// Python: reduce's comparison and same-failure rule, the exit contract (python_judge.cpp). Needs
// CONFIG, numpy as np (None when missing), json, math, os, re and sys.
extern const char* const kPythonJudge;

// compare.py: judges what a command or tool did (its status, output and the outputs it wrote, every
// form reduce reads) by kPythonJudge; `check`: by a check: script's pass rule instead of outputs.
// Run as `python3 compare.py FOLDER STATUS [LIMITED] [VALUES]` (VALUES "": the tool wrote none).
std::string compare_py(const ReproductionContext& context, bool check);

// ONNX Runtime: repro.py (onnxruntime for Python) and repro.mjs (onnxruntime-node), the spec's session options.
std::vector<ReproductionFile> ort_python(const EngineSpec& spec, const ReproductionContext& context);
std::vector<ReproductionFile> ort_node(const EngineSpec& spec, const ReproductionContext& context);
std::vector<ReproductionFile> opencv_scripts(const EngineSpec& spec, const ReproductionContext& context);
// cmd:, check: and trt: the engine's own command filled with the bundle's files.
std::vector<ReproductionFile> command_scripts(const EngineSpec& spec, const ReproductionContext& context);
// trt: Polygraphy's line comparing with expected.json, else trtexec's build and run.
std::vector<ReproductionFile> trt_scripts(const EngineSpec& spec, const ReproductionContext& context);
// ref and opt: `reduce check`.
std::vector<ReproductionFile> reduce_check_scripts(const EngineSpec& spec, const ReproductionContext& context);

}  // namespace reduce::repro
