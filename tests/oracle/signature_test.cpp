// Failure signatures: real engine messages and what they normalize to (the table docs/oracle.md
// shows), the same-failure rule, and shape failures as their own kind.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include "oracle/verdict.h"

namespace reduce {
namespace {

struct EngineMessage {
  const char* engine;
  const char* message;  // as the engine wrote it (one line of it)
  std::unordered_set<std::string> names;  // the model's node and value names it mentions
  const char* normalized;
};

// Messages from the engines' issue trackers and from this project's runs (OpenCV 4.6: the
// real-model tests). docs/oracle.md shows this table; SignatureDoc checks that it does.
const std::vector<EngineMessage> kEngineMessages = {
    {"ONNX Runtime",
     "[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : Could not find an implementation for Pad(13) node with name '/Pad'",
     {"/Pad"},
     "[ONNXRuntimeError] : <n> : NOT_IMPLEMENTED : Could not find an implementation for Pad(<n>) node with name <name>"},
    {"ONNX Runtime",
     "Non-zero status code returned while running Mul node. Name:'/time_proj/Mul' Status Message: "
     "/onnxruntime_src/onnxruntime/core/providers/cpu/math/element_wise_ops.h:540 void "
     "onnxruntime::BroadcastIterator::Init(ptrdiff_t, ptrdiff_t) axis == 1 || axis == largest was false. "
     "Attempting to broadcast an axis by a dimension other than 1. 2 by 160",
     {"/time_proj/Mul"},
     "Non-zero status code returned while running Mul node. Name:<name> Status Message: <path>:<n> void "
     "onnxruntime::BroadcastIterator::Init(ptrdiff_t, ptrdiff_t) axis == <n> || axis == largest was false. "
     "Attempting to broadcast an axis by a dimension other than <n>. <n> by <n>"},
    {"ONNX Runtime",
     "This is an invalid model. Type Error: Type 'tensor(float16)' of input parameter (Resize_scales) of operator "
     "(Resize) in node (Resize) is invalid.",
     {"Resize_scales", "Resize"},
     "This is an invalid model. Type Error: Type 'tensor(float16)' of input parameter (<name>) of operator "
     "(Resize) in node (Resize) is invalid."},
    {"ONNX Runtime",
     "Type Error: Type parameter (T) of Optype (LinearAttention) bound to different types (tensor(float16) and "
     "tensor(float) in node (model/layers.0/linear_attn/LinearAttention_node_102).",
     {"model/layers.0/linear_attn/LinearAttention_node_102"},
     "Type Error: Type parameter (T) of Optype (LinearAttention) bound to different types (tensor(float16) and "
     "tensor(float) in node (<name>)."},
    {"OpenCV",
     "Node [Clip@ai.onnx]:(onnx_node!p2o.Clip.0) parse error: (-2:Unspecified error) in function 'parseClip' "
     "(expected: 'node_proto.input_size() == 1'), where 'node_proto.input_size()' is 3",
     {"p2o.Clip.0"},
     "Node [Clip@ai.onnx]:(onnx_node!<name>) parse error: (-<n>:Unspecified error) in function 'parseClip' "
     "(expected: 'node_proto.input_size() == <n>'), where 'node_proto.input_size()' is <n>"},
    {"OpenCV",
     "Node [If@ai.onnx]:(onnx_node!If_0) parse error: (-213:The function/feature is not implemented) "
     "DNN/ONNX/Attribute[else_branch]: 'Graph' is not supported in function 'getLayerParams'",
     {"If_0"},
     "Node [If@ai.onnx]:(onnx_node!<name>) parse error: (-<n>:The function/feature is not implemented) "
     "DNN/ONNX/Attribute[else_branch]: 'Graph' is not supported in function 'getLayerParams'"},
    {"OpenCV",
     "OpenCV(4.5.3) /private/var/folders/24/8k48jl6d249_n_qfxwsl6xvm0000gn/T/pip-req-build-xxsyexfp/opencv/modules/dnn/"
     "include/opencv2/dnn/shape_utils.hpp:171: error: (-215:Assertion failed) start <= (int)shape.size() && "
     "end <= (int)shape.size() && start <= end in function 'total'",
     {},
     "OpenCV(<n>) <path>:<n>: error: (-<n>:Assertion failed) start <= (int)shape.size() && "
     "end <= (int)shape.size() && start <= end in function 'total'"},
    {"OpenCV",
     "OpenCV(4.8.0-dev) C:\\lib\\opencv\\modules\\dnn\\src\\net_impl.hpp:108: error: (-2:Unspecified error) Can't "
     "create layer \"onnx_node_output_0!outz\" of type \"Mod\" in function "
     "'cv::dnn::dnn4_v20230620::Net::Impl::getLayerInstance'",
     {"outz"},
     "OpenCV(<n>-dev) C:<path>:<n>: error: (-<n>:Unspecified error) Can't create layer \"onnx_node_output_<n>!<name>\" "
     "of type \"Mod\" in function 'cv::dnn::dnn4_v20230620::Net::Impl::getLayerInstance'"},
    {"TensorRT",
     "[06/27/2024-11:48:30] [E] Error[4]: [graphShapeAnalyzer.cpp::analyzeShapes::1872] Error Code 4: Miscellaneous "
     "(IShuffleLayer Reshape_966: reshape wildcard -1 has no integer solution. Reshaping [6,1000,8,32] to [6,334,-1].)",
     {"Reshape_966"},
     "[<n>/<n>/<n>-<n>:<n>:<n>] [E] Error[<n>]: [graphShapeAnalyzer.cpp::analyzeShapes::<n>] Error Code <n>: "
     "Miscellaneous (IShuffleLayer <name>: reshape wildcard -<n> has no integer solution. Reshaping "
     "[<n>,<n>,<n>,<n>] to [<n>,<n>,-<n>].)"},
    {"TensorRT",
     "[W] [TRT] onnx2trt_utils.cpp:367: Your ONNX model has been generated with INT64 weights, while TensorRT does "
     "not natively support INT64. Attempting to cast down to INT32.",
     {},
     "[W] [TRT] onnx2trt_utils.cpp:<n>: Your ONNX model has been generated with INT64 weights, while TensorRT does "
     "not natively support INT64. Attempting to cast down to INT32."},
    {"TensorRT",
     "[E] [TRT] parsers/onnx/ModelImporter.cpp:773: While parsing node number 14 [Pad -> \"819\"]:",
     {"819"},
     "[E] [TRT] <path>:<n>: While parsing node number <n> [Pad -> <name>]:"},
    {"TensorRT",
     "Error Code 7: Internal Error (IShuffleLayer (Unnamed Layer* 190) [Shuffle]: reshaping failed for tensor: "
     "TensorRTInputPH_38 reshape would change volume 97200 to 98100)",
     {},
     "Error Code <n>: Internal Error (IShuffleLayer (Unnamed Layer* <n>) [Shuffle]: reshaping failed for tensor: "
     "TensorRTInputPH_<n> reshape would change volume <n> to <n>)"},
    {"ONNX.js", "TypeError: unrecognized operator 'Pad'", {}, "TypeError: unrecognized operator 'Pad'"},
    {"ONNX.js", "TypeError: cannot resolve operator 'Shape' with opsets: ai.onnx v12", {},
     "TypeError: cannot resolve operator 'Shape' with opsets: ai.onnx v12"},
    {"ONNX.js", "Error: unrecognized input '' for node: Resize_61", {"Resize_61"},
     "Error: unrecognized input '' for node: <name>"},
};

TEST(Signature, RealEngineMessagesNormalizeAsTheTableSays) {
  for (const EngineMessage& m : kEngineMessages)
    EXPECT_EQ(normalize_message(m.message, m.names), m.normalized) << m.engine << ": " << m.message;
}

// A markdown cell holding `text` as code ('|' escaped, as GitHub's tables need).
std::string code_cell(const std::string& text) {
  std::string out = "`";
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out + "`";
}

std::string rendered_table() {
  std::string out = "| engine | message | the model's names in it | normalized |\n|---|---|---|---|\n";
  for (const EngineMessage& m : kEngineMessages) {
    std::vector<std::string> names(m.names.begin(), m.names.end());
    std::sort(names.begin(), names.end());
    std::string listed;
    for (const auto& n : names) listed += (listed.empty() ? "" : ", ") + code_cell(n);
    out += "| " + std::string(m.engine) + " | " + code_cell(m.message) + " | " + (listed.empty() ? "—" : listed) +
           " | " + code_cell(m.normalized) + " |\n";
  }
  return out;
}

// The doc's table is this file's: a doc that drifts from the function fails here.
TEST(SignatureDoc, TheTableOfRealMessagesInDocsOracleIsTheTestedOne) {
  std::ifstream in(std::string(REDUCE_SOURCE_DIR) + "/docs/oracle.md");
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  const std::string begin = "<!-- engine-messages: tests/oracle/signature_test.cpp -->\n", end = "<!-- end engine-messages -->";
  const size_t from = text.find(begin), to = text.find(end);
  ASSERT_NE(from, std::string::npos) << "docs/oracle.md has no table of engine messages";
  ASSERT_NE(to, std::string::npos);
  EXPECT_EQ(text.substr(from + begin.size(), to - from - begin.size()), rendered_table())
      << "paste this table between the markers:\n"
      << rendered_table();
}

std::string normalized(const std::string& message, std::unordered_set<std::string> names) {
  return normalize_message(message, names);
}

// An engine's NUL, ESC and carriage return bytes are shown escaped (issue 66): a terminal would act on
// them; newlines and tabs stay, and a long message keeps its last lines, escaped too.
TEST(Signature, ShownMessagesEscapeControlBytes) {
  const char raw[] = "bad\0node\x1b[31m\r\tx\ny";
  EXPECT_EQ(shown_message(std::string(raw, sizeof raw - 1)), "bad\\x00node\\x1b[31m\\x0d\tx\ny");
  EXPECT_EQ(shown_message("plain text"), "plain text");
  const std::string long_message = std::string(5000, '.') + "\nlast\x01line";
  const std::string shown = shown_message(long_message);
  EXPECT_NE(shown.find("last\\x01line"), std::string::npos) << shown;
  EXPECT_EQ(shown.find('\x01'), std::string::npos);
}

TEST(Signature, MessagesThatDifferOnlyInTheOperatorAreDifferentFailures) {
  EXPECT_NE(normalized("Could not find an implementation for Clip(13) node with name '/Clip'", {"/Clip"}),
            normalized("Could not find an implementation for HardSigmoid(6) node with name '/HardSigmoid'", {"/HardSigmoid"}));
  EXPECT_NE(normalized("TypeError: unrecognized operator 'Pad'", {}), normalized("TypeError: unrecognized operator 'Elu'", {}));
  EXPECT_NE(normalized("Node [Clip@ai.onnx]:(onnx_node!n1) parse error: in function 'parseClip'", {"n1"}),
            normalized("Node [HardSigmoid@ai.onnx]:(onnx_node!n1) parse error: in function 'parseHardSigmoid'", {"n1"}));
  // A node named after an operator is still the operator in a message.
  EXPECT_EQ(normalized("unsupported 'Clip'", {"Clip"}), "unsupported 'Clip'");
}

TEST(Signature, MessagesThatDifferOnlyInNodeNamesAndNumbersAreTheSameFailure) {
  const std::unordered_set<std::string> names{"/time_proj/Mul", "Mul_5"};
  EXPECT_EQ(normalized("running Mul node. Name:'/time_proj/Mul' Status Message: element_wise_ops.h:540 "
                       "broadcast an axis by a dimension other than 1. 2 by 160", names),
            normalized("running Mul node. Name:'Mul_5' Status Message: element_wise_ops.h:505 "
                       "broadcast an axis by a dimension other than 1. 9 by 505", names));
  EXPECT_EQ(normalized("IShuffleLayer Reshape_966: reshaping [6,1000,8,32] to [6,334,-1] at 0x7ffd12", {"Reshape_966"}),
            normalized("IShuffleLayer /Reshape_1: reshaping [2,10,8,4] to [6,5,-1] at 0x55aa01", {"/Reshape_1"}));
  // Names the engine makes up from a counter lose the counter.
  EXPECT_EQ(normalized("(Unnamed Layer* 190) [Shuffle] node_17", {}), normalized("(Unnamed Layer* 3) [Shuffle] node_2", {}));
}

TEST(Signature, WordsKeepTheirDigitsAndApostrophesQuoteNothing) {
  const std::unordered_set<std::string> none;
  EXPECT_EQ(normalize_message("ortnode-1.12.1", none), "ortnode-<n>");
  EXPECT_EQ(normalize_message("Can't run FLOAT16 with int64 at opset13 on Conv2D, v1.16.3", none),
            "Can't run FLOAT16 with int64 at opset13 on Conv2D, v<n>");
  EXPECT_EQ(normalize_message("epsilon 1e-05, scale 0.5, dims 1x3x64x64", none), "epsilon <n>, scale <n>, dims <n>");
  EXPECT_EQ(normalize_message("it's 'data' and \"x\"", {"x"}), "it's 'data' and <name>");
}

TEST(Signature, NormalizationMasksNumbersAddressesPathsAndGraphNames) {
  std::unordered_set<std::string> names{"conv_7", "/model/layer.3/Add"};
  EXPECT_EQ(normalize_message("Cast layer conv_7: output type conflicts", names), "Cast layer <name>: output type conflicts");
  EXPECT_EQ(normalize_message("at 0x7ffd12 in /tmp/x/model.onnx line 42", names), "at <addr> in <path> line <n>");
  EXPECT_EQ(normalize_message("node '/model/layer.3/Add'  failed:\n shape [1,3]", names),
            "node <name> failed: shape [<n>,<n>]");
  // A quoted path or number is masked whole; a quoted word or sentence keeps its quotes.
  EXPECT_EQ(normalize_message("cannot open '/tmp/m.onnx', got '42', 'bad input 7'", names),
            "cannot open <path>, got <n>, 'bad input <n>'");
}

// trtexec echoes its command line, whose --loadInputs list has one item per model input: a refusal
// is the same on a model of one input and one of two (lists of numbers keep their length).
TEST(Signature, AListOfMaskedNamesOrPathsIsTheSameWhateverItsLength) {
  const std::unordered_set<std::string> names{"x", "y"};
  const std::string one = normalize_message("# trtexec --loadInputs='x':/tmp/a/x.pb --fp16 | [E] Unknown option: --fp16", names);
  const std::string two =
      normalize_message("# trtexec --loadInputs='x':/tmp/a/x.pb,'y':/tmp/a/y.pb --fp16 | [E] Unknown option: --fp16", names);
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, "# trtexec --loadInputs=<name>:<path> --fp16 | [E] Unknown option: --fp16");
  EXPECT_EQ(normalize_message("inputs: /a/x.pb,/a/y.pb,/a/z.pb here", names), "inputs: <path> here");
  EXPECT_EQ(normalize_message("shape [1,3] vs [1,3,4]", names), "shape [<n>,<n>] vs [<n>,<n>,<n>]");
}

TEST(Signature, SameFailureNeedsSameKindAndDetails) {
  FailureSignature err{FailureKind::Error, "m", "Cast layer <name>: conflict", 0, 0};
  FailureSignature other = err;
  other.normalized = "Reshape: shape mismatch";
  EXPECT_EQ(match_signature(err, err), SignatureMatch::Same);
  EXPECT_EQ(match_signature(err, other), SignatureMatch::Different);
  EXPECT_EQ(match_signature(err, FailureSignature{}), SignatureMatch::Pass);
  FailureSignature big{FailureKind::Mismatch, "", "", 0, magnitude_class(5000)};
  FailureSignature noise{FailureKind::Mismatch, "", "", 0, magnitude_class(1.5)};
  EXPECT_EQ(big.magnitude, 3);
  EXPECT_EQ(match_signature(big, noise), SignatureMatch::Different);
  FailureSignature close{FailureKind::Mismatch, "", "", 0, magnitude_class(500)};
  EXPECT_EQ(match_signature(big, close), SignatureMatch::Same);
  FailureSignature segv{FailureKind::Crash, "", "", 11, 0}, abrt{FailureKind::Crash, "", "", 6, 0};
  EXPECT_EQ(match_signature(segv, abrt), SignatureMatch::Different);
}

Tensor zeros(Shape shape, DType dtype = DType::Float) { return Tensor::allocate(dtype, std::move(shape)).value(); }

TEST(ShapeSignature, AnOutputOfAnotherShapeIsAShapeFailureTitledWithBothShapes) {
  const OutputComparison c = compare_tensors("y", zeros({1, 4}), zeros({1, 3}), Tolerance{});
  EXPECT_TRUE(c.shape_differs);
  EXPECT_FALSE(c.dtype_differs);
  const FailureSignature s = signature_of_outputs({c});
  EXPECT_EQ(s.kind, FailureKind::Shape);
  EXPECT_TRUE(compares_outputs(s.kind));
  EXPECT_EQ(s.to_string(), "shape: output `y` is float[1,4] on the engine, float[1,3] on the reference");
  EXPECT_STREQ(to_string(s.kind), "shape");
}

TEST(ShapeSignature, ItComesBeforeNonFiniteAndMismatchedValues) {
  const float inf = std::numeric_limits<float>::infinity();
  OutputComparison nonfinite = compare_tensors("a", Tensor::from_vector(DType::Float, {1}, std::vector<float>{inf}).value(),
                                               zeros({1}), Tolerance{});
  ASSERT_TRUE(nonfinite.is_nonfinite_failure());
  EXPECT_EQ(signature_of_outputs({nonfinite}).kind, FailureKind::NonFinite);
  const OutputComparison shape = compare_tensors("b", zeros({2}), zeros({3}), Tolerance{});
  for (const auto& outputs : {std::vector<OutputComparison>{nonfinite, shape}, std::vector<OutputComparison>{shape, nonfinite}}) {
    const FailureSignature s = signature_of_outputs(outputs);
    EXPECT_EQ(s.kind, FailureKind::Shape);
    EXPECT_EQ(s.message, "output `b` is float[2] on the engine, float[3] on the reference");
  }
}

// The culprit's own output replaces the model's when the nodes after it go, and may be wrong in
// another way: still the same bug. An element type that differs instead is another bug.
TEST(ShapeSignature, AnotherWrongShapeIsTheSameFailureAnotherElementTypeIsNot) {
  const FailureSignature target = signature_of_outputs({compare_tensors("Y", zeros({1, 6}), zeros({2, 3}), Tolerance{})});
  const FailureSignature cut = signature_of_outputs({compare_tensors("b", zeros({6}), zeros({2, 3}), Tolerance{})});
  EXPECT_EQ(match_signature(target, cut), SignatureMatch::Same);
  const FailureSignature typed =
      signature_of_outputs({compare_tensors("Y", zeros({2, 3}, DType::Float16), zeros({2, 3}), Tolerance{})});
  EXPECT_EQ(typed.to_string(), "shape: output `Y` is float16[2,3] on the engine, float[2,3] on the reference");
  EXPECT_EQ(match_signature(target, typed), SignatureMatch::Different);
  const FailureSignature values{FailureKind::Mismatch, "", "", 0, 99};
  EXPECT_EQ(match_signature(target, values), SignatureMatch::Different);
}

}  // namespace
}  // namespace reduce
