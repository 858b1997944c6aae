// repro.sh: the engine's own command (a cmd: or check: template, TensorRT's Polygraphy or trtexec
// line) filled with the bundle's files, and `reduce check` for reduce's own engines. compare.py
// compares what a cmd: command wrote with expected/ when the failure is in the values.
#include <nlohmann/json.hpp>

#include "adapters/command_template.h"
#include "adapters/script_words.h"
#include "adapters/trt_preset.h"
#include "reproduction/scripts.h"

namespace reduce::repro {

namespace {

// The bundle's stand-ins for a template's placeholders: shell text (double-quoted, expanded by the
// script: $here is the bundle, $out a fresh folder). Unknown placeholders stay as they are.
const std::pair<const char*, const char*> kPlaceholders[] = {
    {"inputs", "\"$here/inputs\""},          {"outputs", "\"$out/outputs\""},
    {"inputs_json", "\"$here/inputs.json\""}, {"outputs_json", "\"$out/outputs.json\""},
    {"timing_cache", "\"$out/timing.cache\""}, {"fp32_nodes_file", "\"$out/fp32_nodes.txt\""},
    {"trtexec_output_json", "\"$out/trtexec_outputs.json\""}, {"slot", "0"},
    {"inputs_npz", "\"$here/inputs.npz\""},  {"outputs_npz", "\"$out/outputs.npz\""}};

// One template token as shell text: literal parts single-quoted, placeholders expanded.
std::string shell_token(const std::string& token, const ReproductionContext& c) {
  std::string out, literal;
  auto flush = [&] {
    if (!literal.empty()) out += shell_word(literal);
    literal.clear();
  };
  for (size_t at = 0; at < token.size();) {
    const size_t close = token[at] == '{' ? token.find('}', at) : std::string::npos;
    const std::string name = close == std::string::npos ? "" : token.substr(at + 1, close - at - 1);
    std::string value;
    if (name == "model" || name == "model_inline") value = "\"$here/" + c.model_file + "\"";
    if (name == "fp32_nodes") {
      std::string list;
      for (const auto& n : c.fp32_nodes) list += (list.empty() ? "" : ",") + n;
      value = list.empty() ? "''" : shell_word(list);
    }
    for (auto [key, text] : kPlaceholders)
      if (name == key) value = text;
    if (value.empty()) {
      literal += token[at++];
      continue;
    }
    flush();
    out += value;
    at = close + 1;
  }
  flush();
  return out.empty() ? "''" : out;
}

std::string script_head(const std::string& title) {
  return "#!/bin/sh\n# " + title +
         "\n# Run: sh repro.sh   (exits 1 when the model fails on the engine, 0 when it passes)\n"
         "here=$(cd \"$(dirname \"$0\")\" && pwd)\n"
         "out=$(mktemp -d) || exit 2\n"
         "trap 'rm -rf \"$out\"' EXIT\n"
         "mkdir \"$out/outputs\"\n";
}

const char* const kPythonOutputs = R"PY(#!/usr/bin/env python3
# Compares what the engine's command wrote (output_K.pb, NAME.npy or Polygraphy's outputs.json in the
# folder given) with the bundle's expected values, as reduce does. Needs numpy. Used by repro.sh.
import base64
import io
import json
import os
import struct
import sys

import numpy as np

CONFIG = json.loads(%CONFIG%)
TYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64, 9: np.bool_,
         10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}


def varint(data, at):
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def read_pb(path):
    """An ONNX TensorProto file: dims, data type and raw or typed data."""
    data = open(path, "rb").read()
    dims, dtype, raw, typed, at = [], 1, None, [], 0
    while at < len(data):
        key, at = varint(data, at)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, at = varint(data, at)
            if field == 1:
                dims.append(value)
            elif field == 2:
                dtype = value
            elif field in (5, 7, 11):
                typed.append(value)
        elif wire == 2:
            length, at = varint(data, at)
            chunk, at = data[at:at + length], at + length
            if field == 9:
                raw = chunk
            elif field == 1:
                p = 0
                while p < len(chunk):
                    v, p = varint(chunk, p)
                    dims.append(v)
            elif field == 4:
                typed.extend(struct.unpack("<%df" % (len(chunk) // 4), chunk))
            elif field == 10:
                typed.extend(struct.unpack("<%dd" % (len(chunk) // 8), chunk))
            elif field in (5, 7, 11):
                p = 0
                while p < len(chunk):
                    v, p = varint(chunk, p)
                    typed.append(v)
        elif wire == 5:
            typed.append(struct.unpack("<f", data[at:at + 4])[0])
            at += 4
        elif wire == 1:
            at += 8
    kind = TYPES[dtype]
    if raw is not None:
        return np.frombuffer(raw, dtype=kind).reshape(dims)
    if dtype == 10:  # float16 bits in int32_data
        return np.array(typed, dtype=np.uint16).view(np.float16).reshape(dims)
    if dtype in (3, 5, 6, 7):  # varints of negative values are 64-bit two's complement
        typed = [v - (1 << 64) if v >= 1 << 63 else v for v in typed]
    return np.array(typed, dtype=kind).reshape(dims)


def run(model, inputs, outputs, expected):
    folder = sys.argv[1]  # repro.sh's folder: outputs/, outputs.npz or Polygraphy's outputs.json
    if os.path.exists(os.path.join(folder, "outputs.npz")):
        with np.load(os.path.join(folder, "outputs.npz"), allow_pickle=False) as archive:
            return {name: archive[name] for name in outputs}
    polygraphy = os.path.join(folder, "outputs.json")
    if os.path.exists(polygraphy):
        results = json.load(open(polygraphy))["lst"][0][1][0]["outputs"]
        return {name: np.load(io.BytesIO(base64.b64decode(results[name]["array"])), allow_pickle=False) for name in outputs}
    values = {}
    for k, name in enumerate(outputs):
        npy, pb = os.path.join(folder, "outputs", name + ".npy"), os.path.join(folder, "outputs", "output_%d.pb" % k)
        values[name] = np.load(npy) if os.path.exists(npy) else read_pb(pb)
    return values
)PY";

}  // namespace

std::vector<ReproductionFile> command_scripts(const EngineSpec& spec, const ReproductionContext& context) {
  auto tokens = split_command_template(spec.command);
  if (!tokens) return reduce_check_scripts(spec, context);
  for (const auto& t : *tokens)  // trtexec's raw input files are not in a bundle
    if (t.find("{trtexec_inputs}") != std::string::npos || t.find("{trtexec_shapes}") != std::string::npos)
      return reduce_check_scripts(spec, context);
  const bool check = !spec.gives_values();
  // Without inputs.npz/expected.npz (a tensor .npy cannot hold) compare.py has nothing to read.
  if (!context.npz && (!check || spec.command.find("{inputs_npz}") != std::string::npos))
    return reduce_check_scripts(spec, context);
  std::string text = script_head(std::string("The failure reduce found with ") + (check ? "the check script" : "the engine's command") +
                                 " (`" + spec_in_comment(spec) + "`), without reduce.");
  if (!context.fp32_nodes.empty()) {
    text += "printf '%s\\n'";
    for (const auto& n : context.fp32_nodes) text += " " + shell_word(n);
    text += " > \"$out/fp32_nodes.txt\"\n";
  }
  std::string line;
  for (const auto& t : *tokens) line += (line.empty() ? "" : " ") + shell_token(t, context);
  text += line + "\nstatus=$?\n";
  if (check) {
    text += "if [ $status -ne 0 ]; then echo \"FAILS: the check exited with status $status (reduce saw: " + context.failure +
            ")\"; exit 1; fi\necho 'PASSES: the check exited with status 0'\n";
    return {{"repro.sh", std::move(text)}};
  }
  text += "if [ $status -ne 0 ]; then echo \"FAILS: the command exited with status $status (reduce saw: " + context.failure +
          ")\"; exit 1; fi\n"
          "python3 \"$here/compare.py\" \"$out\"\n";
  std::string compare = kPythonOutputs;
  compare.replace(compare.find("%CONFIG%"), 8, python_string(config_json(context)));
  compare += kPythonCompare;
  return {{"repro.sh", std::move(text)}, {"compare.py", std::move(compare)}};
}

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
  std::string text = script_head("The failure reduce found on TensorRT (`" + spec_in_comment(spec) + "`, TensorRT " +
                                 std::to_string(version) + "), without reduce.") +
                     "# Polygraphy compares TensorRT's outputs with expected.json (the reference's values); trtexec alone\n"
                     "# builds and runs once, which shows build errors and crashes but compares nothing.\n"
                     "if command -v polygraphy >/dev/null 2>&1; then\n"
                     "  polygraphy run " + model + " " + shell_command_line(polygraphy);
  if (context.polygraphy_files)
    text += " --load-inputs \"$here/inputs.json\" --load-outputs \"$here/expected.json\" " + shell_command_line(atol) + " " +
            shell_command_line(rtol) + " --check-error-stat " + context.stat;
  text += "\nelse\n  trtexec --onnx=" + model + " " + shell_command_line(trtexec) +
          " --iterations=1 --warmUp=0 --duration=0\nfi\nstatus=$?\n"
          "if [ $status -ne 0 ]; then echo \"FAILS: exit status $status (reduce saw: " + context.failure +
          ")\"; exit 1; fi\necho 'PASSES: the failure does not show'\n";
  return {{"repro.sh", std::move(text)}};
}

std::vector<ReproductionFile> reduce_check_scripts(const EngineSpec& spec, const ReproductionContext& context) {
  std::string text = "#!/bin/sh\n# The failure reduce found on `" + spec_in_comment(spec) +
                     "`: this engine runs inside reduce, so reduce checks it.\n"
                     "# Run: sh repro.sh   (exits 1 when the model fails the same way)\n"
                     "cd \"$(dirname \"$0\")\" || exit 2\n" + context.reduce_check + "\n";
  return {{"repro.sh", std::move(text)}};
}

}  // namespace reduce::repro
