// The `trt` preset: its spec parses and prints canonically, expands to the Polygraphy or trtexec
// argv of the tool found on PATH, maps FP32 nodes to each tool's flags, and names what to install
// when neither is there. No TensorRT runs here: the "tools" are empty executable files.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <sstream>

#include "adapters/engine_spec.h"
#include "adapters/trt_preset.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::TempDir;

// A folder holding executable files with the given names (the tools' stand-ins; never run here).
std::string tools_folder(const TempDir& dir, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    testing::write_bytes(dir / name, "#!/bin/sh\nexit 0\n");
    chmod((dir / name).c_str(), 0755);
  }
  return dir.path().string();
}

std::string problem(std::string_view text) {
  auto spec = parse_engine_spec(text);
  EXPECT_FALSE(spec.ok()) << text;
  return spec.ok() ? std::string() : spec.error().what;
}

TEST(TrtPreset, SpecsParseAndPrintCanonically) {
  for (const char* canonical : {"trt", "trt:fp16", "trt:bf16", "trt:int8", "trt:fp16,int8,tf32",
                                "trt:fp16,fp32=a+b%2Cc,tool=trtexec", "trt:tool=polygraphy", "isolated:trt:fp16",
                                "trt:fp16,version=11", "trt:bf16,tool=trtexec,version=10"}) {
    auto spec = parse_engine_spec(canonical);
    ASSERT_TRUE(spec.ok()) << canonical << ": " << spec.error().message();
    EXPECT_EQ(to_string(*spec), canonical);
  }
  auto spec = parse_engine_spec("trt:tool=trtexec,int8,fp16,fp16");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->kind, EngineKind::Trt);
  EXPECT_EQ(to_string(*spec), "trt:fp16,int8,tool=trtexec");
  EXPECT_EQ(spec->trt.tool, TrtTool::Trtexec);
}

TEST(TrtPreset, PrecisionAndFp32NodesAreTheSpecs) {
  EXPECT_EQ(parse_engine_spec("trt").value().precision(), Precision::FP32);
  EXPECT_EQ(parse_engine_spec("trt:fp16").value().precision(), Precision::FP16);
  EXPECT_EQ(parse_engine_spec("trt:fp16,bf16").value().precision(), Precision::BF16);
  EXPECT_EQ(parse_engine_spec("trt:int8").value().precision(), Precision::FP32);
  EXPECT_TRUE(parse_engine_spec("trt:int8").value().controls_precision());
  EXPECT_TRUE(parse_engine_spec("isolated:trt:fp16").value().controls_precision());
  EXPECT_FALSE(parse_engine_spec("trt:tf32").value().controls_precision());
  EXPECT_TRUE(parse_engine_spec("trt").value().external());
  auto pinned = with_fp32_nodes(parse_engine_spec("trt:fp16").value(), {{"x", "y+z"}, ""});
  ASSERT_TRUE(pinned.ok());
  EXPECT_EQ(to_string(*pinned), "trt:fp16,fp32=x+y%2Bz");
  EXPECT_EQ(pinned->fp32().names, (std::vector<std::string>{"x", "y+z"}));
}

TEST(TrtPreset, BadOptionsAreOneLineNamingTheKnownOnes) {
  EXPECT_EQ(problem("trt:fp4"), "unknown option 'fp4' (known: fp16, bf16, int8, fp8, int4, tf32, fp32=NODE+NODE|@FILE, "
                                "tool=polygraphy|trtexec, version=10|11)");
  EXPECT_EQ(problem("trt:fp16,version=12"), "unknown TensorRT version '12' (known: 10, 11)");
  EXPECT_EQ(problem("trt:tool=onnxrt"), "unknown tool 'onnxrt' (known: polygraphy, trtexec)");
  EXPECT_EQ(problem("trt:fp16,"), "empty option in 'fp16,'");
  EXPECT_NE(problem("trt:").find("empty options after 'trt:'"), std::string::npos);
  auto missing = parse_engine_spec("trt:fp16,fp32=@/nonexistent/pins.txt");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().where, "/nonexistent/pins.txt");
}

