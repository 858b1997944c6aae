// trtexec's --exportOutput JSON: read as trtexec writes it (stream-printed numbers, bare inf/nan,
// unescaped names), typed from the model; anything else is one error naming the file and the problem.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/half.h"
#include "core/trtexec_json.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::TempDir;
using testing::write_bytes;

// The layout of exportJSONOutput in trtexec's sampleReporting.cpp: `{ "name" : ...` then `, "dimensions"`
// and `, "values"` lines, values separated by ", ", outputs by a leading ", ".
const char* kTwoOutputs = R"([
  { "name" : "Y:0"
  , "dimensions" : "2x3"
  , "values" : [ 1, -0.5, inf, -inf, nan, 1.23457e+06 ]
  }
, { "name" : "count"
  , "dimensions" : ""
  , "values" : [ -7 ]
  }
]
)";

Expected<std::vector<NamedTensor>> read(const std::string& text, const std::map<std::string, DType, std::less<>>& types) {
  TempDir dir;
  write_bytes(dir / "out.json", text);
  return read_trtexec_outputs(dir / "out.json", types);
}

TEST(TrtexecJson, ReadsOutputsAsTrtexecPrintsThemTypedFromTheModel) {
  auto out = read(kTwoOutputs, {{"Y:0", DType::Float}, {"count", DType::Int64}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  ASSERT_EQ(out->size(), 2u);
  const Tensor& y = (*out)[0].tensor;
  EXPECT_EQ((*out)[0].name, "Y:0");
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  auto v = y.data<float>();
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], -0.5f);
  EXPECT_TRUE(std::isinf(v[2]) && v[2] > 0);
  EXPECT_TRUE(std::isinf(v[3]) && v[3] < 0);
  EXPECT_TRUE(std::isnan(v[4]));
  EXPECT_EQ(v[5], 1234570.0f);
  EXPECT_EQ((*out)[1].tensor.dtype(), DType::Int64);
  EXPECT_EQ((*out)[1].tensor.shape(), Shape{});
  EXPECT_EQ((*out)[1].tensor.data<int64_t>()[0], -7);
}

TEST(TrtexecJson, Float16AndBoolOutputsAreRoundedAndChecked) {
  auto out = read(R"([ { "name" : "h", "dimensions" : "3", "values" : [ 0.1, 65504, -nan ] },
                       { "name" : "b", "dimensions" : "2", "values" : [ 0, 1 ] } ])",
                  {{"h", DType::Float16}, {"b", DType::Bool}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  auto h = (*out)[0].tensor.data<uint16_t>();
  EXPECT_EQ(h[0], float_to_half(0.1f));
  EXPECT_EQ(half_to_float(h[1]), 65504.0f);
  EXPECT_TRUE(std::isnan(half_to_float(h[2])));
  EXPECT_EQ((*out)[1].tensor.data<uint8_t>()[1], 1);
}

TEST(TrtexecJson, MalformedFilesAreOneErrorNamingTheFileAndTheProblem) {
  const std::map<std::string, DType, std::less<>> types{{"Y", DType::Float}, {"i", DType::Int32}};
  struct Case {
    const char* text;
    const char* problem;
  };
  const Case cases[] = {
      {"", "expected '['"},
      {R"([ { "name" : "Y", "dimensions" : "2x3", "values" : [ 1, 2 ] } ])", "output 'Y': 2 values for dimensions holding 6"},
      {R"([ { "name" : "Y", "dimensions" : "1", "values" : [ 1, 2 ] } ])", "more values than its dimensions hold (1)"},
      {R"([ { "name" : "Z", "dimensions" : "1", "values" : [ 1 ] } ])", "output 'Z' is not an output of the model"},
      {R"([ { "name" : "Y", "dimensions" : "2x-1", "values" : [ ] } ])", "dimensions \"2x-1\" are not AxBxC"},
      {R"([ { "name" : "Y", "dimensions" : "1", "values" : [ one ] } ])", "value 'one' is not a number"},
      {R"([ { "name" : "i", "dimensions" : "1", "values" : [ 2.5 ] } ])", "value '2.5' is not of type int32"},
      {R"([ { "name" : "i", "dimensions" : "1", "values" : [ 3000000000 ] } ])", "value '3000000000' is not of type int32"},
      {R"([ { "name" : "Y", "shape" : "1", "values" : [ 1 ] } ])", "unexpected key \"shape\""},
      {R"([ { "name" : "Y", "dimensions" : "1" } ])", "an output without \"name\", \"dimensions\" and \"values\""},
      {R"([ { "name" : "Y", "dimensions" : "1", "values" : [ 1 ] }, { "name" : "Y", "dimensions" : "1", "values" : [ 1 ] } ])",
       "output 'Y' appears twice"},
      {R"([ { "name" : "Y", "dimensions" : "1", "values" : [ 1 ] } ] trailing)", "text after the closing ']'"},
      {R"([ { "name" : "Y, "dimensions" : "1", "values" : [ 1 ] } ])", "expected '}'"},
  };
  for (const auto& c : cases) {
    TempDir dir;
    write_bytes(dir / "out.json", c.text);
    auto out = read_trtexec_outputs(dir / "out.json", types);
    ASSERT_FALSE(out.ok()) << c.text;
    EXPECT_EQ(out.error().where, (dir / "out.json").string());
    EXPECT_EQ(out.error().what.rfind("not trtexec --exportOutput JSON: ", 0), 0u) << out.error().what;
    EXPECT_NE(out.error().what.find(c.problem), std::string::npos) << c.text << "\n" << out.error().what;
    EXPECT_EQ(out.error().what.find('\n'), std::string::npos);
  }
}

TEST(TrtexecJson, RawInputFilesAreTheElementBytesInCOrder) {
  TempDir dir;
  auto t = Tensor::from_vector(DType::Float, {2, 2}, std::vector<float>{1, 2, 3, 4}).value();
  ASSERT_TRUE(write_raw_tensor(dir / "x.bin", t).ok());
  const std::string bytes = testing::read_bytes(dir / "x.bin");
  ASSERT_EQ(bytes.size(), 16u);
  float back[4];
  std::memcpy(back, bytes.data(), 16);
  EXPECT_EQ(back[3], 4.0f);
}

}  // namespace
}  // namespace reduce
