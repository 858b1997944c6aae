// Every command that writes (reduce, precision, convert, compare --chart, batch) takes the same two
// guards before any work: one writer per output (a lock file never written through), and never over
// an input by any path. Refusals are exit 2 with one line; nothing of anyone's is changed.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "fault_models.h"
#include "process_support.h"
#include "core/bundle_lock.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;

const char* kFaultyEngine = "opt:fault=broadcast-batch1";  // kBroadcastChain fails on it

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

// Exit 2 and exactly one line `error: ...` that holds `subject`.
void expect_refused(const testing::ProcessRun& r, const std::string& subject) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(subject), std::string::npos) << subject << ": " << r.err;
}

std::string holder() { return "another reduce (pid " + std::to_string(::getpid()) + ") is writing this "; }

struct Fixture {
  TempDir dir;
  std::string model = testing::save_named_model(dir, testing::kBroadcastChain, "chain.onnx");
  std::string victim = (dir / "notes.txt").string();  // someone's file, never to be written
  Fixture() { write_bytes(victim, "mine"); }
};

// The commands that write a bundle folder, writing into `out`.
std::vector<std::vector<std::string>> folder_writers(const Fixture& f, const fs::path& out) {
  return {{f.model, "--engine", kFaultyEngine, "-o", out.string()},
          {"precision", f.model, "--engine", "opt:fp16,fault=broadcast-batch1", "-o", out.string()}};
}

// --- one writer per output -----------------------------------------------------------------------

TEST(OutputLock, APrecisionIntoAFolderAnotherHoldsIsRefusedNamingTheHolder) {
  TempDir dir;
  const std::string model = testing::save_named_model(dir, testing::kSquareOverflow, "norm.onnx");
  const fs::path out = dir / "out";
  const std::vector<std::string> precision{"precision", model, "--engine", "opt:fp16", "-o", out.string()};
  {
    auto held = BundleLock::acquire(out);  // as a first `reduce precision -o out` holds it
    ASSERT_TRUE(held) << held.error().message();
    expect_refused(run_reduce(precision), holder() + "bundle; wait for it or choose another -o");
    EXPECT_EQ(entries(out), std::set<std::string>{".lock"});
  }
  // Once the first has ended, the folder is free again, and the lock goes with the command.
  auto again = run_reduce(precision);
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(read_bytes(out / "precision.txt"), "square\nvar\nve\nstd\n");
  EXPECT_FALSE(fs::exists(out / ".lock"));
}

TEST(OutputLock, ConvertCompareChartAndBatchAreRefusedWhileAnotherWritesTheirOutput) {
  Fixture f;
  const fs::path converted = f.dir / "chain16.onnx", chart = f.dir / "chart.svg", batch = f.dir / "batch";
  fs::create_directories(f.dir / "models");
  testing::save_named_model(f.dir, testing::kBroadcastChain, "models/chain.onnx");
  {
    auto file = BundleLock::acquire_file(converted, "-o");
    ASSERT_TRUE(file) << file.error().message();
    expect_refused(run_reduce({"convert", f.model, "--to", "fp16", "-o", converted.string()}), holder() + "file");
  }
  {
    auto file = BundleLock::acquire_file(chart, "--chart");
    ASSERT_TRUE(file) << file.error().message();
    expect_refused(run_reduce({"compare", f.model, "--engine", kFaultyEngine, "--chart", chart.string()}),
                   holder() + "file; wait for it or choose another --chart");
  }
  {
    auto folder = BundleLock::acquire(batch);
    ASSERT_TRUE(folder) << folder.error().message();
    expect_refused(run_reduce({"batch", (f.dir / "models").string(), "--engine", kFaultyEngine, "-o", batch.string()}),
                   holder() + "bundle");
    EXPECT_EQ(entries(batch), std::set<std::string>{".lock"});
  }
  EXPECT_FALSE(fs::exists(converted));
  EXPECT_FALSE(fs::exists(chart));
}

// A chart drawn into a bundle that a running reduction holds (issue 66): refused naming the bundle;
// once the reduction has ended, drawn there.
TEST(OutputLock, AChartIntoABundleAReductionHoldsIsRefused) {
  Fixture f;
  const fs::path bundle = f.dir / "bundle", chart = bundle / "chart.svg";
  fs::create_directories(bundle);
  {
    auto held = BundleLock::acquire(bundle);  // as a running `reduce -o bundle` holds it
    ASSERT_TRUE(held) << held.error().message();
    expect_refused(run_reduce({"compare", f.model, "--engine", kFaultyEngine, "--chart", chart.string()}),
                   "another reduce (pid " + std::to_string(::getpid()) + ") is writing the bundle " + bundle.string() +
                       " that holds it; wait for it or choose another --chart");
    EXPECT_EQ(entries(bundle), std::set<std::string>{".lock"});
  }
  auto drawn = run_reduce({"compare", f.model, "--engine", kFaultyEngine, "--chart", chart.string()});
  EXPECT_EQ(drawn.exit_code, 1) << drawn.out << drawn.err;  // compare: 1, the model fails
  EXPECT_TRUE(fs::exists(chart) || drawn.out.find("chart") != std::string::npos) << drawn.out;
}