// Every option word the spec takes (trt_precisions.def's precisions and the rest) has a row in
// docs/tensorrt.md's table of the spec, and each precision parses, prints back, and is the tools'
// flag on TensorRT 10 and none on 11.
TEST(TrtPreset, EveryOptionWordIsInTheDocsTableAndTheError) {
  const std::string doc = testing::read_bytes(std::filesystem::path(REDUCE_SOURCE_DIR) / "docs" / "tensorrt.md");
  const size_t from = doc.find("## The spec");
  ASSERT_NE(from, std::string::npos);
  // The first cells of the table's rows: the option words each row is about.
  std::string first_cells;
  std::istringstream lines(doc.substr(from, doc.find("\n## ", from + 1) - from));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("| ", 0) == 0) first_cells += line.substr(0, line.find('|', 1)) + "\n";
  const std::string words = trt_option_words();
  EXPECT_NE(problem("trt:fp4").find(words), std::string::npos);
  size_t count = 0;
  for (size_t start = 0; start < words.size(); ++count) {
    const size_t end = std::min(words.find(", ", start), words.size());
    const std::string word = words.substr(start, end - start);
    start = end + 2;
    const std::string named = "`" + word.substr(0, word.find('=') == std::string::npos ? word.size() : word.find('=') + 1);
    EXPECT_NE(first_cells.find(named), std::string::npos) << named << " has no row in docs/tensorrt.md";
  }
  size_t precisions = 0;
#define TRT_PRECISION(word, member, trtexec_flag, polygraphy_flag, quantized)                             \
  {                                                                                                        \
    ++precisions;                                                                                          \
    auto o = parse_trt_options(word);                                                                      \
    ASSERT_TRUE(o.ok()) << word;                                                                           \
    EXPECT_TRUE(o->member && o->reduced_precision()) << word;                                              \
    EXPECT_EQ(to_string(*o), word);                                                                        \
    EXPECT_EQ(trt_precision_flags(*o, TrtTool::Trtexec, 10), std::vector<std::string>{trtexec_flag});      \
    EXPECT_TRUE(trt_precision_flags(*o, TrtTool::Trtexec, 11).empty()) << word;                            \
    EXPECT_EQ(o->quantized_words(), quantized ? std::vector<std::string>{word} : std::vector<std::string>{}); \
  }
#include "adapters/trt_precisions.def"
#undef TRT_PRECISION
  EXPECT_EQ(count, precisions + 4) << words;  // tf32, fp32=, tool=, version=
}

TEST(TrtPreset, PolygraphyIsPreferredAndExpandsToItsRunCommand) {
  TempDir dir;
  const std::string path = "/nonexistent:" + tools_folder(dir, {"polygraphy", "trtexec"});
  auto command = trt_command(parse_trt_options("fp16,int8").value(), path);
  ASSERT_TRUE(command.ok()) << command.error().message();
  EXPECT_EQ(command->tool, TrtTool::Polygraphy);
  EXPECT_EQ(command->argv, (std::vector<std::string>{(dir / "polygraphy").string(), "run", "{model}", "--trt", "--fp16",
                                                     "--int8", "--load-inputs", "{inputs_json}", "--save-outputs",
                                                     "{outputs_json}"}));
}

TEST(TrtPreset, TrtexecWhenItIsTheOnlyToolOrChosen) {
  TempDir only, both;
  const std::vector<std::string> expected_tail{"--loadInputs={trtexec_inputs}", "--exportOutput={trtexec_output_json}",
                                               "--iterations=1", "--warmUp=0", "--duration=0"};
  auto command = trt_command(parse_trt_options("bf16").value(), tools_folder(only, {"trtexec"}));
  ASSERT_TRUE(command.ok()) << command.error().message();
  EXPECT_EQ(command->tool, TrtTool::Trtexec);
  std::vector<std::string> expected{(only / "trtexec").string(), "--onnx={model}", "{trtexec_shapes}", "--bf16", "--noTF32"};
  expected.insert(expected.end(), expected_tail.begin(), expected_tail.end());
  EXPECT_EQ(command->argv, expected);
  // tf32 lets trtexec keep its default; tool=trtexec wins over a Polygraphy on PATH.
  auto chosen = trt_command(parse_trt_options("tf32,tool=trtexec").value(), tools_folder(both, {"polygraphy", "trtexec"}));
  ASSERT_TRUE(chosen.ok());
  expected = {(both / "trtexec").string(), "--onnx={model}", "{trtexec_shapes}"};
  expected.insert(expected.end(), expected_tail.begin(), expected_tail.end());
  EXPECT_EQ(chosen->argv, expected);
}

