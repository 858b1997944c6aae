// Engine specs: every kind parses into an EngineSpec and prints back unchanged; each bad spec is a one-line error.
#include <gtest/gtest.h>

#include "adapters/cache_folder.h"
#include "adapters/engine_spec.h"
#include "adapters/ort.h"
#include "engine/fault.h"

namespace reduce {
namespace {

EngineSpec parsed(std::string_view text) {
  auto spec = parse_engine_spec(text);
  EXPECT_TRUE(spec.ok()) << spec.error().message();
  return spec.ok() ? *spec : EngineSpec{};
}

// The problem part of a spec's error (Error::where is the spec itself).
std::string problem(std::string_view text) {
  auto spec = parse_engine_spec(text);
  EXPECT_FALSE(spec.ok()) << text;
  if (spec.ok()) return {};
  EXPECT_EQ(spec.error().where, text);
  EXPECT_EQ(spec.error().message().find('\n'), std::string::npos);
  return spec.error().what;
}

TEST(EngineSpec, EveryKindPrintsBackUnchanged) {
  for (const char* text : {"ref", "opt", "opt:fp16", "opt:bf16,fault=broadcast-batch1+layernorm-drop-eps,no-constant-folding",
                           "opencv", "opencv-inprocess", "cmd:python3 run.py {model} {inputs} {outputs}",
                           "check:./check.sh {model}", "isolated:ref", "isolated:opt:fp16,fault=attention-unstable-softmax",
                           "isolated:cmd:engine --model {model} --out {outputs}", "isolated:opencv-inprocess", "ort",
                           "ort:opt=disable", "ort:opt=basic,threads=4", "ort:opt=extended,threads=1,ep=cuda",
                           "fp16:ref", "bf16:ort:opt=disable", "fp16[fp32=a+b]:cmd:x {model} {outputs}",
                           "isolated:fp16[fp32=n]:ref"}) {
    EXPECT_EQ(to_string(parsed(text)), text);
    EXPECT_EQ(parsed(to_string(parsed(text))), parsed(text)) << text;
  }
}

TEST(EngineSpec, KindsAndOptionsAreParsedOnce) {
  EXPECT_EQ(parsed("ref").kind, EngineKind::Ref);
  EXPECT_EQ(parsed("opencv").kind, EngineKind::OpenCV);
  EXPECT_EQ(parsed("opencv-inprocess").kind, EngineKind::OpenCVInProcess);
  const EngineSpec opt = parsed("opt:fp16,fault=conv-bn-fold-eps+resize-half-pixel,no-static-broadcast");
  EXPECT_EQ(opt.kind, EngineKind::Opt);
  EXPECT_EQ(opt.opt.precision, Precision::FP16);
  EXPECT_EQ(opt.opt.faults, (std::vector<Fault>{Fault::ConvBnFoldEps, Fault::ResizeHalfPixel}));
  EXPECT_EQ(opt.opt.disabled_passes, (std::vector<std::string>{"static-broadcast"}));
  const EngineSpec cmd = parsed("cmd:run {model}, with: colons {outputs}");
  EXPECT_EQ(cmd.kind, EngineKind::Cmd);
  EXPECT_EQ(cmd.command, "run {model}, with: colons {outputs}");
  EXPECT_EQ(parsed("check:./c.sh {model}").kind, EngineKind::Check);
  EXPECT_EQ(parsed("check:./c.sh {model}").command, "./c.sh {model}");
}

TEST(EngineSpec, NonCanonicalOptionsPrintInCanonicalOrder) {
  EXPECT_EQ(to_string(parsed("opt:")), "opt");
  EXPECT_EQ(to_string(parsed("opt:fp32")), "opt");
  EXPECT_EQ(to_string(parsed("opt:fault=broadcast-batch1,fp16")), "opt:fp16,fault=broadcast-batch1");
  EXPECT_EQ(to_string(parsed("opt:fault=broadcast-batch1,fault=broadcast-batch1+layernorm-drop-eps")),
            "opt:fault=broadcast-batch1+layernorm-drop-eps");
}

TEST(EngineSpec, OrtOptionsAreParsedOnceAndPrintCanonically) {
  const EngineSpec spec = parsed("ort:threads=2,opt=basic");
  EXPECT_EQ(spec.kind, EngineKind::Ort);
  EXPECT_EQ(spec.ort.optimization, OrtOptimization::Basic);
  EXPECT_EQ(spec.ort.threads, 2);
  EXPECT_EQ(spec.ort.provider, "cpu");
  EXPECT_EQ(to_string(spec), "ort:opt=basic,threads=2");
  // Defaults are not printed: these are all plain `ort`.
  for (const char* text : {"ort", "ort:", "ort:opt=all", "ort:threads=0", "ort:ep=cpu", "ort:opt=basic,opt=all"})
    EXPECT_EQ(to_string(parsed(text)), "ort") << text;
  EXPECT_EQ(parsed("ort:ep=webgpu").ort.provider, "webgpu");
  EXPECT_EQ(parsed("ort:opt=disable").precision(), Precision::FP32);
  EXPECT_FALSE(parsed("ort").controls_precision());
}

TEST(EngineSpec, BadOrtOptionsAreOneLineErrors) {
  EXPECT_EQ(problem("ort:opt=fast"), "unknown optimization level 'fast' (known: disable, basic, extended, all)");
  EXPECT_EQ(problem("ort:fp16"), "unknown option 'fp16' (known: opt=disable|basic|extended|all, threads=N, ep=NAME)");
  EXPECT_EQ(problem("ort:opt"), "unknown option 'opt' (known: opt=disable|basic|extended|all, threads=N, ep=NAME)");
  EXPECT_NE(problem("ort:threads=many").find("threads=many: expected a number of threads"), std::string::npos);
  EXPECT_NE(problem("ort:threads=-1").find("threads=-1: expected"), std::string::npos);
  EXPECT_NE(problem("ort:threads=99999").find("threads=99999: expected"), std::string::npos);
  EXPECT_EQ(problem("ort:ep=tpu"), "unknown execution provider 'tpu' (known: cpu, cuda, tensorrt, webgpu, dml, coreml)");
  EXPECT_EQ(problem("ort:opt=basic,"), "empty option in 'opt=basic,'");
  EXPECT_EQ(problem("ort:,opt=basic"), "empty option in ',opt=basic'");
  EXPECT_EQ(problem("isolated:ort"), "'ort' runs in a worker process already; use it without isolated:");
  auto fp32 = with_fp32_nodes(parsed("ort"), Fp32Nodes{{"a"}, ""});
  ASSERT_FALSE(fp32.ok());
  EXPECT_EQ(fp32.error().where, "ort");
}

TEST(EngineSpec, OrtReleasesAreNamedAfterAnAt) {
  const EngineSpec old = parsed("ort@1.16.3:threads=1,opt=disable");
  EXPECT_EQ(old.kind, EngineKind::Ort);
  EXPECT_EQ(old.ort.release, "1.16.3");
  EXPECT_EQ(to_string(old), "ort@1.16.3:opt=disable,threads=1");
  EXPECT_EQ(to_string(parsed("ort@1.30.0")), "ort@1.30.0");  // named, so kept: it is installed on demand
  EXPECT_EQ(to_string(parsed("ort@1.22.0-rev")), "ort@1.22.0-rev");
  const EngineSpec web = parsed("ort-web@1.30.0:threads=2");
  EXPECT_EQ(web.kind, EngineKind::OrtWeb);
  EXPECT_EQ(to_string(web), "ort-web@1.30.0:threads=2");
  EXPECT_EQ(to_string(parsed("ort-web")), "ort-web");
  EXPECT_TRUE(web.external());
  EXPECT_FALSE(web.in_process());
  EXPECT_EQ(to_string(parsed("fp16:ort@1.16.3")), "fp16:ort@1.16.3");
}

TEST(EngineSpec, BadReleasesAreOneLineErrors) {
  EXPECT_EQ(problem("ort@1.x"), "'1.x' is not a release number (expected MAJOR.MINOR.PATCH, e.g. 1.16.3)");
  EXPECT_EQ(problem("ort@"), "'' is not a release number (expected MAJOR.MINOR.PATCH, e.g. 1.16.3)");
  EXPECT_EQ(problem("ort@1.16"), "'1.16' is not a release number (expected MAJOR.MINOR.PATCH, e.g. 1.16.3)");
  EXPECT_EQ(problem("ort@1.16.3-"), "'1.16.3-' is not a release number (expected MAJOR.MINOR.PATCH, e.g. 1.16.3)");
  EXPECT_EQ(problem("ort@../1.2.3"), "'../1.2.3' is not a release number (expected MAJOR.MINOR.PATCH, e.g. 1.16.3)");
  EXPECT_EQ(problem("ort@1.14.0,ort@1.16.3"),
            "a list of releases (ort@A,ort@B,...) is for `reduce check`, which gives a verdict per release");
  EXPECT_EQ(problem("ref@1.0.0"), "engine 'ref' has no releases to choose (only ort@VERSION and ort-web@VERSION)");
  EXPECT_EQ(problem("ort-web:ep=cuda"), "ort-web runs onnxruntime-web's wasm backend only: ep= is for ort");
  // Refused before anything is installed (issue 66): no ep= at all on ort-web, no leading zeros.
  EXPECT_EQ(problem("ort-web:ep=cpu"), "ort-web runs onnxruntime-web's wasm backend only: ep= is for ort");
  EXPECT_EQ(problem("ort-web:threads=1,ep=cpu"), "ort-web runs onnxruntime-web's wasm backend only: ep= is for ort");
  EXPECT_EQ(problem("ort@01.016.03"), "'01.016.03' is not a release number: no leading zeros (npm's release numbers are like 1.16.3)");
  EXPECT_EQ(problem("ort@1.16.03"), "'1.16.03' is not a release number: no leading zeros (npm's release numbers are like 1.16.3)");
  EXPECT_TRUE(parse_engine_spec("ort@1.10.0").ok());
  EXPECT_TRUE(parse_engine_spec("ort@0.0.1").ok());
  EXPECT_EQ(problem("isolated:ort-web"), "'ort-web' runs in a worker process already; use it without isolated:");
}

TEST(EngineSpec, AListOfReleasesSplitsBeforeEachRelease) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_release_list("ort@1.14.0,ort@1.16.3,ort"), (V{"ort@1.14.0", "ort@1.16.3", "ort"}));
  EXPECT_EQ(split_release_list("ort@1.14.0,1.16.3,ort-web"), (V{"ort@1.14.0", "ort@1.16.3", "ort-web"}));
  EXPECT_EQ(split_release_list("ort@1.14.0:opt=disable,threads=1,ort@1.16.3:threads=1"),
            (V{"ort@1.14.0:opt=disable,threads=1", "ort@1.16.3:threads=1"}));
  EXPECT_EQ(split_release_list("ort-web@1.30.0,ort@1.30.0"), (V{"ort-web@1.30.0", "ort@1.30.0"}));
  EXPECT_EQ(split_release_list("ort-web,ort-web:opt=disable"), (V{"ort-web", "ort-web:opt=disable"}));
  EXPECT_EQ(split_release_list("ort,ort@1.16.3"), (V{"ort", "ort@1.16.3"}));
  // Any other spec, and one spec with options, come back whole.
  for (const char* one : {"ort:opt=disable,threads=1", "opt:fp16,fault=broadcast-batch1", "cmd:run {model},ort@1",
                          "ort@1.16.3"})
    EXPECT_EQ(split_release_list(one), V{one}) << one;
}

