// repro.sh for TensorRT (Polygraphy's or trtexec's line on the bundle's files) and `reduce check` for
// reduce's own engines (cmd: and check: are in command_scripts.cpp).
#include <nlohmann/json.hpp>

#include "adapters/script_words.h"
#include "adapters/trt_preset.h"
#include "reproduction/scripts.h"

namespace reduce::repro {

std::vector<ReproductionFile> trt_scripts(const EngineSpec& spec, const ReproductionContext& context) {
  const TrtOptions& o = spec.trt;
  const int version = o.version ? o.version : o.detected_version ? o.detected_version : 10;
  std::vector<std::string> polygraphy{"--trt"}, trtexec;
  // From TensorRT 11 on the precision is the model's (the bundle's converted model): no flags.
  for (auto& flag : trt_precision_flags(o, TrtTool::Polygraphy, version)) polygraphy.push_back(std::move(flag));
  for (auto& flag : trt_precision_flags(o, TrtTool::Trtexec, version)) trtexec.push_back(std::move(flag));
  if (o.tf32) polygraphy.push_back("--tf32");
  else trtexec.push_back("--noTF32");
  if (version < 11) {
    if (auto a = trt_fp32_arguments(TrtTool::Polygraphy, context.fp32_nodes)) polygraphy.insert(polygraphy.end(), a->begin(), a->end());
    if (auto a = trt_fp32_arguments(TrtTool::Trtexec, context.fp32_nodes)) trtexec.insert(trtexec.end(), a->begin(), a->end());
  }
  std::vector<std::string> atol{"--atol"}, rtol{"--rtol"};
  for (const auto& out : context.outputs) {
    atol.push_back(out.name + ":" + nlohmann::json(out.atol).dump());
    rtol.push_back(out.name + ":" + nlohmann::json(out.rtol).dump());
  }
  const std::string model = "\"$here/" + context.model_file + "\"";
  const std::string inputs = context.polygraphy_files ? " --load-inputs \"$here/inputs.json\"" : "";
  const bool compared = context.polygraphy_files && context.script_data;  // inputs.json in, expected/ to compare with
  // Polygraphy's own comparison, for a maintainer who knows it: a comment (output names made one line).
  std::string own = "polygraphy run model.onnx " + shell_command_line(polygraphy) +
                    " --load-inputs inputs.json --load-outputs expected.json " + shell_command_line(atol) + " " +
                    shell_command_line(rtol) + " --check-error-stat " + context.stat;
  for (char& c : own)
    if (c == '\n' || c == '\r') c = ' ';
  std::string text =
      "#!/bin/sh\n# The failure reduce found on TensorRT (`" + spec_in_comment(spec) + "`, TensorRT " + std::to_string(version) +
      "), without reduce.\n"
      "# Run: sh repro.sh   Exit status: 1 TensorRT fails the way reduce recorded, 0 it passes, 3 it fails another\n"
      "# way, 2 it cannot run here. Polygraphy runs TensorRT on inputs.json and saves the outputs, which compare.py\n"
      "# compares with expected/ as reduce does. Polygraphy's own comparison:\n#   " + own +
      "\n# trtexec alone builds and runs once: it shows build errors and crashes, and compares nothing.\n"
      "here=$(cd \"$(dirname \"$0\")\" && pwd)\n"
      "command -v python3 >/dev/null 2>&1 || { echo 'CANNOT RUN: python3 is needed to judge the result'; exit 2; }\n"
      "if ! command -v polygraphy >/dev/null 2>&1 && ! command -v trtexec >/dev/null 2>&1; then\n"
      "  echo 'CANNOT RUN: neither polygraphy nor trtexec is on PATH (TensorRT is not installed here)'; exit 2\n"
      "fi\n"
      "out=$(mktemp -d) || exit 2\n"
      "trap 'rm -rf \"$out\"' EXIT\n"
      "values=''\n"
      "if command -v polygraphy >/dev/null 2>&1; then\n"
      "  polygraphy run " + model + " " + shell_command_line(polygraphy) + inputs +
      " --save-outputs \"$out/outputs.json\" > \"$out/log\" 2>&1\n"
      "  status=$?\n" +
      (compared ? "  values=yes\n" : "  # tensors Polygraphy or numpy cannot hold: its own inputs, outputs not compared\n") +
      "else\n  trtexec --onnx=" + model + " " + shell_command_line(trtexec) +
      " --iterations=1 --warmUp=0 --duration=0 > \"$out/log\" 2>&1\n  status=$?\nfi\n"
      "tail -n 40 \"$out/log\"\n"
      "python3 \"$here/compare.py\" \"$out\" \"$status\" '' \"$values\"\n";
  return {{"repro.sh", std::move(text)}, {"compare.py", compare_py(context, false)}};
}

std::vector<ReproductionFile> reduce_check_scripts(const EngineSpec& spec, const ReproductionContext& context) {
  const std::string kind = context.recorded.kind.empty() ? context.failure : context.recorded.kind;
  const std::string fail_line = "verdict: FAIL (" + kind + ")";
  std::string text =
      "#!/bin/sh\n# The failure reduce found on `" + spec_in_comment(spec) +
      "`: this engine runs inside reduce, so reduce checks it.\n"
      "# Run: sh repro.sh   Exit status: 1 it fails the way reduce recorded (" + kind +
      "), 0 it passes, 3 it fails another\n# way, 2 it cannot run here (reduce is not on PATH, or cannot read the bundle).\n"
      "cd \"$(dirname \"$0\")\" || exit 2\n"
      "command -v reduce >/dev/null 2>&1 || { echo 'CANNOT RUN: reduce is not on PATH (this engine runs inside reduce)'; exit 2; }\n"
      "log=$(" + context.reduce_check + " 2>&1)\n"
      "status=$?\n"
      "printf '%s\\n' \"$log\"\n"
      "case $status in\n"
      "  0) exit 0 ;;\n"
      "  1) case \"$log\" in\n"
      "       *" + shell_word(fail_line) + "*) echo " + shell_word("FAILS as reduce recorded (" + kind + ")") + "; exit 1 ;;\n"
      "       *) echo " + shell_word("FAILS ANOTHER WAY (reduce recorded: " + kind + ")") + "; exit 3 ;;\n"
      "     esac ;;\n"
      "  *) echo \"CANNOT RUN: reduce check exited with status $status\"; exit 2 ;;\n"
      "esac\n";
  return {{"repro.sh", std::move(text)}};
}

}  // namespace reduce::repro