// The version as the tools say it: trtexec's banner (MMmmpp), Polygraphy's Python printing
// tensorrt.__version__ (the last version-looking line: imports may print before it).
TEST(TrtPreset, TheVersionIsReadFromWhatTheToolPrints) {
  EXPECT_EQ(trt_major_version(TrtTool::Trtexec, "&&&& RUNNING TensorRT.trtexec [TensorRT v110400] [b12] # trtexec --help\n"), 11);
  EXPECT_EQ(trt_major_version(TrtTool::Trtexec, "&&&& RUNNING TensorRT.trtexec [TensorRT v100300] [b10] # trtexec\n"), 10);
  EXPECT_EQ(trt_major_version(TrtTool::Trtexec, "usage: trtexec [options]\n"), 0);
  EXPECT_EQ(trt_major_version(TrtTool::Polygraphy, "10.3.0\n"), 10);
  EXPECT_EQ(trt_major_version(TrtTool::Polygraphy, "some warning 1.2\n11.4.0\n"), 11);
  EXPECT_EQ(trt_major_version(TrtTool::Polygraphy, "ModuleNotFoundError: No module named 'tensorrt'\n"), 0);
}

// From TensorRT 11 on the graph is built as typed: no precision flag reaches the tool, int8 is an
// error that names explicit quantization, and a forced version=10 keeps the old flags.
TEST(TrtPreset, OnTensorRt11NoPrecisionFlagIsPassed) {
  TempDir dir;
  const std::string path = tools_folder(dir, {"trtexec"});
  const auto eleven = [](TrtTool, const std::filesystem::path&) { return 11; };
  auto typed = trt_command(parse_trt_options("fp16").value(), path, eleven);
  ASSERT_TRUE(typed.ok()) << typed.error().message();
  EXPECT_EQ(typed->version, 11);
  EXPECT_EQ(std::count(typed->argv.begin(), typed->argv.end(), "--fp16"), 0);
  auto forced = trt_command(parse_trt_options("fp16,version=10").value(), path, eleven);
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ(forced->version, 10);
  EXPECT_EQ(std::count(forced->argv.begin(), forced->argv.end(), "--fp16"), 1);
  auto unknown = trt_command(parse_trt_options("fp16").value(), path, [](TrtTool, const std::filesystem::path&) { return 0; });
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->version, 10) << "a tool that does not say is taken as TensorRT 10";
  auto int8 = trt_command(parse_trt_options("int8").value(), path, eleven);
  ASSERT_FALSE(int8.ok());
  EXPECT_EQ(int8.error().what, "TensorRT 11 builds the graph as typed: int8 needs explicit quantization "
                               "(QuantizeLinear/DequantizeLinear in the model), not a flag");
  EXPECT_FALSE(trt_command(parse_trt_options("fp16,bf16").value(), path, eleven).ok());
  auto low = trt_command(parse_trt_options("fp8,int4").value(), path, eleven);
  ASSERT_FALSE(low.ok());
  EXPECT_EQ(low.error().what, "TensorRT 11 builds the graph as typed: fp8/int4 needs explicit quantization "
                              "(QuantizeLinear/DequantizeLinear in the model), not a flag");
}

// TensorRT 10's FP8 and INT4 builder flags: --fp8 for both tools, --int4 for trtexec only.
TEST(TrtPreset, OnTensorRt10Fp8AndInt4AreFlags) {
  TempDir dir;
  const auto ten = [](TrtTool, const std::filesystem::path&) { return 10; };
  auto trtexec = trt_command(parse_trt_options("fp16,fp8,int4").value(), tools_folder(dir, {"trtexec"}), ten);
  ASSERT_TRUE(trtexec.ok()) << trtexec.error().message();
  for (const char* flag : {"--fp16", "--fp8", "--int4"})
    EXPECT_EQ(std::count(trtexec->argv.begin(), trtexec->argv.end(), flag), 1) << flag;
  TempDir other;
  const std::string polygraphy = tools_folder(other, {"polygraphy"});
  auto fp8 = trt_command(parse_trt_options("fp8").value(), polygraphy, ten);
  ASSERT_TRUE(fp8.ok());
  EXPECT_EQ(std::count(fp8->argv.begin(), fp8->argv.end(), "--fp8"), 1);
  auto int4 = trt_command(parse_trt_options("int4").value(), polygraphy, ten);
  ASSERT_FALSE(int4.ok());
  EXPECT_EQ(int4.error().what, "Polygraphy has no INT4 builder flag (trtexec's --int4 does it: add tool=trtexec)");
  EXPECT_EQ(to_string(parse_trt_options("int4,fp8,int8").value()), "int8,fp8,int4");
}