TEST(EngineSpec, EachReleaseHasItsFolderBesideTheDefaultOne) {
  const std::vector<std::string> env{"REDUCE_ORT_DIR=/c/ort"};
  EXPECT_EQ(ort_release_folder(OrtPackage::Node, "", env), "/c/ort");
  EXPECT_EQ(ort_release_folder(OrtPackage::Node, kOrtDefaultRelease, env), "/c/ort");
  EXPECT_EQ(ort_release_folder(OrtPackage::Node, "1.16.3", env), "/c/ort-1.16.3");
  EXPECT_EQ(ort_release_folder(OrtPackage::Web, "", env), "/c/ort-web");
  EXPECT_EQ(ort_release_folder(OrtPackage::Web, "1.20.0", env), "/c/ort-web-1.20.0");
  EXPECT_EQ(ort_release_folder(OrtPackage::Node, "1.16.3", {"REDUCE_ORT_DIR=/c/ort/"}), "/c/ort-1.16.3");
}

// issue 68: an installed reduce keeps releases in the user's cache folder, never in a source tree:
// --cache-dir, else REDUCE_CACHE_DIR, else $XDG_CACHE_HOME/reduce (absolute only), else ~/.cache/reduce;
// REDUCE_ORT_DIR still names the default release's own folder.
TEST(EngineSpec, ReleasesGoToTheUsersCacheFolderUnlessOneIsChosen) {
  const std::vector<std::string> none{"REDUCE_CACHE_DIR=", "REDUCE_ORT_DIR=", "XDG_CACHE_HOME=", "HOME=/home/u"};
  EXPECT_EQ(reduce_cache_folder({}, none), "/home/u/.cache/reduce");
  auto with = [&](std::vector<std::string> more) {
    auto env = none;
    env.insert(env.end(), more.begin(), more.end());
    return env;
  };
  EXPECT_EQ(reduce_cache_folder({}, with({"XDG_CACHE_HOME=/x"})), "/x/reduce");
  EXPECT_EQ(reduce_cache_folder({}, with({"XDG_CACHE_HOME=relative"})), "/home/u/.cache/reduce") << "the XDG spec ignores it";
  EXPECT_EQ(reduce_cache_folder({}, with({"XDG_CACHE_HOME=/x", "REDUCE_CACHE_DIR=/r"})), "/r");
  EXPECT_EQ(reduce_cache_folder("/chosen", with({"REDUCE_CACHE_DIR=/r"})), "/chosen");
  EXPECT_EQ(ort_install_folder(with({"XDG_CACHE_HOME=/x"})), "/x/reduce/ort");
  EXPECT_EQ(ort_release_folder(OrtPackage::Node, "1.16.3", with({"XDG_CACHE_HOME=/x"})), "/x/reduce/ort-1.16.3");
  EXPECT_EQ(ort_release_folder(OrtPackage::Web, "", none, "/chosen"), "/chosen/ort-web");
  EXPECT_FALSE(ort_folder_is_chosen(none));
  EXPECT_EQ(ort_install_folder(with({"REDUCE_ORT_DIR=/mine/ort"}), "/chosen"), "/mine/ort");
  EXPECT_TRUE(ort_folder_is_chosen(with({"REDUCE_ORT_DIR=/mine/ort"})));
}

