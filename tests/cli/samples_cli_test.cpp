// Several input samples (a folder of test_data_set_N folders, a folder of .npz archives, --inputs
// repeated): a check fails when any sample fails, a reduction keeps the failure on the first sample
// it occurs on, `reduce precision` needs every sample to pass; a bad sample is exit 2 with one line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/tensor_file.h"
#include "fault_models.h"
#include "process_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::run_reduce;
using testing::TempDir;

// The square of the centered values overflows FP16 when X is large enough: |X| < 0.1 passes on
// opt:fp16, |X| < 0.5 needs the square and its mean in FP32, |X| < 1 also the Add and the Sqrt.
fs::path save_square_overflow(const TempDir& dir) {
  return testing::save_named_model(dir, testing::kSquareOverflow, "norm.onnx");
}

// Seeded inputs uniform in [-r, r), saved by `reduce run` into `folder` (input_0.pb).
void save_sample(const fs::path& model, const fs::path& folder, const std::string& r, const std::string& seed = "0") {
  auto run = run_reduce({"run", model.string(), "--input-range", "X:-" + r + "," + r, "--seed", seed, "--save-inputs",
                         folder.string(), "--save-format", "pb"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
}

TEST(SamplesCli, CheckFailsWhenAnySampleFailsAndSaysWhichOnes) {
  TempDir dir;
  const fs::path model = save_square_overflow(dir);
  save_sample(model, dir / "set" / "test_data_set_0", "0.1");
  save_sample(model, dir / "set" / "test_data_set_1", "1");
  save_sample(model, dir / "set" / "test_data_set_2", "0.1", "7");
  auto r = run_reduce({"check", model.string(), "--engine", "opt:fp16", "--inputs", (dir / "set").string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("samples: 3, going on with #1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("#0 " + (dir / "set" / "test_data_set_0").string() + ": PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("#1 " + (dir / "set" / "test_data_set_1").string() + ": FAIL (mismatch)"), std::string::npos);
  EXPECT_NE(r.out.find("#2 " + (dir / "set" / "test_data_set_2").string() + ": PASS"), std::string::npos) << r.out;
  // The passing samples alone, given as --inputs twice: the model passes.
  auto passing = run_reduce({"check", model.string(), "--engine", "opt:fp16", "--inputs",
                             (dir / "set" / "test_data_set_0").string(), "--inputs",
                             (dir / "set" / "test_data_set_2").string()});
  EXPECT_EQ(passing.exit_code, 0) << passing.out << passing.err;
}

TEST(SamplesCli, ReductionKeepsTheFailureOnTheFirstSampleItOccursOn) {
  TempDir dir;
  const fs::path model = save_square_overflow(dir);
  // One .npz archive per sample: a small one that passes, then a large one that fails.
  fs::create_directories(dir / "npz");
  for (const auto& [name, r] : {std::pair{"a", "0.1"}, std::pair{"b", "1"}}) {
    save_sample(model, dir / name, r);
    auto t = read_tensor_pb(dir / name / "input_0.pb");
    ASSERT_TRUE(t.ok());
    ASSERT_TRUE(write_npz(dir / "npz" / (std::string(name) + ".npz"), {*t}, false).ok());
  }
  const fs::path out = dir / "bundle";
  auto r = run_reduce({model.string(), "--engine", "opt:fp16", "--inputs", (dir / "npz").string(), "-o",
                       out.string()});
  ASSERT_EQ(r.exit_code, 8) << r.out << r.err;  // FP16 rounding
  const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
  const auto& samples = report.at("input_samples");
  EXPECT_EQ(samples.at("count"), 2);
  EXPECT_EQ(samples.at("used"), 1);
  EXPECT_EQ(samples.at("source"), (dir / "npz" / "b.npz").string());
  EXPECT_EQ(samples.at("failing"), nlohmann::json::array({1}));
  EXPECT_NE(read_bytes(out / "report.md").find("reduced on #1"), std::string::npos);
  // The bundle's reproducer fails the same way on the bundle's own inputs (the failing sample's).
  auto check = run_reduce({"check", (out / "model.onnx").string(), "--engine", "opt:fp16", "--inputs",
                           (out / "inputs").string()});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
  EXPECT_NE(check.out.find("FAIL (mismatch)"), std::string::npos) << check.out;
  // No sample fails: nothing to reduce (exit 3), nothing written.
  auto passes = run_reduce({model.string(), "--engine", "opt:fp16", "--inputs",
                            (dir / "npz" / "a.npz").string(), "--inputs", (dir / "a").string(), "-o",
                            (dir / "none").string()});
  EXPECT_EQ(passes.exit_code, 3) << passes.out << passes.err;
  EXPECT_FALSE(fs::exists(dir / "none" / "report.json"));
}

TEST(SamplesCli, PrecisionFindsTheSetWithWhichEverySamplePasses) {
  TempDir dir;
  const fs::path model = save_square_overflow(dir);
  save_sample(model, dir / "small", "0.1");
  save_sample(model, dir / "medium", "0.5");
  save_sample(model, dir / "large", "1");
  // On the medium sample alone the square and its mean must stay in FP32.
  auto medium = run_reduce({"precision", model.string(), "--engine", "opt:fp16", "--inputs",
                            (dir / "medium").string(), "-o", (dir / "p-medium").string()});
  ASSERT_EQ(medium.exit_code, 0) << medium.out << medium.err;
  EXPECT_EQ(read_bytes(dir / "p-medium" / "precision.txt"), "square\nvar\n");
  // With every sample, the set must also hold the large sample's values: the same for -j 1 and 4.
  for (const char* jobs : {"1", "4"}) {
    const fs::path out = dir / (std::string("p-all-") + jobs);
    auto all = run_reduce({"precision", model.string(), "--engine", "opt:fp16", "--inputs", (dir / "small").string(),
                           "--inputs", (dir / "medium").string(), "--inputs", (dir / "large").string(), "-j", jobs,
                           "-o", out.string()});
    ASSERT_EQ(all.exit_code, 0) << all.out << all.err;
    EXPECT_EQ(read_bytes(out / "precision.txt"), "square\nvar\nve\nstd\n") << "-j " << jobs;
    EXPECT_NE(all.out.find("passes on all 3 samples"), std::string::npos) << all.out;
    const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
    EXPECT_EQ(report.at("samples"), 3);
    EXPECT_EQ(report.at("failing_sample"), 1);
    EXPECT_TRUE(report.at("one_minimal").get<bool>());
  }
  // The medium sample's set is not enough for the large one.
  EXPECT_EQ(run_reduce({"check", model.string(), "--engine", "opt:fp16,fp32=square+var", "--inputs",
                        (dir / "large").string()}).exit_code, 1);
  // Only the small sample: nothing to keep in FP32 (exit 3).
  EXPECT_EQ(run_reduce({"precision", model.string(), "--engine", "opt:fp16", "--inputs", (dir / "small").string()})
                .exit_code, 3);
}

TEST(SamplesCli, RunRunsEverySampleAndSavesEachAsATestDataSet) {
  TempDir dir;
  const fs::path model = save_square_overflow(dir);
  save_sample(model, dir / "a", "0.1");
  save_sample(model, dir / "b", "1");
  auto r = run_reduce({"run", model.string(), "--inputs", (dir / "a").string(), "--inputs", (dir / "b").string(),
                       "--save-outputs", (dir / "out").string(), "--save-format", "pb"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sample #0: " + (dir / "a").string()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sample #1: " + (dir / "b").string()), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(dir / "out" / "test_data_set_0" / "output_0.pb"));
  EXPECT_TRUE(fs::exists(dir / "out" / "test_data_set_1" / "output_0.pb"));
}

// A lone tensor whose name is no input of the model is bound by position, and reduce says so (issue
// 66); named after the input, nothing is said.
TEST(SamplesCli, ALoneTensorNamedAfterNoInputIsBoundByPositionWithANote) {
  TempDir dir;
  const fs::path model = save_square_overflow(dir);
  save_sample(model, dir / "a", "0.1");
  auto t = read_tensor_pb(dir / "a" / "input_0.pb");
  ASSERT_TRUE(t.ok());
  NamedTensor other = *t;
  other.name = "pixels";
  ASSERT_TRUE(write_npz(dir / "other.npz", {other}, false).ok());
  auto r = run_reduce({"check", model.string(), "--engine", "opt", "--inputs", (dir / "other.npz").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("note: " + (dir / "other.npz").string() + ": its one tensor 'pixels' names no input of the model; "
                       "bound by position to input 'X'"), std::string::npos) << r.err;
  NamedTensor named = *t;
  named.name = "X";
  ASSERT_TRUE(write_npz(dir / "named.npz", {named}, false).ok());
  auto quiet = run_reduce({"check", model.string(), "--engine", "opt", "--inputs", (dir / "named.npz").string()});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.out << quiet.err;
  EXPECT_EQ(quiet.err.find("bound by position"), std::string::npos) << quiet.err;
}

TEST(SamplesCli, ABadSampleIsExit2WithOneLineNamingIt) {
  TempDir dir;
  const fs::path model = save_square_overflow(dir);
  save_sample(model, dir / "set" / "test_data_set_0", "0.1");
  // A sample of another shape, in a folder of samples and given alone.
  auto wrong = Tensor::allocate(DType::Float, {4, 15});
  ASSERT_TRUE(wrong.ok());
  fs::create_directories(dir / "set" / "test_data_set_1");
  ASSERT_TRUE(write_tensor_pb(dir / "set" / "test_data_set_1" / "input_0.pb", "X", *wrong).ok());
  const std::string bad = (dir / "set" / "test_data_set_1").string();
  for (const char* command : {"check", "reduce", "precision", "compare", "run"}) {
    std::vector<std::string> args{model.string(), "--engine", "opt:fp16", "--inputs", (dir / "set").string()};
    if (std::string(command) == "reduce") args.insert(args.end(), {"-o", (dir / "bundle").string()});
    else args.insert(args.begin(), command);
    auto r = run_reduce(args);
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.out << r.err;
    EXPECT_EQ(r.err, "error: " + bad + ": input 'X' is float[4,15] but the model declares float[4,16]\n") << command;
  }
  EXPECT_FALSE(fs::exists(dir / "bundle" / "model.onnx"));
  // A gap in the numbering, and an empty folder of samples given twice.
  fs::create_directories(dir / "gap" / "test_data_set_1");
  auto gap = run_reduce({"check", model.string(), "--engine", "opt:fp16", "--inputs", (dir / "gap").string()});
  EXPECT_EQ(gap.exit_code, 2);
  EXPECT_EQ(gap.err, "error: " + (dir / "gap").string() + ": missing test_data_set_0\n");
  auto missing = run_reduce({"check", model.string(), "--engine", "opt:fp16", "--inputs",
                             (dir / "set" / "test_data_set_0").string(), "--inputs", (dir / "absent").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "error: " + (dir / "absent").string() + ": no such file or folder\n");
}

// A few kilobytes of .npz that inflate to megabytes (gigabytes, in the wild): --max-memory bounds
// them before anything is allocated, with one line naming the archive and the entry.
TEST(SamplesCli, AnArchiveThatInflatesBeyondMaxMemoryIsRefusedNamingTheEntry) {
  TempDir dir;
  const fs::path model = save_square_overflow(dir);
  auto x = Tensor::allocate(DType::Float, {4, 16});
  auto zeros = Tensor::allocate(DType::Float, {1024, 1024});
  ASSERT_TRUE(x.ok() && zeros.ok());
  const fs::path bomb = dir / "bomb.npz";
  ASSERT_TRUE(write_npz(bomb, {{"X", *x}, {"pad", *zeros}}, true).ok());
  ASSERT_LT(fs::file_size(bomb), 16384u);
  for (const char* command : {"check", "run", "compare"}) {
    auto r = run_reduce({command, model.string(), "--engine", "opt:fp16", "--inputs", bomb.string(), "--max-memory", "1M"});
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.out << r.err;
    EXPECT_EQ(r.err.rfind("error: " + bomb.string() + ": entry 'pad.npy': inflates to 4194432 bytes", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace reduce
