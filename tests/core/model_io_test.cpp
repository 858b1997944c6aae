// Loading and saving models: text models, Constant import, round trips, external data, bad files.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <algorithm>
#include <sys/stat.h>
#include <unistd.h>

#include "core/extract.h"
#include "core/graph_algorithms.h"
#include "core/mapped_file.h"
#include "core/model_io.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::parse_model;
using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;

const char* kSmallModel = R"(
<ir_version: 8, opset_import: ["" : 15]>
small (float[N, 4] X) => (float[N, 4] Y)
<float[4] w = {1.0, 2.0, 3.0, 4.0}>
{
  k = Constant <value = float[4] {0.5, 0.5, 0.5, 0.5}> ()
  a = Mul(X, w)
  b = Add(a, k)
  Y = Relu(b)
}
)";

// A model with weights big enough to go to external data.
Model model_with_big_weights() {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
big (float[2, 4096] X) => (float[2, 4096] Y)
{
  a = Relu(X)
  Y = Identity(a)
}
)");
  auto w = Tensor::allocate(DType::Float, {4096});
  for (size_t i = 0; i < 4096; ++i) w->mutable_data<float>()[i] = static_cast<float>(i) * 0.25f;
  m.graph.initializers.push_back({"w", *w, {}});
  m.graph.nodes[1].op_type = "Mul";
  m.graph.nodes[1].inputs = {"a", "w"};
  return m;
}

// The check before every external engine run: the project's own validation for every model, ONNX
// 1.12's checker only where it knows the IR version and opsets (PyTorch 2.11 writes IR 10, opset 20).
TEST(ModelIo, ModelsNewerThanTheOnnxLibraryAreCheckedByOurOwnValidation) {
  const char* kTemplate = R"(
<ir_version: IR, opset_import: ["" : OPSET]>
g (float[2, 4] x) => (float[2, 4] y) {
  a = Relu <foo = 1> (x)
  y = Abs(a)
}
)";
  auto model = [&](int ir, int opset) {
    std::string text = kTemplate;
    text.replace(text.find("IR"), 2, std::to_string(ir));
    text.replace(text.find("OPSET"), 5, std::to_string(opset));
    return parse_model(text);
  };
  // Known to the library: its checker runs (it refuses the unknown attribute).
  EXPECT_TRUE(onnx_checker_knows(model(8, 17)));
  EXPECT_FALSE(check_model_for_engines(model(8, 17)).ok());
  // Newer IR or opset: accepted as our validation accepts it, never refused for being new.
  for (auto [ir, opset] : {std::pair{9, 19}, std::pair{10, 20}, std::pair{10, 23}, std::pair{11, 23}, std::pair{8, 18}}) {
    const Model m = model(ir, opset);
    EXPECT_FALSE(onnx_checker_knows(m)) << ir << " " << opset;
    EXPECT_FALSE(check_model(m).ok()) << ir << " " << opset;  // what the issue saw: the library refuses
    Status s = check_model_for_engines(m);
    EXPECT_TRUE(s.ok()) << ir << " " << opset << ": " << s.error().message();
  }
  // Our own validation still refuses a broken one, whatever its IR version.
  Model broken = model(10, 20);
  broken.graph.nodes[1].inputs[0] = "nowhere";
  Status s = check_model_for_engines(broken);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("'nowhere', which nothing defines"), std::string::npos) << s.error().message();
  // Other domains are the engine's business: a contrib op does not hide a model from the checker.
  EXPECT_TRUE(onnx_checker_knows(parse_model(R"(
<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[2, 4] x) => (float[2, 4] y) { y = com.microsoft.Gelu(x) }
)")));
}

TEST(ModelIo, ConstantNodesBecomeInitializers) {
  Model m = parse_model(kSmallModel);
  EXPECT_EQ(m.graph.nodes.size(), 3u);
  EXPECT_EQ(count_nodes(m.graph), 3u);
  const Initializer* k = m.graph.find_initializer("k");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->tensor.shape(), Shape{4});
  EXPECT_EQ(k->tensor.data<float>()[2], 0.5f);
}