// The installer is part of the binary: bash runs it with its arguments as argv, no file of the
// source tree, and model-derived text never reaches it (a release number is checked first).
TEST(EngineSpec, TheReleaseInstallerIsEmbeddedAndTakesItsArgumentsAsArgv) {
  const auto argv = ort_install_command("web@1.16.3", "/c/ort-web-1.16.3");
  ASSERT_EQ(argv.size(), 6u);
  EXPECT_EQ(argv[0], "bash");
  EXPECT_EQ(argv[1], "-c");
  EXPECT_NE(argv[2].find("npm install --ignore-scripts"), std::string::npos) << "scripts/ort/install.sh's text";
  EXPECT_EQ(argv[4], "web@1.16.3");
  EXPECT_EQ(argv[5], "/c/ort-web-1.16.3");
}

// issue 67: the refusals onnxruntime-node 1.12.1 to 1.26.0 gave over ONNX's node tests, as their
// workers reported them: a limit of the release in a few words; a wrong answer or a refusal of the
// model itself (an attribute ONNX's schema lacks, a shape inference error) is none.
TEST(OrtLimits, TheReleasesRefusalsAreLimitsAndTheModelsErrorsAreNot) {
  EXPECT_EQ(ort_limit("Failed to load model with error: /onnxruntime_src/onnxruntime/core/graph/model.cc:146 "
                      "onnxruntime::Model::Model(onnx::ModelProto&&, const PathString&, const IOnnxRuntimeOpSchemaRegistryList*, "
                      "const onnxruntime::logging::Logger&, const onnxruntime::ModelOptions&) Unsupported model IR version: 10, "
                      "max supported IR version: 9"),
            "IR version 10; it reads up to 9");
  EXPECT_EQ(ort_limit("Failed to load model with error: /onnxruntime_src/onnxruntime/core/graph/model_load_utils.h:56 void "
                      "onnxruntime::model_load_utils::ValidateOpsetForDomain(const std::unordered_map<std::basic_string<char>, "
                      "int>&, const onnxruntime::logging::Logger&, bool, const string&, int) ONNX Runtime only *guarantees* "
                      "support for models stamped with official released onnx opset versions. Opset 19 is under development "
                      "and support for this is limited. The operator schemas and or other functionality may change before next "
                      "ONNX release and in this case ONNX Runtime will not guarantee backward compatibility. Current official "
                      "support for domain ai.onnx is till opset 18."),
            "opset 19 of ai.onnx; it knows up to 18");
  EXPECT_EQ(ort_limit("Fatal error: ai.onnx.preview.training:Adam(-1) is not a registered function/op"),
            "no schema for ai.onnx.preview.training:Adam");
  EXPECT_EQ(ort_limit("Could not find an implementation for Greater(13) node with name ''"),
            "no kernel for Greater(13) with these types");
  EXPECT_EQ(ort_limit("Exception during initialization: /onnxruntime_src/onnxruntime/core/providers/cpu/rnn/deep_cpu_gru.h:57 "
                      "onnxruntime::DeepCpuGruOp::DeepCpuGruOp(const onnxruntime::OpKernelInfo&) layout_ == 0 was false. "
                      "Batchwise recurrent operations (layout == 1) are not supported. If you need support create a GitHub issue"),
            "Batchwise recurrent operations (layout == 1) are not supported");
  EXPECT_EQ(ort_limit("Unsupported tensor type: float16."), "its JavaScript binding cannot pass float16 tensors");
  EXPECT_EQ(ort_limit("Tensor.data must be a typed array (-1) for float16 tensors"),
            "its JavaScript binding refuses a tensor's data (Tensor.data must be a typed array (-1) for float16 tensors)");
  EXPECT_EQ(ort_limit("Unsupported data type: 22"), "its JavaScript binding cannot pass ONNX data type 22");
  EXPECT_EQ(ort_limit("input 'x': its type cannot be given to ONNX Runtime"), "reduce's worker cannot pass an input of this type");
  EXPECT_EQ(ort_limit("output 'y' has type int4, which reduce cannot take"), "reduce's worker cannot read an output of this type");
  // The model's own errors, and wrong answers, are failures.
  EXPECT_EQ(ort_limit("Node () Op (DFT) [ShapeInferenceError] is_onesided and inverse attributes cannot be enabled at the "
                      "same time"),
            "");
  EXPECT_EQ(ort_limit("This is an invalid model. In Node, (\"\", Attention, \"\", -1) : ... , Error Unrecognized attribute: "
                      "left_window_size for operator Attention"),
            "");
  EXPECT_EQ(ort_limit("double free or corruption (out)"), "");
  EXPECT_EQ(ort_limit(""), "");
  // A message of megabytes is read in one pass, and the limit stays one short line.
  const std::string huge = std::string(4 << 20, 'x') + " Could not find an implementation for " + std::string(1 << 20, 'A');
  EXPECT_LE(ort_limit(huge).size(), 220u);
}