TEST(TrtPreset, WithoutEitherToolTheErrorSaysWhatToInstall) {
  TempDir empty, only_trtexec;
  auto none = trt_command({}, empty.path().string());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().what.rfind("neither polygraphy nor trtexec is on PATH; install TensorRT's trtexec", 0), 0u)
      << none.error().what;
  EXPECT_NE(none.error().what.find("pip install polygraphy"), std::string::npos);
  auto forced = trt_command(parse_trt_options("tool=polygraphy").value(), tools_folder(only_trtexec, {"trtexec"}));
  ASSERT_FALSE(forced.ok());
  EXPECT_EQ(forced.error().what.rfind("polygraphy is not on PATH", 0), 0u) << forced.error().what;
  // make_engine reads PATH from the environment the command would get.
  EngineEnvironment environment;
  environment.env = {"PATH=" + empty.path().string()};
  auto engine = make_engine("trt:fp16", environment);
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.error().where, "trt:fp16");
  EXPECT_EQ(engine.error().what.find('\n'), std::string::npos);
}

TEST(TrtPreset, Fp32NodesBecomeEachToolsLayerPrecisionFlags) {
  const std::vector<std::string> nodes{"/blocks.0/Mul", "ln:1"};
  EXPECT_EQ(trt_fp32_arguments(TrtTool::Polygraphy, nodes).value(),
            (std::vector<std::string>{"--precision-constraints", "obey", "--layer-precisions", "/blocks.0/Mul:float32",
                                      "ln:1:float32"}));
  EXPECT_EQ(trt_fp32_arguments(TrtTool::Trtexec, nodes).value(),
            (std::vector<std::string>{"--precisionConstraints=obey", "--layerPrecisions=/blocks.0/Mul:fp32,ln:1:fp32"}));
  EXPECT_TRUE(trt_fp32_arguments(TrtTool::Trtexec, {}).value().empty());
  auto comma = trt_fp32_arguments(TrtTool::Trtexec, {"a,b"});
  ASSERT_FALSE(comma.ok());
  EXPECT_NE(comma.error().what.find("node 'a,b'"), std::string::npos);
  EXPECT_TRUE(trt_fp32_arguments(TrtTool::Polygraphy, {"a,b"}).ok());
  EXPECT_FALSE(trt_fp32_arguments(TrtTool::Polygraphy, {"-x"}).ok());
  // A set the found tool cannot express is refused when the engine is made, naming the node.
  TempDir dir;
  EngineEnvironment environment;
  environment.env = {"PATH=" + tools_folder(dir, {"trtexec"})};
  auto engine = make_engine("trt:fp16,fp32=a%2Cb", environment);
  ASSERT_FALSE(engine.ok());
  EXPECT_NE(engine.error().what.find("node 'a,b'"), std::string::npos) << engine.error().message();
}

TEST(TrtPreset, TheCommandLineShownToPeopleQuotesWhatAShellWouldSplit) {
  EXPECT_EQ(shell_command_line({"/opt/trt/bin/trtexec", "--onnx={model}", "--layerPrecisions=a b:fp32", "it's"}),
            "/opt/trt/bin/trtexec --onnx={model} '--layerPrecisions=a b:fp32' 'it'\\''s'");
  // Words bash would brace-expand are quoted; reduce's own command lines (report.json) use the same words.
  EXPECT_EQ(shell_command_line({"--fp32-nodes", "{a,b}", "x{1..3}", "ort@1.30.0"}), "--fp32-nodes '{a,b}' 'x{1..3}' ort@1.30.0");
  TempDir dir;
  EngineEnvironment environment;
  environment.env = {"PATH=" + tools_folder(dir, {"polygraphy"})};
  EXPECT_EQ(preset_command_line(parse_engine_spec("trt:fp16,fp32=n1").value(), environment),
            (dir / "polygraphy").string() +
                " run {model} --trt --fp16 --load-inputs {inputs_json} --save-outputs {outputs_json} "
                "--precision-constraints obey --layer-precisions n1:float32");
  EXPECT_EQ(preset_command_line(parse_engine_spec("opt:fp16").value(), environment), "");
}