// Inside, a Constant node is an initializer; written out it is a Constant node again (an engine may
// treat the two forms differently: OpenCV 4.6 does), and an initializer stays an initializer.
TEST(ModelIo, EachConstantIsWrittenInTheFormTheFileHadIt) {
  Model m = parse_model(kSmallModel);
  const Initializer* k = m.graph.find_initializer("k");
  ASSERT_NE(k, nullptr);
  ASSERT_TRUE(k->constant_node.has_value());
  EXPECT_FALSE(m.graph.find_initializer("w")->constant_node.has_value());
  auto bytes = serialize_model(m);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message();
  EXPECT_NE(bytes->find("Constant"), std::string::npos);
  TempDir dir;
  ASSERT_TRUE(save_model(m, dir / "m.onnx").ok());
  ASSERT_TRUE(check_model_file(dir / "m.onnx").ok());
  auto back = load_model(dir / "m.onnx");
  ASSERT_TRUE(back.ok()) << back.error().message();
  ASSERT_NE(back->graph.find_initializer("k"), nullptr);
  EXPECT_TRUE(back->graph.find_initializer("k")->constant_node.has_value());
  EXPECT_FALSE(back->graph.find_initializer("w")->constant_node.has_value());
  // Without the mark, the same value is written as an initializer.
  Model lifted = parse_model(kSmallModel);
  for (auto& init : lifted.graph.initializers) init.constant_node.reset();
  auto plain = serialize_model(lifted);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->find("Constant"), std::string::npos);
}

TEST(ModelIo, InlineRoundTripIsIdenticalAndPassesChecker) {
  TempDir dir;
  Model m = parse_model(kSmallModel);
  ASSERT_TRUE(save_model(m, dir / "m.onnx").ok());
  ASSERT_TRUE(check_model_file(dir / "m.onnx").ok());
  auto back = load_model(dir / "m.onnx");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(first_difference(m, *back), std::nullopt);
}

// Protobuf's wire format, written out here independently of protobuf: a field of bytes or of a
// nested message, and a varint field.
std::string varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7f) | 0x80);
  return out + static_cast<char>(v);
}
std::string bytes_field(int field, const std::string& payload) {
  return varint(static_cast<uint64_t>(field) << 3 | 2) + varint(payload.size()) + payload;
}
std::string varint_field(int field, uint64_t v) { return varint(static_cast<uint64_t>(field) << 3) + varint(v); }

TEST(ModelIo, SavedBytesAreProtobufsCanonicalEncodingWithTheWeightsInPlace) {
  // The weights' bytes are written from their tensors, not from a copy in the proto: what lands on
  // disk must still be exactly the message, fields in field-number order (raw_data between the
  // tensor's name and its doc string, initializers between the graph's name and its inputs).
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[2] X) => (float[2] Y)
<float[2] w = {1.0, 2.0}, float[1] b = {0.5}>
{
  a = Mul(X, w)
  Y = Add(a, b)
}
)");
  m.graph.initializers[0].doc_string = "d";
  const std::string raw_w("\x00\x00\x80\x3f\x00\x00\x00\x40", 8), raw_b("\x00\x00\x00\x3f", 4);
  const std::string type = bytes_field(2, bytes_field(1, varint_field(1, 1) + bytes_field(2, bytes_field(1, varint_field(1, 2)))));
  const std::string graph =
      bytes_field(1, bytes_field(1, "X") + bytes_field(1, "w") + bytes_field(2, "a") + bytes_field(3, "") + bytes_field(4, "Mul")) +
      bytes_field(1, bytes_field(1, "a") + bytes_field(1, "b") + bytes_field(2, "Y") + bytes_field(3, "") + bytes_field(4, "Add")) +
      bytes_field(2, "g") +
      bytes_field(5, varint_field(1, 2) + varint_field(2, 1) + bytes_field(8, "w") + bytes_field(9, raw_w) + bytes_field(12, "d")) +
      bytes_field(5, varint_field(1, 1) + varint_field(2, 1) + bytes_field(8, "b") + bytes_field(9, raw_b)) +
      bytes_field(11, bytes_field(1, "X") + type) + bytes_field(12, bytes_field(1, "Y") + type);
  const std::string expected = varint_field(1, 8) + bytes_field(7, graph) + bytes_field(8, bytes_field(1, "") + varint_field(2, 15));
  TempDir dir;
  ASSERT_TRUE(save_model(m, dir / "m.onnx").ok());
  EXPECT_EQ(read_bytes(dir / "m.onnx"), expected);
  auto serialized = serialize_model(m);
  ASSERT_TRUE(serialized.ok());
  EXPECT_EQ(*serialized, expected);
}

