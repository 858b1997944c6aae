// `--engine trt:...` end to end through a stand-in for `polygraphy run` (a shell script, not Polygraphy,
// no TensorRT): it parses Polygraphy's flags, reads and writes Polygraphy's JSON files, and computes
// with `reduce run` on the optimized engine (fp16/bf16 and --layer-precisions honoured, a fault
// injected). Also: no tool on PATH is exit 2 with one line; bundles in Polygraphy's format.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/polygraphy_json.h"
#include "core/tensor_file.h"
#include "fault_models.h"
#include "process_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;

// The stand-in `polygraphy` in dir/bin; it injects the fault named by $FAULT (none when empty) and runs
// $REDUCE (both set by run_with_path). Returns the folder.
std::string install_polygraphy_stand_in(const TempDir& dir) {
  fs::create_directories(dir / "bin");
  const auto script = dir / "bin" / "polygraphy";
  write_bytes(script, R"SH(#!/bin/sh
# Stand-in for `polygraphy run MODEL --trt [--fp16|--bf16] --load-inputs IN --save-outputs OUT|--load-outputs GOLDEN
# [--load-timing-cache F --save-timing-cache F] [--precision-constraints obey --layer-precisions
# NAME:float32 ...]`: not Polygraphy, no TensorRT.
[ "$1" = run ] || { echo "polygraphy stand-in: expected 'run'" >&2; exit 2; }
model=$2; shift 2
precision=; constraints=; in=; out=; names=; golden=
while [ $# -gt 0 ]; do
  case $1 in
    --trt) ;;
    --fp16|--bf16) precision=${1#--} ;;
    --load-inputs) in=$2; shift ;;
    --save-outputs) out=$2; shift ;;
    --load-outputs) golden=$2; shift ;;
    --atol|--rtol) while [ $# -gt 1 ] && [ "${2#--}" = "$2" ]; do shift; done ;;
    --check-error-stat) shift ;;
    --precision-constraints) constraints=$2; shift ;;
    --load-timing-cache|--save-timing-cache) shift ;;
    --layer-precisions)
      while [ $# -gt 1 ] && [ "${2#--}" = "$2" ]; do names="$names${2%:float32}
"; shift; done ;;
    *) echo "polygraphy stand-in: unknown flag $1" >&2; exit 2 ;;
  esac
  shift
done
options=$precision
if [ "$constraints" = obey ] && [ -n "$names" ]; then
  printf '%s' "$names" > "$out.fp32.txt"
  options="${options:+$options,}fp32=@$out.fp32.txt"
fi
[ -n "$FAULT" ] && options="${options:+$options,}fault=$FAULT"
# --load-outputs: compare with those values, exit 1 when they differ (as Polygraphy does).
[ -n "$golden" ] && exec "$REDUCE" check "$model" --engine "opt${options:+:$options}" --inputs "$in" --expected "$golden"
exec "$REDUCE" run "$model" --engine "opt${options:+:$options}" --inputs "$in" --save-format polygraphy --save-outputs "$out"
)SH");
  chmod(script.c_str(), 0755);
  return (dir / "bin").string();
}

// A stand-in for Polygraphy on TensorRT 11 in dir/bin: its #! line names a stand-in Python that
// answers `import tensorrt; print(tensorrt.__version__)` with 11.4.0 (how the preset asks); the
// removed builder flags (--fp16, --bf16, --int8, --precision-constraints, --layer-precisions) are
// unrecognized arguments, as argparse says them; the model runs as it is typed (`reduce run` on
// the reference: an FP16 node computes in FP16).
std::string install_polygraphy_11_stand_in(const TempDir& dir) {
  fs::create_directories(dir / "bin");
  const auto python = dir / "bin" / "python-with-trt11";
  write_bytes(python, R"SH(#!/bin/sh
[ "$1" = -c ] && { echo 11.4.0; exit 0; }
exec /bin/sh "$@"
)SH");
  chmod(python.c_str(), 0755);
  const auto script = dir / "bin" / "polygraphy";
  write_bytes(script, "#!" + python.string() + "\n" + R"SH(
[ "$1" = run ] || { echo "polygraphy stand-in: expected 'run'" >&2; exit 2; }
model=$2; shift 2
in=; out=
while [ $# -gt 0 ]; do
  case $1 in
    --trt|--tf32) ;;
    --load-timing-cache|--save-timing-cache) shift ;;
    --load-inputs) in=$2; shift ;;
    --save-outputs) out=$2; shift ;;
    *) echo "polygraphy run: error: unrecognized arguments: $1" >&2; exit 2 ;;
  esac
  shift