TEST(EngineSpec, IsolatedWrapsTheSpecItNames) {
  const EngineSpec spec = parsed("isolated:opt:bf16,fault=input-binding-order");
  EXPECT_EQ(spec.kind, EngineKind::Isolated);
  ASSERT_TRUE(spec.inner);
  EXPECT_EQ(spec.inner->kind, EngineKind::Opt);
  EXPECT_EQ(&spec.innermost(), spec.inner.get());
  EXPECT_EQ(spec.precision(), Precision::BF16);
  EXPECT_EQ(parsed("isolated:cmd:x {outputs}").innermost().command, "x {outputs}");
}

TEST(EngineSpec, ExternalEnginesAreTheOnesThatAreNotOurs) {
  for (const char* text : {"cmd:x {outputs}", "isolated:cmd:x {outputs}", "check:x", "opencv", "opencv-inprocess",
                           "isolated:opencv-inprocess", "ort", "ort:opt=disable"})
    EXPECT_TRUE(parsed(text).external()) << text;
  for (const char* text : {"ref", "opt:fp16", "isolated:ref", "isolated:opt"}) EXPECT_FALSE(parsed(text).external()) << text;
}

TEST(EngineSpec, UnknownKindListsTheKnownOnes) {
  const std::string what = problem("optimized:fp16");
  EXPECT_NE(what.find("unknown engine 'optimized'"), std::string::npos) << what;
  for (const char* kind : {"ref", "opt", "opencv", "ort[@VERSION][:OPTIONS]", "ort-web[@VERSION][:OPTIONS]", "cmd:TEMPLATE", "check:TEMPLATE", "isolated:SPEC"})
    EXPECT_NE(what.find(kind), std::string::npos) << kind;
  EXPECT_NE(problem("").find("unknown engine ''"), std::string::npos);
}