TEST(ModelIo, SavingAModelHoldsNoSecondCopyOfItsInlineWeights) {
  // A reproducer with one float[4096,2048] weight kept inline: saving it must not need another
  // 32 MiB, nor serializing it (for an engine that loads from memory) more than the bytes it returns.
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[1, 4096] X, float[4096, 2048] w) => (float[1, 2048] Y)
{
  Y = MatMul(X, w)
}
)");
  const size_t weight_bytes = size_t{32} << 20;
  Tensor w = Tensor::allocate_uninitialized(DType::Float, {4096, 2048}).value();
  for (size_t i = 0; i < w.elements(); ++i) w.mutable_data<float>()[i] = static_cast<float>(i % 1000);
  m.graph.initializers.push_back({"w", w, {}});
  m.graph.inputs.erase(std::remove_if(m.graph.inputs.begin(), m.graph.inputs.end(),
                                      [](const ValueInfo& vi) { return vi.name == "w"; }),
                       m.graph.inputs.end());
  TempDir dir;
  ASSERT_TRUE(testing::reset_peak_resident());
  size_t before = testing::resident_bytes();
  ASSERT_TRUE(save_model(m, dir / "m.onnx").ok());
  EXPECT_LT(testing::peak_resident_bytes(), before + weight_bytes / 4) << "saving held a copy of the weight";
  auto back = load_model(dir / "m.onnx");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(first_difference(m, *back), std::nullopt);

  ASSERT_TRUE(testing::reset_peak_resident());
  before = testing::resident_bytes();
  auto bytes = serialize_model(m);
  ASSERT_TRUE(bytes.ok());
  EXPECT_GT(bytes->size(), weight_bytes);
  EXPECT_LT(testing::peak_resident_bytes(), before + weight_bytes + weight_bytes / 4)
      << "serializing held a copy of the weight besides the bytes";
  EXPECT_EQ(*bytes, read_bytes(dir / "m.onnx"));
}

TEST(ModelIo, ExternalWeightsAreMappedNotCopied) {
  TempDir dir;
  Model m = model_with_big_weights();
  SaveOptions opts;
  opts.weights = SaveOptions::Weights::External;
  ASSERT_TRUE(save_model(m, dir / "m.onnx", opts).ok());
  EXPECT_LT(std::filesystem::file_size(dir / "m.onnx"), 1000u);
  EXPECT_GE(std::filesystem::file_size(dir / "m.data"), 4096u * 4);
  ASSERT_TRUE(check_model_file(dir / "m.onnx").ok());
  auto back = load_model(dir / "m.onnx");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(first_difference(m, *back), std::nullopt);
  EXPECT_EQ(back->external_data_files, std::vector<std::string>{"m.data"});
  const Tensor& w = back->graph.find_initializer("w")->tensor;
  EXPECT_FALSE(w.writable());  // a view into the mapped file
}