done
exec "$REDUCE" run "$model" --engine ref --inputs "$in" --save-format polygraphy --save-outputs "$out"
)SH");
  chmod(script.c_str(), 0755);
  return (dir / "bin").string();
}

// The trtexec stand-in (tests/adapters/trtexec_stand_in.cpp, a program: trtexec's raw input files and
// --exportOutput JSON) as dir/bin/trtexec; TRTEXEC_STAND_IN_VERSION says which TensorRT it is.
std::string install_trtexec_stand_in(const TempDir& dir) {
  fs::create_directories(dir / "bin");
  fs::create_symlink(std::string(REDUCE_BINARY_DIR) + "/trtexec_stand_in", dir / "bin" / "trtexec");
  return (dir / "bin").string();
}

// `reduce ARGS` with PATH = bin first (the stand-ins), FAULT and REDUCE for the stand-in, and `env`.
testing::ProcessRun run_with_path(const std::string& bin, const std::string& fault, std::vector<std::string> args,
                                  const std::vector<std::string>& env = {}) {
  const std::string reduce = std::string(REDUCE_BINARY_DIR) + "/reduce";
  args.insert(args.begin(), reduce);
  args.insert(args.begin(), env.begin(), env.end());
  args.insert(args.begin(), {"env", "PATH=" + bin + ":/usr/bin:/bin", "FAULT=" + fault, "REDUCE=" + reduce});
  return testing::run_process(args);
}

const std::vector<std::string> kTrtexec10{"TRTEXEC_STAND_IN_VERSION=10"};
const std::vector<std::string> kTrtexec11{"TRTEXEC_STAND_IN_VERSION=11"};