TEST(EngineSpec, UnknownOptionIsAnError) {
  EXPECT_NE(problem("opt:fp8").find("unknown option 'fp8'"), std::string::npos);
  EXPECT_NE(problem("opt:no-magic").find("unknown pass 'magic'"), std::string::npos);
  EXPECT_EQ(problem("ref:fp16"), "engine 'ref' takes no options");
  EXPECT_EQ(problem("opencv:x"), "engine 'opencv' takes no options");
}

TEST(EngineSpec, UnknownFaultListsEveryKnownFault) {
  const std::string what = problem("opt:fault=nonsense");
  EXPECT_NE(what.find("unknown fault 'nonsense'"), std::string::npos) << what;
  for (const FaultInfo& f : faults()) EXPECT_NE(what.find(f.name), std::string::npos) << f.name;
}

TEST(EngineSpec, EmptyTemplateIsAnError) {
  EXPECT_EQ(problem("cmd:"), "'cmd' needs a command template: cmd:TEMPLATE");
  EXPECT_EQ(problem("cmd"), "'cmd' needs a command template: cmd:TEMPLATE");
  EXPECT_EQ(problem("check:  "), "'check' needs a command template: check:TEMPLATE");
}

TEST(EngineSpec, IsolatedNeedsOneEngineThatComputes) {
  EXPECT_EQ(problem("isolated:"), "'isolated' needs an engine: isolated:SPEC");
  EXPECT_EQ(problem("isolated:isolated:ref"), "an isolated engine is already isolated");
  EXPECT_EQ(problem("isolated:check:x"), "a check: script is not an engine; it cannot be isolated");
  // The wrapped spec's own error, under the whole spec.
  EXPECT_NE(problem("isolated:opt:fault=nonsense").find("unknown fault 'nonsense'"), std::string::npos);
  EXPECT_NE(problem("isolated:nope").find("unknown engine 'nope'"), std::string::npos);
}