// model_with_big_weights saved as DIR/m.onnx with its weights in m.data, loaded back (mapped).
Expected<Model> saved_with_external_weights(const std::filesystem::path& dir) {
  SaveOptions external;
  external.weights = SaveOptions::Weights::External;
  REDUCE_TRY(save_model(model_with_big_weights(), dir / "m.onnx", external));
  return load_model(dir / "m.onnx");
}

TEST(ModelIo, WeightsOfTheOriginalExternalDataAreAHardLinkOfItsFileNotACopy) {
  TempDir dir;
  auto original = saved_with_external_weights(dir.path());
  ASSERT_TRUE(original.ok()) << original.error().message();
  ASSERT_EQ(original->external_data.size(), 1u);
  // A candidate: the original with one more weight of its own, which has no file to link.
  Model candidate = *original;
  candidate.graph.initializers.push_back({"own", Tensor::from_vector(DType::Float, {2}, std::vector<float>{1, 2}).value(), {}});
  std::filesystem::create_directory(dir / "bundle");
  SaveOptions linked;
  linked.link_external_data = true;
  ASSERT_TRUE(save_model(candidate, dir / "bundle" / "model.onnx", linked).ok());
  struct stat a {}, b {};
  ASSERT_EQ(::stat((dir / "m.data").c_str(), &a), 0);
  ASSERT_EQ(::stat((dir / "bundle" / "model.original.data").c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);  // the same file: nothing copied
  EXPECT_EQ(b.st_nlink, 2u);
  EXPECT_LT(std::filesystem::file_size(dir / "bundle" / "model.onnx"), 1000u);
  auto back = load_model(dir / "bundle" / "model.onnx");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(first_difference(candidate, *back), std::nullopt);
  ASSERT_TRUE(check_model_file(dir / "bundle" / "model.onnx").ok());
  // Saved again (a better reproducer): the link is replaced in place, no temporary is left.
  ASSERT_TRUE(save_model(candidate, dir / "bundle" / "model.onnx", linked).ok());
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir / "bundle")) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"model.onnx", "model.original.data"}));
}

TEST(ModelIo, AModelWhoseWeightsNoLongerViewTheOriginalFileGetsNoLink) {
  TempDir dir;
  auto original = saved_with_external_weights(dir.path());
  ASSERT_TRUE(original.ok()) << original.error().message();
  Model filled = *original;
  filled.graph.initializers[0].tensor = Tensor::allocate(DType::Float, {4096}).value();  // filled with 0
  std::filesystem::create_directory(dir / "out");
  SaveOptions linked;
  linked.link_external_data = true;
  ASSERT_TRUE(save_model(filled, dir / "out" / "model.onnx", linked).ok());
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "model.original.data"));
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir / "out")) files.push_back(e.path().filename().string());
  EXPECT_EQ(files, std::vector<std::string>{"model.onnx"});  // the weights inline; the unused link removed
  auto back = load_model(dir / "out" / "model.onnx");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(first_difference(filled, *back), std::nullopt);
}

TEST(ModelIo, SharedWeightsFileMakesCandidatesSmall) {
  TempDir dir;
  Model m = model_with_big_weights();
  auto table = write_shared_weights(m, dir / "weights.bin");
  ASSERT_TRUE(table.ok()) << table.error().message();
  SaveOptions opts;
  opts.shared = &*table;
  ASSERT_TRUE(save_model(m, dir / "candidate.onnx", opts).ok());
  EXPECT_LT(std::filesystem::file_size(dir / "candidate.onnx"), 1000u);
  auto back = load_model(dir / "candidate.onnx");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(first_difference(m, *back), std::nullopt);
}

TEST(ModelIo, TruncatedFileIsAnErrorAtEveryLength) {
  TempDir dir;
  ASSERT_TRUE(save_model(model_with_big_weights(), dir / "full.onnx").ok());
  const std::string bytes = read_bytes(dir / "full.onnx");
  // Cut in half: must fail, naming the file.
  write_bytes(dir / "cut.onnx", bytes.substr(0, bytes.size() / 2));
  auto half = load_model(dir / "cut.onnx");
  ASSERT_FALSE(half.ok());
  EXPECT_EQ(half.error().where, (dir / "cut.onnx").string());
  // Every other length must give a model or an error, never a crash.
  for (size_t len = 0; len < bytes.size(); len += 97) {
    write_bytes(dir / "cut.onnx", bytes.substr(0, len));
    (void)load_model(dir / "cut.onnx");
  }
}