TEST(TrtCli, ReducesThroughAPolygraphyStandInToTheFaultsOneNode) {
  TempDir dir;
  const std::string bin = install_polygraphy_stand_in(dir);
  write_bytes(dir / "chain.onnxtxt", testing::kBroadcastChain);
  const auto out = dir / "bundle";
  auto r = run_with_path(bin, "broadcast-batch1",
                         {(dir / "chain.onnxtxt").string(), "--engine", "trt:fp16", "-j", "2", "-o", out.string(),
                          "--save-format", "polygraphy"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
  EXPECT_EQ(report.at("engine"), "trt:fp16");
  EXPECT_EQ(report.at("reduced").at("nodes"), 1) << report.dump(2);
  EXPECT_EQ(report.at("reduced").at("op_types").dump(), R"({"Mul":1})");
  const std::string md = read_bytes(out / "report.md");
  EXPECT_NE(md.find("**Engine command:** `" + bin + "/polygraphy run {model} --trt --fp16 --load-inputs {inputs_json}"),
            std::string::npos)
      << md;
  // The bundle's Polygraphy files hold what inputs/ and expected/ hold.
  EXPECT_NE(md.find("polygraphy run model.onnx --trt --load-inputs inputs.json --load-outputs expected.json"), std::string::npos);
  auto inputs = read_polygraphy_json(out / "inputs.json");
  auto expected = read_polygraphy_json(out / "expected.json");
  ASSERT_TRUE(inputs.ok() && expected.ok()) << (inputs.ok() ? expected.error().message() : inputs.error().message());
  ASSERT_EQ(inputs->size(), 1u);
  ASSERT_EQ(expected->size(), 1u);
  const auto pb_files = std::distance(fs::directory_iterator(out / "inputs"), fs::directory_iterator());
  ASSERT_EQ((*inputs)[0].tensors.size(), static_cast<size_t>(pb_files));
  ASSERT_GE(pb_files, 1);
  for (size_t k = 0; k < (*inputs)[0].tensors.size(); ++k) {
    auto pb = read_tensor_pb(out / "inputs" / ("input_" + std::to_string(k) + ".pb"));
    ASSERT_TRUE(pb.ok());
    EXPECT_EQ((*inputs)[0].tensors[k].name, pb->name);
    EXPECT_TRUE((*inputs)[0].tensors[k].tensor.equals(pb->tensor));
  }
  auto pb = read_tensor_pb(out / "expected" / "output_0.pb");
  ASSERT_TRUE(pb.ok());
  ASSERT_EQ((*expected)[0].tensors.size(), 1u);
  EXPECT_EQ((*expected)[0].tensors[0].name, pb->name);
  EXPECT_TRUE((*expected)[0].tensors[0].tensor.equals(pb->tensor));
  // Without reduce: repro.sh runs Polygraphy on the bundle's files; compare.py compares its outputs.
  const std::string reduce = std::string(REDUCE_BINARY_DIR) + "/reduce";
  auto repro = testing::run_process({"env", "PATH=" + bin + ":/usr/bin:/bin", "FAULT=broadcast-batch1", "REDUCE=" + reduce,
                                     "sh", (out / "repro.sh").string()});
  EXPECT_EQ(repro.exit_code, 1) << repro.out << repro.err;
  auto fixed = testing::run_process({"env", "PATH=" + bin + ":/usr/bin:/bin", "FAULT=", "REDUCE=" + reduce, "sh",
                                     (out / "repro.sh").string()});
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out << fixed.err;
  EXPECT_NE(read_bytes(out / "repro.sh").find("--fp16 --load-inputs \"$here/inputs.json\" --save-outputs \"$out/outputs.json\""),
            std::string::npos);
  EXPECT_NE(repro.out.find("FAILS as reduce recorded (mismatch)"), std::string::npos) << repro.out;
  // Without TensorRT's tools: the script cannot run, it does not say FAILS.
  auto none = testing::run_process({"env", "PATH=/usr/bin:/bin", "sh", (out / "repro.sh").string()});
  EXPECT_EQ(none.exit_code, 2) << none.out << none.err;
}

TEST(TrtCli, PrecisionThroughAPolygraphyStandInFindsTheFp16OverflowSet) {
  TempDir dir;
  const std::string bin = install_polygraphy_stand_in(dir);
  const std::string model = testing::save_named_model(dir, testing::kSquareOverflow, "norm.onnx");
  const auto out = dir / "set";
  auto r = run_with_path(bin, "", {"precision", model, "--engine", "trt:fp16", "-j", "2", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(read_bytes(out / "precision.txt"), "square\nvar\nve\nstd\n");
  // The set through the stand-in's --layer-precisions: the model passes with it, fails without.
  auto check = run_with_path(bin, "", {"check", (out / "model.onnx").string(), "--engine",
                                       "trt:fp16,fp32=@" + (out / "precision.txt").string()});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("engine command: " + bin +
                           "/polygraphy run {model} --trt --fp16 --load-inputs {inputs_json} --save-outputs {outputs_json} "
                           "--load-timing-cache {timing_cache} --save-timing-cache {timing_cache} --precision-constraints obey --layer-precisions square:float32 var:float32 ve:float32 "
                           "std:float32\n"),
            std::string::npos)
      << check.out;
  auto fails = run_with_path(bin, "", {"check", (out / "model.onnx").string(), "--engine", "trt:fp16"});
  EXPECT_EQ(fails.exit_code, 1) << fails.out << fails.err;
}

TEST(TrtCli, WithoutPolygraphyOrTrtexecOnPathItIsExit2WithOneLine) {
  TempDir dir;
  fs::create_directories(dir / "empty");
  write_bytes(dir / "chain.onnxtxt", testing::kBroadcastChain);
  for (std::vector<std::string> args : {std::vector<std::string>{"check", (dir / "chain.onnxtxt").string()},
                                        std::vector<std::string>{(dir / "chain.onnxtxt").string(), "-o",
                                                                 (dir / "out").string()}}) {
    args.insert(args.end(), {"--engine", "trt:fp16"});
    auto r = run_with_path((dir / "empty").string(), "", args);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(r.err,
              "error: trt:fp16: neither polygraphy nor trtexec is on PATH; install TensorRT's trtexec (its bin/ folder on "
              "PATH) or Polygraphy (`pip install polygraphy`, with TensorRT's Python package)\n");
  }
}

TEST(TrtCli, ABundleFormatOtherThanPbOrPolygraphyIsExit2) {
  TempDir dir;
  write_bytes(dir / "chain.onnxtxt", testing::kBroadcastChain);
  auto r = testing::run_reduce({(dir / "chain.onnxtxt").string(), "--engine", "opt:fault=broadcast-batch1", "-o",
                                (dir / "out").string(), "--save-format", "npy"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: --save-format: a bundle is pb or polygraphy, not 'npy'\n");
  EXPECT_FALSE(fs::exists(dir / "out"));
}

// TensorRT 11 (strongly typed) through its Polygraphy stand-in: `trt:fp16` runs the model converted
// to FP16 at the ONNX level, never a removed flag; `reduce precision` finds the keep set and writes
// the deployable model; int8 is one line about explicit quantization; a forced version=10 (flags the
// tool refuses) is a setup failure, never a reproducer.
TEST(TrtCli, OnTensorRt11TheModelIsConvertedAndNoRemovedFlagIsPassed) {
  TempDir dir;
  const std::string bin = install_polygraphy_11_stand_in(dir);
  const std::string model = testing::save_named_model(dir, testing::kSquareOverflow, "norm.onnx");
  auto fp32 = run_with_path(bin, "", {"check", model, "--engine", "trt"});
  EXPECT_EQ(fp32.exit_code, 0) << fp32.out << fp32.err;
  auto fp16 = run_with_path(bin, "", {"check", model, "--engine", "trt:fp16"});
  EXPECT_EQ(fp16.exit_code, 1) << fp16.out << fp16.err;
  EXPECT_EQ(fp16.out.find("unrecognized arguments"), std::string::npos) << fp16.out;
  EXPECT_NE(fp16.out.find("FAIL (mismatch)"), std::string::npos) << fp16.out;
  EXPECT_NE(fp16.out.find("TensorRT 11: on the model converted to FP16 at the ONNX level"), std::string::npos) << fp16.out;

  const auto out = dir / "set";
  auto precision = run_with_path(bin, "", {"precision", model, "--engine", "trt:fp16", "-j", "2", "-o", out.string()});
  ASSERT_EQ(precision.exit_code, 0) << precision.out << precision.err;
  EXPECT_EQ(read_bytes(out / "precision.txt"), "square\nvar\nve\nstd\n");
  ASSERT_TRUE(fs::exists(out / "model_fp16.onnx"));
  const std::string md = read_bytes(out / "report.md");
  EXPECT_NE(md.find("trtexec --onnx=model_fp16.onnx"), std::string::npos) << md;
  EXPECT_EQ(md.find("--layerPrecisions"), std::string::npos) << "TensorRT 11 has no layer precisions";
  // The deployable model on the stand-in as it is, FP32 engine spec: it passes.
  auto deployed = run_with_path(bin, "", {"check", (out / "model_fp16.onnx").string(), "--engine", "trt", "--atol", "0.01",
                                          "--rtol", "0.01"});
  EXPECT_EQ(deployed.exit_code, 0) << deployed.out << deployed.err;

  auto int8 = run_with_path(bin, "", {"check", model, "--engine", "trt:int8"});
  EXPECT_EQ(int8.exit_code, 2);
  EXPECT_EQ(int8.err, "error: trt:int8: TensorRT 11 builds the graph as typed: int8 needs explicit quantization "
                      "(QuantizeLinear/DequantizeLinear in the model), not a flag\n");

  auto forced = run_with_path(bin, "", {model, "--engine", "trt:fp16,version=10", "-o", (dir / "none").string()});
  EXPECT_EQ(forced.exit_code, 7) << forced.out << forced.err;
  EXPECT_FALSE(fs::exists(dir / "none" / "model.onnx"));
}

// A bundle made on TensorRT 11 carries TensorRT 11's script: the spec is settled once per reduction
// (the version asked of the tool) and the bundle's scripts are written from it, so repro.sh runs the
// converted model with no precision flag (TensorRT 11 refuses --fp16) and gives the maintainer's
// verdict, 1: the same failure. (The scripts parsed the spec string again, unsettled, and wrote
// TensorRT 10's flags.)
TEST(TrtCli, OnTensorRt11TheBundlesReproShIsTensorRt11s) {
  TempDir dir;
  const std::string bin = install_polygraphy_11_stand_in(dir);
  const std::string model = testing::save_named_model(dir, testing::kSquareOverflow, "norm.onnx");
  const auto out = dir / "bundle";
  auto r = run_with_path(bin, "", {model, "--engine", "trt:fp16", "-o", out.string()});
  ASSERT_TRUE(fs::exists(out / "repro.sh")) << r.exit_code << "\n" << r.out << r.err;
  const std::string script = read_bytes(out / "repro.sh");
  EXPECT_NE(script.find("TensorRT 11"), std::string::npos) << script;
  EXPECT_EQ(script.find("--fp16"), std::string::npos) << script;
  const std::string reduce = std::string(REDUCE_BINARY_DIR) + "/reduce";
  auto repro = testing::run_process({"env", "PATH=" + bin + ":/usr/bin:/bin", "FAULT=", "REDUCE=" + reduce, "sh",
                                     (out / "repro.sh").string()});
  EXPECT_EQ(repro.exit_code, 1) << repro.out << repro.err;
}

// TensorRT 11 through its trtexec stand-in (banner v110400, --fp16 and --layerPrecisions unknown
// options, the graph run as typed): the same answers as through Polygraphy, never an "Unknown option".
TEST(TrtCli, OnTrtexec11TheModelIsConvertedAndNoRemovedFlagIsPassed) {
  TempDir dir;
  const std::string bin = install_trtexec_stand_in(dir);
  const std::string model = testing::save_named_model(dir, testing::kSquareOverflow, "norm.onnx");
  auto fp32 = run_with_path(bin, "", {"check", model, "--engine", "trt"}, kTrtexec11);
  EXPECT_EQ(fp32.exit_code, 0) << fp32.out << fp32.err;
  auto fp16 = run_with_path(bin, "", {"check", model, "--engine", "trt:fp16"}, kTrtexec11);
  EXPECT_EQ(fp16.exit_code, 1) << fp16.out << fp16.err;
  EXPECT_EQ(fp16.out.find("Unknown option"), std::string::npos) << fp16.out;
  EXPECT_NE(fp16.out.find("FAIL (mismatch)"), std::string::npos) << fp16.out;
  EXPECT_NE(fp16.out.find("engine command: " + bin + "/trtexec --onnx={model} {trtexec_shapes} --noTF32 --loadInputs="), std::string::npos)
      << fp16.out;
  EXPECT_NE(fp16.out.find("TensorRT 11: on the model converted to FP16 at the ONNX level"), std::string::npos) << fp16.out;

  const auto out = dir / "set";
  const auto log = dir / "trtexec.log";
  auto env = kTrtexec11;
  env.push_back("TRTEXEC_STAND_IN_LOG=" + log.string());
  auto precision = run_with_path(bin, "", {"precision", model, "--engine", "trt:fp16", "-j", "2", "-o", out.string()}, env);
  ASSERT_EQ(precision.exit_code, 0) << precision.out << precision.err;
  EXPECT_EQ(read_bytes(out / "precision.txt"), "square\nvar\nve\nstd\n");
  EXPECT_NE(precision.out.find("TensorRT 11: trtexec --onnx=model_fp16.onnx"), std::string::npos) << precision.out;
  EXPECT_NE(precision.out.find("model_fp16.onnx, report.md"), std::string::npos) << precision.out;
  EXPECT_EQ(precision.out.find("--layerPrecisions"), std::string::npos) << precision.out;
  // The version is asked for the command line shown and once for the reduction, never per candidate.
  std::istringstream lines(read_bytes(log));
  int asked = 0, runs = 0;
  for (std::string line; std::getline(lines, line);) (line.find(" --help") != std::string::npos ? asked : runs) += 1;
  EXPECT_LE(asked, 2);
  EXPECT_GT(runs, 4);
  auto deployed = run_with_path(bin, "", {"check", (out / "model_fp16.onnx").string(), "--engine", "trt", "--atol", "0.01",
                                          "--rtol", "0.01"},
                                kTrtexec11);
  EXPECT_EQ(deployed.exit_code, 0) << deployed.out << deployed.err;

  for (const char* word : {"int8", "fp8", "int4"}) {
    auto quantized = run_with_path(bin, "", {"check", model, "--engine", std::string("trt:") + word}, kTrtexec11);
    EXPECT_EQ(quantized.exit_code, 2) << word;
    EXPECT_EQ(quantized.err, std::string("error: trt:") + word + ": TensorRT 11 builds the graph as typed: " + word +
                                 " needs explicit quantization (QuantizeLinear/DequantizeLinear in the model), not a flag\n");
  }
  // Told it is TensorRT 10, the preset passes --fp16: trtexec 11 refuses it on every model, which is a
  // setup failure (exit 7), never a reproducer.
  auto forced = run_with_path(bin, "", {model, "--engine", "trt:fp16,version=10", "-o", (dir / "none").string()},
                              kTrtexec11);
  EXPECT_EQ(forced.exit_code, 7) << forced.out << forced.err;
  EXPECT_NE((forced.out + forced.err).find("Unknown option: --fp16"), std::string::npos) << forced.out << forced.err;
  EXPECT_FALSE(fs::exists(dir / "none" / "model.onnx"));
}

// TensorRT 10 through the same stand-in: the builder flags and the FP32 layers reach trtexec
// (--fp16, --precisionConstraints=obey --layerPrecisions=N:fp32), and the set found passes with them.
TEST(TrtCli, OnTrtexec10TheKeepSetIsPassedAsLayerPrecisions) {
  TempDir dir;
  const std::string bin = install_trtexec_stand_in(dir);
  const std::string model = testing::save_named_model(dir, testing::kSquareOverflow, "norm.onnx");
  const auto out = dir / "set";
  auto precision = run_with_path(bin, "", {"precision", model, "--engine", "trt:fp16", "-j", "2", "-o", out.string()},
                                 kTrtexec10);
  ASSERT_EQ(precision.exit_code, 0) << precision.out << precision.err;
  EXPECT_EQ(read_bytes(out / "precision.txt"), "square\nvar\nve\nstd\n");
  EXPECT_FALSE(fs::exists(out / "model_fp16.onnx")) << "TensorRT 10 takes the set as flags";
  auto check = run_with_path(bin, "", {"check", (out / "model.onnx").string(), "--engine",
                                       "trt:fp16,fp32=@" + (out / "precision.txt").string()},
                             kTrtexec10);
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("--precisionConstraints=obey --layerPrecisions=square:fp32,var:fp32,ve:fp32,std:fp32\n"),
            std::string::npos)
      << check.out;
  auto fails = run_with_path(bin, "", {"check", (out / "model.onnx").string(), "--engine", "trt:fp16"}, kTrtexec10);
  EXPECT_EQ(fails.exit_code, 1) << fails.out << fails.err;
}

// A model with a dynamic batch through trtexec: the inputs' shapes go as --shapes (trtexec would
// build the dynamic dims as 1 and refuse the inputs otherwise), and a static model gets no --shapes
// (trtexec refuses them there). TensorRT 10 and 11 alike.
TEST(TrtCli, TrtexecGetsTheShapesOfDynamicInputsOnly) {
  TempDir dir;
  const std::string bin = install_trtexec_stand_in(dir);
  write_bytes(dir / "dynamic.onnxtxt", R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 3] X) => (float[N, 3] Y)
{
  Y = Relu(X)
}
)");
  auto x = Tensor::from_vector<float>(DType::Float, {2, 3}, {1, -2, 3, -4, 5, -6});
  ASSERT_TRUE(x.ok());
  fs::create_directories(dir / "inputs");
  ASSERT_TRUE(write_tensor_pb(dir / "inputs" / "input_0.pb", "X", *x).ok());
  for (const auto& version : {kTrtexec10, kTrtexec11}) {
    auto r = run_with_path(bin, "", {"check", (dir / "dynamic.onnxtxt").string(), "--engine", "trt", "--inputs",
                                     (dir / "inputs").string()},
                           version);
    EXPECT_EQ(r.exit_code, 0) << version[0] << r.out << r.err;
    EXPECT_NE(r.out.find("| Y | 6 |"), std::string::npos) << r.out;
  }
}

// TensorRT's timing cache across the builds of one reduction: every build names a cache file of one
// private folder, as many files as builds ran at once (far fewer than builds), never one file to two
// builds at once (the stand-in holds a lock on it while it builds and logs any overlap); the report says so.
// --no-timing-cache passes none.
TEST(TrtCli, EveryBuildOfAReductionReusesATimingCacheNeverTwoAtOnce) {
  TempDir dir;
  const std::string bin = install_trtexec_stand_in(dir);
  write_bytes(dir / "chain.onnxtxt", testing::kBroadcastChain);
  for (const bool cache : {true, false}) {
    const auto log = dir / (cache ? "cached.log" : "uncached.log");
    const auto out = dir / (cache ? "cached" : "uncached");
    std::vector<std::string> args{(dir / "chain.onnxtxt").string(), "--engine", "trt:fp16", "-j", "2", "-o", out.string()};
    if (!cache) args.push_back("--no-timing-cache");
    auto env = kTrtexec10;
    env.push_back("TRTEXEC_STAND_IN_LOG=" + log.string());
    auto r = run_with_path(bin, "broadcast-batch1", args, env);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    std::istringstream lines(read_bytes(log));
    std::set<std::string> files;
    size_t builds = 0;
    for (std::string line; std::getline(lines, line);) {
      EXPECT_NE(line.rfind("overlap", 0), 0u) << "two builds wrote one cache at once: " << line;
      if (line.find(" --help") != std::string::npos) continue;
      ++builds;
      const size_t at = line.find("--timingCacheFile=");
      EXPECT_EQ(at != std::string::npos, cache) << line;
      if (at != std::string::npos) files.insert(line.substr(at + 18, line.find(' ', at) - at - 18));
    }
    const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
    if (!cache) {
      EXPECT_TRUE(report.at("timing_cache").is_null());
      continue;
    }
    ASSERT_GT(builds, 4u);
    EXPECT_GE(files.size(), 1u);
    EXPECT_LT(files.size() * 2, builds) << "the files are reused, not one per build";
    std::set<std::string> folders;
    for (const auto& f : files) folders.insert(fs::path(f).parent_path().string());
    EXPECT_EQ(folders.size(), 1u);
    // The report counts the builds up to its writing (the bundle's own re-check comes after).
    EXPECT_GT(report.at("timing_cache").at("builds").get<size_t>(), 0u);
    EXPECT_LE(report.at("timing_cache").at("builds").get<size_t>(), builds);
    EXPECT_EQ(report.at("timing_cache").at("files"), files.size());
    EXPECT_NE(read_bytes(out / "report.md").find("**Timing cache:** "), std::string::npos);
    EXPECT_FALSE(fs::exists(*folders.begin())) << "the cache folder goes with the reduction";
  }
}

}  // namespace
}  // namespace reduce