// `fp16:SPEC` / `bf16:SPEC`: SPEC runs the model converted at the ONNX level; the wrapper owns the
// precision and the FP32 nodes (the keep set), the wrapped spec where it runs and what parses it.
TEST(EngineSpec, TypedWrappersOwnThePrecisionAndTheKeepSet) {
  const EngineSpec fp16 = parsed("fp16:ref");
  EXPECT_EQ(fp16.kind, EngineKind::Fp16);
  EXPECT_EQ(fp16.precision(), Precision::FP16);
  EXPECT_TRUE(fp16.controls_precision());
  EXPECT_EQ(to_string(fp16.typed_model_runner()), "ref");
  EXPECT_EQ(to_string(parsed("isolated:bf16:ref").typed_model_runner()), "ref");
  EXPECT_EQ(to_string(parsed("fp16:isolated:opt").typed_model_runner()), "opt");
  EXPECT_EQ(to_string(parsed("opt:fp16").typed_model_runner()), "opt:fp16") << "nothing converts it";
  EXPECT_TRUE(fp16.in_process());
  EXPECT_FALSE(fp16.external());
  EXPECT_FALSE(parsed("fp16:ort").in_process());
  EXPECT_TRUE(parsed("fp16:ort").external());
  auto pinned = with_fp32_nodes(fp16, Fp32Nodes{{"a", "b"}, ""});
  ASSERT_TRUE(pinned.ok());
  EXPECT_EQ(to_string(*pinned), "fp16[fp32=a+b]:ref");
  EXPECT_EQ(pinned->fp32().names, (std::vector<std::string>{"a", "b"}));
  auto isolated = with_fp32_nodes(parsed("isolated:fp16:ref"), Fp32Nodes{{"a"}, ""});
  ASSERT_TRUE(isolated.ok());
  EXPECT_EQ(to_string(*isolated), "isolated:fp16[fp32=a]:ref");
}