TEST(ModelIo, RandomBytesAreAnError) {
  TempDir dir;
  std::mt19937 rng(7);
  std::string junk(4096, '\0');
  for (auto& c : junk) c = static_cast<char>(rng());
  write_bytes(dir / "junk.onnx", junk);
  auto m = load_model(dir / "junk.onnx");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().where, (dir / "junk.onnx").string());
}

TEST(ModelIo, MissingAndEmptyFilesAreErrors) {
  TempDir dir;
  EXPECT_FALSE(load_model(dir / "absent.onnx").ok());
  write_bytes(dir / "empty.onnx", "");
  EXPECT_FALSE(load_model(dir / "empty.onnx").ok());
  EXPECT_FALSE(load_model(dir.path()).ok());
}

// Saves a model with external weights in `file_name` and rewrites the location string in the
// saved .onnx to `location` (same length, so the protobuf stays well-formed).
std::filesystem::path model_pointing_at(const TempDir& dir, const std::string& location) {
  SaveOptions opts;
  opts.weights = SaveOptions::Weights::External;
  opts.external_file = std::string(location.size(), 'x');
  EXPECT_TRUE(save_model(model_with_big_weights(), dir / "m.onnx", opts).ok());
  std::string bytes = read_bytes(dir / "m.onnx");
  const auto pos = bytes.find(opts.external_file);
  EXPECT_NE(pos, std::string::npos);
  bytes.replace(pos, location.size(), location);
  write_bytes(dir / "m.onnx", bytes);
  return dir / "m.onnx";
}

TEST(ModelIo, ExternalDataOutsideTheFolderIsRefused) {
  TempDir dir;
  for (const std::string loc : {"../outside.bin", "/etc/passwd00", "a/../../b.bin"}) {
    auto m = load_model(model_pointing_at(dir, loc));
    ASSERT_FALSE(m.ok()) << loc;
    EXPECT_EQ(m.error().where, (dir / "m.onnx").string());
    EXPECT_TRUE(m.error().what.find("escapes the model's folder") != std::string::npos ||
                m.error().what.find("absolute path") != std::string::npos)
        << m.error().what;
  }
}

TEST(ModelIo, SymlinkLeavingTheFolderIsRefused) {
  TempDir outside;
  TempDir dir;
  write_bytes(outside / "secret.bin", std::string(1 << 16, 'a'));
  auto path = model_pointing_at(dir, "link.bin");
  std::filesystem::create_symlink(outside / "secret.bin", dir / "link.bin");
  auto m = load_model(path);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().what.find("escapes the model's folder"), std::string::npos) << m.error().what;
}

TEST(ModelIo, MissingExternalFileIsAnError) {
  TempDir dir;
  SaveOptions opts;
  opts.weights = SaveOptions::Weights::External;
  ASSERT_TRUE(save_model(model_with_big_weights(), dir / "m.onnx", opts).ok());
  std::filesystem::remove(dir / "m.data");
  auto m = load_model(dir / "m.onnx");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().what.find("does not exist"), std::string::npos) << m.error().what;
}

TEST(ModelIo, ShortExternalFileIsAnError) {
  TempDir dir;
  SaveOptions opts;
  opts.weights = SaveOptions::Weights::External;
  ASSERT_TRUE(save_model(model_with_big_weights(), dir / "m.onnx", opts).ok());
  std::filesystem::resize_file(dir / "m.data", 100);
  auto m = load_model(dir / "m.onnx");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().what.find("runs past the end"), std::string::npos) << m.error().what;
}

