// Polygraphy's JSON data files: the fixtures written by real Polygraphy read as the arrays it
// loaded (their *_expected.npz), writing and reading back is identical, bad files are errors.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/polygraphy_json.h"
#include "core/tensor_file.h"
#include "test_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

const fs::path kFixtures = fs::path(REDUCE_SHARED_FIXTURES) / "polygraphy";

// The arrays of a fixture's *_expected.npz whose key starts with "<kind>.<iteration>.".
std::vector<NamedTensor> expected(const std::string& model, const std::string& kind, size_t iteration) {
  auto all = read_npz(kFixtures / (model + "_expected.npz"));
  EXPECT_TRUE(all.ok()) << all.error().message();
  std::vector<NamedTensor> out;
  const std::string prefix = kind + "." + std::to_string(iteration) + ".";
  for (auto& t : *all)
    if (t.name.rfind(prefix, 0) == 0) out.push_back({t.name.substr(prefix.size()), t.tensor});
  return out;
}

// Same names (in any order), dtypes, shapes and bytes.
void expect_same(std::vector<NamedTensor> got, std::vector<NamedTensor> want, const std::string& where) {
  auto by_name = [](const NamedTensor& a, const NamedTensor& b) { return a.name < b.name; };
  std::sort(got.begin(), got.end(), by_name);
  std::sort(want.begin(), want.end(), by_name);
  ASSERT_EQ(got.size(), want.size()) << where;
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_EQ(got[k].name, want[k].name) << where;
    EXPECT_EQ(got[k].tensor.dtype(), want[k].tensor.dtype()) << where << " " << got[k].name;
    EXPECT_EQ(got[k].tensor.shape(), want[k].tensor.shape()) << where << " " << got[k].name;
    ASSERT_EQ(got[k].tensor.bytes().size(), want[k].tensor.bytes().size()) << where << " " << got[k].name;
    EXPECT_TRUE(std::equal(got[k].tensor.bytes().begin(), got[k].tensor.bytes().end(), want[k].tensor.bytes().begin()))
        << where << " " << got[k].name;
  }
}

struct Fixture {
  std::string model, kind, file;
};

// CTest lists each case by its file, not by the parameter's bytes.
void PrintTo(const Fixture& f, std::ostream* os) { *os << f.file; }

class PolygraphyFixtures : public ::testing::TestWithParam<Fixture> {};

TEST_P(PolygraphyFixtures, ReadAsTheArraysPolygraphyLoaded) {
  const Fixture& f = GetParam();
  auto samples = read_polygraphy_json(kFixtures / f.file);
  ASSERT_TRUE(samples.ok()) << samples.error().message();
  ASSERT_EQ(samples->size(), 2u);  // --iterations 2
  for (size_t k = 0; k < samples->size(); ++k) {
    EXPECT_EQ((*samples)[k].source, (kFixtures / f.file).string() + " iteration " + std::to_string(k));
    expect_same((*samples)[k].tensors, expected(f.model, f.kind, k), f.file);
  }
}

TEST_P(PolygraphyFixtures, WrittenAndReadBackAreIdentical) {
  const Fixture& f = GetParam();
  auto samples = read_polygraphy_json(kFixtures / f.file);
  ASSERT_TRUE(samples.ok()) << samples.error().message();
  std::vector<std::vector<NamedTensor>> iterations;
  for (const auto& s : *samples) iterations.push_back(s.tensors);
  TempDir dir;
  const fs::path out = dir / "again.json";
  ASSERT_TRUE((f.kind == "inputs" ? write_polygraphy_inputs(out, iterations)
                                  : write_polygraphy_outputs(out, "reduce-ref", iterations)).ok());
  auto again = read_polygraphy_json(out);
  ASSERT_TRUE(again.ok()) << again.error().message();
  ASSERT_EQ(again->size(), iterations.size());
  for (size_t k = 0; k < iterations.size(); ++k) expect_same((*again)[k].tensors, iterations[k], "round trip");
}

INSTANTIATE_TEST_SUITE_P(Files, PolygraphyFixtures,
                         ::testing::Values(Fixture{"two_inputs", "inputs", "two_inputs_inputs.json"},
                                           Fixture{"two_inputs", "outputs", "two_inputs_outputs.json"},
                                           Fixture{"half", "inputs", "half_inputs.json"},
                                           Fixture{"half", "outputs", "half_outputs.json"}),
                         [](const auto& info) { return info.param.model + "_" + info.param.kind; });

TEST(PolygraphyJson, AFileReadAsOneTensorSetMustHoldOneIteration) {
  auto two = read_tensor_set(kFixtures / "half_inputs.json");
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.error().message(), (kFixtures / "half_inputs.json").string() +
                                       ": holds 2 iterations where one set of tensors is read");
  auto samples = read_polygraphy_json(kFixtures / "half_inputs.json");
  ASSERT_TRUE(samples.ok());
  TempDir dir;
  ASSERT_TRUE(write_polygraphy_inputs(dir / "one.json", {(*samples)[1].tensors}).ok());
  auto one = read_tensor_set(dir / "one.json");
  ASSERT_TRUE(one.ok()) << one.error().message();
  expect_same(*one, expected("half", "inputs", 1), "one iteration");
}

TEST(PolygraphyJson, MalformedFilesAreErrorsNamingTheFileAndTheProblem) {
  TempDir dir;
  auto error_of = [&](const std::string& text) {
    testing::write_bytes(dir / "bad.json", text);
    auto r = read_polygraphy_json(dir / "bad.json");
    EXPECT_FALSE(r.ok()) << text;
    return r.ok() ? std::string() : r.error().message();
  };
  const std::string file = (dir / "bad.json").string() + ": ";
  EXPECT_EQ(error_of("[{\"x\": "), file + "not valid JSON");
  EXPECT_EQ(error_of("{\"a\": 1}"), file + "neither a list of feed dicts (--save-inputs) nor RunResults (--save-outputs)");
  EXPECT_EQ(error_of("[]"), file + "no iterations");
  EXPECT_EQ(error_of("[[1]]"), file + "iteration 0: an iteration that is not an object of named arrays");
  EXPECT_EQ(error_of("[{\"x\": {\"array\": \"AAAA\"}}]"), file + "iteration 0: 'x': not a Polygraphy ndarray object");
  EXPECT_EQ(error_of("[{\"x\": {\"array\": \"A*==\", \"polygraphy_class\": \"ndarray\"}}]"),
            file + "iteration 0: 'x': invalid base64 at character 1");
  EXPECT_EQ(error_of("[{\"x\": {\"array\": \"AAA\", \"polygraphy_class\": \"ndarray\"}}]"),
            file + "iteration 0: 'x': base64 text of 3 characters (not a multiple of 4)");
  // Valid base64 of bytes that are not a .npy image.
  EXPECT_NE(error_of("[{\"x\": {\"array\": \"AAAA\", \"polygraphy_class\": \"ndarray\"}}]").find(file + "iteration 0: 'x': "),
            std::string::npos);
  EXPECT_EQ(error_of("{\"lst\": [], \"polygraphy_class\": \"RunResults\"}"), file + "RunResults without runners");
  EXPECT_EQ(error_of("{\"lst\": [[\"r\", [{\"runtime\": 1}]]], \"polygraphy_class\": \"RunResults\"}"),
            file + "iteration 0: no \"outputs\"");
}

}  // namespace
}  // namespace reduce