TEST(OutputLock, ALockFileThatIsAHardLinkIsNeverWrittenThrough) {
  Fixture f;
  const fs::path out = f.dir / "out";
  fs::create_directories(out);
  fs::create_hard_link(f.victim, out / ".lock");
  for (const auto& args : folder_writers(f, out)) {
    SCOPED_TRACE(args[0]);
    auto r = run_reduce(args);
    expect_refused(r, (out / ".lock").string() + ": is a hard link");
    EXPECT_EQ(read_bytes(f.victim), "mine");
  }
  // A lock file left by a holder that died (a regular file of its own) is taken over.
  fs::remove(out / ".lock");
  write_bytes(out / ".lock", "4194305\n");
  auto r = run_reduce(folder_writers(f, out)[0]);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(fs::exists(out / ".lock"));
}

TEST(OutputLock, ALockFileThatIsASymlinkIsNotFollowed) {
  Fixture f;
  const fs::path nowhere = f.dir / "created-through-the-link";
  for (const fs::path& target : {fs::path(f.victim), nowhere}) {
    const fs::path out = f.dir / ("out-" + target.filename().string());
    fs::create_directories(out);
    fs::create_symlink(target, out / ".lock");
    for (const auto& args : folder_writers(f, out)) {
      SCOPED_TRACE(args[0] + " " + target.string());
      expect_refused(run_reduce(args), (out / ".lock").string() + ": is a symbolic link");
      EXPECT_EQ(read_bytes(f.victim), "mine");
      EXPECT_FALSE(fs::exists(nowhere));
      EXPECT_TRUE(fs::is_symlink(out / ".lock"));
    }
  }
}

// --- never over an input ---------------------------------------------------------------------------

TEST(OutputOverInput, ConvertNeverReplacesItsModelByAnyPath) {
  Fixture f;
  const std::string before = read_bytes(f.model);
  fs::create_symlink(f.model, f.dir / "link.onnx");
  fs::create_hard_link(f.model, f.dir / "hard.onnx");
  for (const fs::path& out : {fs::path(f.model), f.dir / "." / "chain.onnx", f.dir / "link.onnx", f.dir / "hard.onnx"}) {
    SCOPED_TRACE(out.string());
    auto r = run_reduce({"convert", f.model, "--to", "fp16", "-o", out.string()});
    expect_refused(r, out.string() + ": is the input model");
    EXPECT_EQ(read_bytes(f.model), before);
    EXPECT_EQ(read_bytes(out), before);
  }
  EXPECT_TRUE(fs::is_symlink(f.dir / "link.onnx"));
}

TEST(OutputOverInput, CompareNeverDrawsItsChartOverAModel) {
  Fixture f;
  const std::string before = read_bytes(f.model);
  fs::create_symlink(f.model, f.dir / "chart.svg");
  for (const fs::path& chart : {fs::path(f.model), f.dir / "chart.svg"}) {
    SCOPED_TRACE(chart.string());
    expect_refused(run_reduce({"compare", f.model, "--engine", kFaultyEngine, "--chart", chart.string()}),
                   chart.string() + ": is the input model");
    EXPECT_EQ(read_bytes(f.model), before);
  }
}

// A model's external data is the model too (issue 66): convert, compare --chart and a reduction never
// write over the weights file of a real export, by its name or through a link; the weights stay.
TEST(OutputOverInput, NoCommandWritesOverTheModelsExternalData) {
  TempDir dir;
  const fs::path src = fs::path(REDUCE_SHARED_FIXTURES) / "exported" / "vit_dynamo_external";
  fs::copy_file(src / "model.onnx", dir / "model.onnx");
  fs::copy_file(src / "model.onnx.data", dir / "model.onnx.data");
  const std::string model = (dir / "model.onnx").string(), data = (dir / "model.onnx.data").string();
  const std::string before = read_bytes(data);
  fs::create_symlink(data, dir / "weights.bin");
  for (const std::string& out : {data, (dir / "weights.bin").string(), (dir / "." / "model.onnx.data").string()}) {
    SCOPED_TRACE(out);
    expect_refused(run_reduce({"convert", model, "--to", "fp16", "-o", out}), out + ": is the external data of the input model");
    expect_refused(run_reduce({"compare", model, "--engine", "opt:fp16", "--chart", out}),
                   out + ": is the external data of the input model");
    EXPECT_EQ(read_bytes(data), before);
  }
}

TEST(OutputOverInput, BatchRefusesAnOutputWhereARowsBundleWouldHoldItsModel) {
  Fixture f;
  // A row's bundle is OUT/<model stem>/: here OUT/chain/, the very folder that holds chain/chain.onnx.
  fs::create_directories(f.dir / "chain");
  const std::string model = testing::save_named_model(f.dir, testing::kBroadcastChain, "chain/chain.onnx");
  auto r = run_reduce({"batch", (f.dir / "chain").string(), "--engine", kFaultyEngine, "-o", f.dir.path().string()});
  expect_refused(r, (f.dir / "chain").string() + ": output folder holds the input model " + model);
  EXPECT_FALSE(fs::exists(f.dir / "summary.md"));
  EXPECT_EQ(entries(f.dir / "chain"), std::set<std::string>{"chain.onnx"});
}

}  // namespace
}  // namespace reduce