TEST(ModelIo, UndefinedInputIsAnError) {
  auto m = parse_model_text(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[2] X) => (float[2] Y)
{
  Y = Add(X, nowhere)
}
)");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().what.find("'nowhere', which nothing defines"), std::string::npos) << m.error().what;
}

TEST(ModelIo, SubgraphsRoundTripAndRecordOuterReads) {
  TempDir dir;
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 16]>
g (bool c, float[2] X, float[2] Z) => (float[2] Y)
{
  Y = If (c) <
    then_branch = t () => (float[2] a) { a = Add(X, Z) },
    else_branch = e () => (float[2] b) { b = Neg(X) }
  >
}
)");
  ASSERT_EQ(m.graph.nodes.size(), 1u);
  EXPECT_EQ(m.graph.nodes[0].implicit_inputs, (std::vector<std::string>{"X", "Z"}));
  ASSERT_TRUE(save_model(m, dir / "if.onnx").ok());
  ASSERT_TRUE(check_model_file(dir / "if.onnx").ok());
  auto back = load_model(dir / "if.onnx");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(first_difference(m, *back), std::nullopt);
}

TEST(ModelIo, ModelAbove2GBLoadsWhenItsWeightsAreExternal) {
  // A 3 GiB weight file with holes: no disk or memory is used, but every size is real.
  TempDir dir;
  const uint64_t bytes = uint64_t{3} << 30;
  const int fd = ::open((dir / "big.bin").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(bytes)), 0);
  ::close(fd);
  auto file = MappedFile::open(dir / "big.bin");
  ASSERT_TRUE(file.ok());
  auto weight = Tensor::view(DType::Float, {static_cast<int64_t>(bytes / 4)}, *file, (*file)->bytes().data(), bytes);
  ASSERT_TRUE(weight.ok()) << weight.error().message();
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[805306368] X, float[805306368] w) => (float[805306368] Y)
{
  Y = Add(X, w)
}
)");
  m.graph.inputs.pop_back();
  m.graph.initializers.push_back({"w", *weight, {}});
  SharedWeights table("big.bin");
  table.add(*weight, {0, bytes});
  SaveOptions opts;
  opts.shared = &table;
  ASSERT_TRUE(save_model(m, dir / "big.onnx", opts).ok());
  auto back = load_model(dir / "big.onnx");
  ASSERT_TRUE(back.ok()) << back.error().message();
  const Tensor& w = back->graph.find_initializer("w")->tensor;
  EXPECT_EQ(w.byte_size(), bytes);
  EXPECT_FALSE(w.writable());
}

// An engine checks the user's file as given (issue 65): a model read from a binary file is saved and
// serialized as the file's own bytes while nothing in it changed, and as its re-serialization as soon
// as anything does. A PyTorch export, whose bytes our serialization does not reproduce.
TEST(ModelIo, AModelStillAsReadIsSavedAsTheUsersOwnFile) {
  const std::filesystem::path file =
      std::filesystem::path(REDUCE_SHARED_FIXTURES) / "exported" / "bert_torchscript_op17" / "model.onnx";
  const std::string original = read_bytes(file);
  auto model = load_model(file);
  ASSERT_TRUE(model.ok()) << model.error().message();
  ASSERT_TRUE(source_bytes(*model).has_value());
  auto bytes = serialize_model(*model);
  ASSERT_TRUE(bytes.ok());
  EXPECT_TRUE(*bytes == original);
  const Model copy = *model;
  TempDir dir;
  ASSERT_TRUE(save_model(copy, dir / "copy.onnx").ok());
  EXPECT_TRUE(read_bytes(dir / "copy.onnx") == original);

  auto differs = [&](const Model& m) {
    EXPECT_FALSE(source_bytes(m).has_value());
    auto b = serialize_model(m);
    return b.ok() && *b != original;
  };
  Model renamed = *model;
  renamed.graph.nodes[0].name += "_x";
  EXPECT_TRUE(differs(renamed));
  Model with_output = *model;
  with_output.graph.outputs.push_back({with_output.graph.nodes[0].outputs[0], {}});
  EXPECT_TRUE(differs(with_output));
  Model described = *model;
  described.doc_string = "changed";
  EXPECT_TRUE(differs(described));
  Model attribute = *model;
  auto node = std::find_if(attribute.graph.nodes.begin(), attribute.graph.nodes.end(),
                           [](const Node& n) { return !n.attributes.empty() && !n.attributes[0].ints.empty(); });
  ASSERT_NE(node, attribute.graph.nodes.end());
  node->attributes[0].ints[0] += 1;
  EXPECT_TRUE(differs(attribute));
  Model weight = *model;
  ASSERT_FALSE(weight.graph.initializers.empty());
  auto& w = weight.graph.initializers[0].tensor;
  auto filled = filled_like(w, 7.0);
  ASSERT_TRUE(filled.ok());
  w = *filled;
  EXPECT_TRUE(differs(weight));
  // What a re-serialization gives is another file: the bytes handed on before.
  Model reread = *model;
  reread.source.reset();
  auto again = serialize_model(reread);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(*again, original);
}