// A stand-in for trtexec (not TensorRT) implementing its file contract for the model Y = Relu(X),
// X float[2,3]: reads --loadInputs='X':FILE (raw float32), writes --exportOutput=FILE laid out as
// trtexec's exportJSONOutput, values printed as C++ streams print them (%g); logs its arguments.
const char* kTrtexecStandIn = R"SH(#!/bin/sh
for a in "$@"; do
  echo "$a" >> "$0.args"
  case $a in
    --onnx=*) model=${a#--onnx=} ;;
    --loadInputs=*) spec=${a#--loadInputs=} ;;
    --exportOutput=*) out=${a#--exportOutput=} ;;
  esac
done
test -s "$model" || { echo "trtexec stand-in: no model" >&2; exit 1; }
case $spec in "'X':"*) file=${spec#\'X\':} ;; *) echo "trtexec stand-in: bad --loadInputs $spec" >&2; exit 1 ;; esac
test "$(wc -c < "$file")" -eq 24 || { echo "trtexec stand-in: X is not 6 float32 values" >&2; exit 1; }
values=$(od -A n -v -t f4 "$file" | awk '{ for (i = 1; i <= NF; i++) printf "%s%g", (n++ ? ", " : ""), ($i > 0 ? $i : 0) }')
printf '[\n  { "name" : "Y"\n  , "dimensions" : "2x3"\n  , "values" : [ %s ]\n  }\n]\n' "$values" > "$out"
)SH";

Model relu_model() {
  Model m = testing::parse_model(R"(
<ir_version: 8, opset_import: ["" : 17]>
g (float[2, 3] X) => (float[2, 3] Y)
{
  Y = Relu(X)
}
)");
  m.graph.nodes[0].name = "relu/0";
  return m;
}

Expected<TensorMap> run_with_stand_in(const TempDir& dir, const std::string& spec, const std::string& script) {
  testing::write_bytes(dir / "trtexec", script);
  chmod((dir / "trtexec").c_str(), 0755);
  EngineEnvironment environment;
  environment.env = {"PATH=" + dir.path().string() + ":/usr/bin:/bin"};
  REDUCE_ASSIGN(auto engine, make_engine(spec, environment));
  Model model = relu_model();
  REDUCE_ASSIGN(auto prepared, engine->prepare(model));
  TensorMap inputs{{"X", Tensor::from_vector(DType::Float, {2, 3}, std::vector<float>{1, -2, 3.5, -4, 1e-5f, -6}).value()}};
  return prepared->run(inputs);
}

TEST(TrtPreset, TrtexecStandInGetsRawInputsAndItsExportedJsonIsRead) {
  TempDir dir;
  auto out = run_with_stand_in(dir, "trt:fp16,fp32=relu/0+not-in-this-model", kTrtexecStandIn);
  ASSERT_TRUE(out.ok()) << out.error().message();
  auto y = out->at("Y").data<float>();
  EXPECT_EQ(std::vector<float>(y.begin(), y.end()), (std::vector<float>{1, 0, 3.5, 0, 1e-5f, 0}));
  // The argv trtexec got: precision, no TF32, one inference, and only the FP32 nodes of the model run.
  const std::string args = testing::read_bytes(dir / "trtexec.args");
  for (const char* flag : {"--fp16\n", "--noTF32\n", "--iterations=1\n", "--precisionConstraints=obey\n",
                           "--layerPrecisions=relu/0:fp32\n"})
    EXPECT_NE(args.find(flag), std::string::npos) << flag << " in\n" << args;
  EXPECT_EQ(args.find("not-in-this-model"), std::string::npos) << args;
}

TEST(TrtPreset, MalformedTrtexecOutputIsAClearEngineError) {
  TempDir dir;
  const std::string bad = R"SH(#!/bin/sh
for a in "$@"; do case $a in --exportOutput=*) out=${a#--exportOutput=} ;; esac; done
printf '[ { "name" : "Y", "dimensions" : "2x3", "values" : [ 1, 2 ] } ]\n' > "$out"
)SH";
  auto out = run_with_stand_in(dir, "trt:tool=trtexec", bad);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message().find("trtexec_outputs.json: not trtexec --exportOutput JSON: output 'Y': 2 values for "
                                       "dimensions holding 6"),
            std::string::npos)
      << out.error().message();
}

}  // namespace
}  // namespace reduce