TEST(EngineSpec, TypedWrappersNeedAnEngineThatComputesAsTyped) {
  EXPECT_EQ(problem("fp16:"), "'fp16' needs an engine: fp16:SPEC (e.g. fp16:ref)");
  EXPECT_EQ(problem("fp16[fp64=a]:ref"), "unknown option 'fp64=a' in fp16[...] (known: fp32=NODE+NODE|@FILE)");
  EXPECT_NE(problem("fp16:check:x").find("a check: script cannot run a converted model"), std::string::npos);
  EXPECT_NE(problem("bf16:opt:fp16").find("sets a precision of its own"), std::string::npos);
  EXPECT_NE(problem("fp16:fp16:ref").find("sets a precision of its own"), std::string::npos);
  EXPECT_NE(problem("fp16:nope").find("unknown engine 'nope'"), std::string::npos);
}

TEST(EngineSpec, FaultNamesComeFromTheCatalog) {
  ASSERT_EQ(faults().size(), 9u);  // docs/faults.md: "carries nine documented faults"
  for (const FaultInfo& f : faults()) {
    EXPECT_EQ(find_fault(f.name), f.fault);
    EXPECT_EQ(fault_name(f.fault), f.name);
    EXPECT_FALSE(f.help.empty());
  }
  EXPECT_EQ(fault_name(Fault::BroadcastBatch1), "broadcast-batch1");
  EXPECT_EQ(find_fault("nonsense"), std::nullopt);
}

TEST(EngineSpec, MakeEngineBuildsFromTheParsedSpec) {
  auto opt = make_engine(parsed("opt:fp16"));
  ASSERT_TRUE(opt.ok()) << opt.error().message();
  EXPECT_EQ((*opt)->name(), "opt");
  auto check = make_engine(parsed("check:x"));
  ASSERT_FALSE(check.ok());
  EXPECT_EQ(check.error().where, "check:x");
  auto bad = make_engine("opt:fault=nonsense");  // the string form parses first
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().where, "opt:fault=nonsense");
}

}  // namespace
}  // namespace reduce