// Only a self-contained binary file is handed on as it is: external data is resolved against the
// model's folder, and a text model is no ONNX file.
TEST(ModelIo, ExternalDataAndTextModelsAreNotHandedOnAsTheirFile) {
  auto external = load_model(std::filesystem::path(REDUCE_SHARED_FIXTURES) / "exported" / "vit_dynamo_external" / "model.onnx");
  ASSERT_TRUE(external.ok()) << external.error().message();
  EXPECT_FALSE(source_bytes(*external).has_value());
  TempDir dir;
  write_bytes(dir / "small.onnxtxt", kSmallModel);
  auto text = load_model(dir / "small.onnxtxt");
  ASSERT_TRUE(text.ok()) << text.error().message();
  EXPECT_FALSE(source_bytes(*text).has_value());
}

TEST(ModelIo, SetInputShapeFixesDynamicDimsAndRejectsContradictions) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[N, 3, H] X) => (float[N, 3, H] Y)
{
  Y = Relu(X)
}
)");
  EXPECT_TRUE(set_input_shape(m, "X", {2, 3, 5}).ok());
  EXPECT_EQ(m.graph.inputs[0].type.to_string(), "float[2,3,5]");
  EXPECT_FALSE(set_input_shape(m, "X", {2, 4, 5}).ok());  // static dim 3 contradicted
  EXPECT_FALSE(set_input_shape(m, "X", {2, 3}).ok());     // rank
  EXPECT_FALSE(set_input_shape(m, "nope", {1}).ok());
}

TEST(GraphIndex, TopologicalOrderFollowsDependencies) {
  Model m = parse_model(R"(
<ir_version: 8, opset_import: ["" : 15]>
g (float[2] X) => (float[2] Y, float[2] Z)
{
  a = Relu(X)
  b = Neg(a)
  c = Abs(a)
  Y = Add(b, c)
  Z = Sigmoid(X)
}
)");
  auto ix = GraphIndex::build(m.graph);
  ASSERT_TRUE(ix.ok());
  EXPECT_EQ(ix->topological_order(), (std::vector<size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(ix->producer("b"), 1u);
  EXPECT_EQ(ix->producer("X"), std::nullopt);
  EXPECT_EQ(std::vector<size_t>(ix->consumers("a").begin(), ix->consumers("a").end()), (std::vector<size_t>{1, 2}));
  const size_t y = 3;
  auto anc = ancestors(*ix, std::span<const size_t>(&y, 1));
  EXPECT_EQ(anc, (std::vector<bool>{true, true, true, true, false}));
  const size_t a = 0;
  auto desc = descendants(*ix, std::span<const size_t>(&a, 1));
  EXPECT_EQ(desc, (std::vector<bool>{true, true, true, true, false}));
}

}  // namespace
}  // namespace reduce
