// `reduce batch` end to end: every model is its own reduction, so a model that does not fail, an
// invalid model or a crashing engine gives its own row and never stops the models after it.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

#include "fault_models.h"
#include "process_support.h"

namespace reduce {
namespace {

using testing::read_bytes;
using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;

struct Row {
  std::string model, engine;
};

// A manifest of `rows` (models relative to the folder) in `dir`.
std::string write_manifest(const TempDir& dir, const std::vector<Row>& rows) {
  std::string tsv = "model\tengine\n";
  for (const auto& r : rows) tsv += r.model + "\t" + r.engine + "\n";
  write_bytes(dir / "manifest.tsv", tsv);
  return (dir / "manifest.tsv").string();
}

// a.onnxtxt does not fail on its engine, b.onnxtxt (the same model) does.
std::string passing_then_failing(const TempDir& dir) {
  write_bytes(dir / "a.onnxtxt", testing::kBroadcastChain);
  write_bytes(dir / "b.onnxtxt", testing::kBroadcastChain);
  return write_manifest(dir, {{"a.onnxtxt", "ref"}, {"b.onnxtxt", "opt:fault=broadcast-batch1"}});
}

// summary.json's results by model file name.
std::map<std::string, nlohmann::json> results_by_model(const std::filesystem::path& out) {
  const auto summary = nlohmann::json::parse(read_bytes(out / "summary.json"));
  std::map<std::string, nlohmann::json> rows;
  for (const auto& r : summary.at("results"))
    rows[std::filesystem::path(r.at("model").get<std::string>()).filename().string()] = r;
  return rows;
}

TEST(BatchCli, EachRowIsRightForFailingPassingInvalidAndCrashingModels) {
  TempDir dir;
  write_bytes(dir / "failing.onnxtxt", testing::kBroadcastChain);
  write_bytes(dir / "passing.onnxtxt", testing::kBroadcastChain);
  write_bytes(dir / "invalid.onnx", "this is not a protobuf");
  write_bytes(dir / "crashing.onnxtxt", testing::kBroadcastChain);
  // Crashes on models with a Tanh; `always.sh` crashes on any model (a broken setup).
  write_bytes(dir / "crash.sh", "#!/bin/sh\ngrep -aq Tanh \"$1\" && kill -SEGV $$\nexit 0\n");
  write_bytes(dir / "always.onnxtxt", testing::kBroadcastChain);
  write_bytes(dir / "always.sh", "#!/bin/sh\nkill -SEGV $$\n");
  const std::string manifest = write_manifest(dir, {{"failing.onnxtxt", "opt:fault=broadcast-batch1"},
                                                    {"passing.onnxtxt", "ref"},
                                                    {"invalid.onnx", "opt"},
                                                    {"crashing.onnxtxt", "check:sh " + (dir / "crash.sh").string() + " {model}"},
                                                    {"always.onnxtxt", "check:sh " + (dir / "always.sh").string()}});
  const auto out = dir / "out";
  auto r = run_reduce({"batch", manifest, "-o", out.string(), "-j", "2"});
  ASSERT_EQ(r.exit_code, 1) << "rows failed\n" << r.out << r.err;
  EXPECT_NE(r.out.find("5 models (2 reduced now, 0 already done, 1 without failure, 2 failed), 2 buckets"),
            std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("interrupted"), std::string::npos) << r.err;

  auto rows = results_by_model(out);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows["failing.onnxtxt"].at("status"), "reduced");
  EXPECT_EQ(rows["failing.onnxtxt"].at("failure"), "mismatch");
  EXPECT_EQ(rows["failing.onnxtxt"].at("op_types"), "Mul:1");
  EXPECT_EQ(rows["passing.onnxtxt"].at("status"), "no failure");
  EXPECT_EQ(rows["invalid.onnx"].at("status"), "error (exit 2)");
  EXPECT_EQ(rows["crashing.onnxtxt"].at("status"), "reduced");
  EXPECT_EQ(rows["crashing.onnxtxt"].at("failure"), "crash: signal 11");
  EXPECT_EQ(rows["always.onnxtxt"].at("status"), "model-independent (fails on every probe model)");
  EXPECT_EQ(rows["always.onnxtxt"].at("failure").get<std::string>().rfind("crash", 0), 0u) << rows["always.onnxtxt"].dump();
  EXPECT_FALSE(std::filesystem::exists(out / "always" / "model.onnx"));
  EXPECT_TRUE(std::filesystem::exists(out / "failing" / "model.onnx"));
  EXPECT_TRUE(std::filesystem::exists(out / "crashing" / "model.onnx"));
  EXPECT_FALSE(std::filesystem::exists(out / "passing" / "report.json"));
}

// Two rows with one stem (x/model and y/model, here one on two engines too) used to share
// OUT/model/: the second overwrote the first and both rows showed its failure. Each row now has
// its own bundle, and a second run resumes both.
TEST(BatchCli, RowsWithTheSameStemGetBundlesOfTheirOwn) {
  TempDir dir;
  std::filesystem::create_directories(dir / "x");
  std::filesystem::create_directories(dir / "y");
  write_bytes(dir / "x" / "model.onnxtxt", testing::kBroadcastChain);
  write_bytes(dir / "y" / "model.onnxtxt", testing::kBroadcastChain);
  write_bytes(dir / "crash.sh", "#!/bin/sh\nif grep -aq Tanh \"$1\"; then echo 'engine: tanh refused'; exit 1; fi\nexit 0\n");
  const std::string manifest = write_manifest(
      dir, {{"x/model.onnxtxt", "opt:fault=broadcast-batch1"}, {"y/model.onnxtxt", "check:sh " + (dir / "crash.sh").string() + " {model}"}});
  const auto out = dir / "out";
  auto r = run_reduce({"batch", manifest, "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto summary = nlohmann::json::parse(read_bytes(out / "summary.json"));
  ASSERT_EQ(summary.at("results").size(), 2u);
  std::set<std::string> bundles, failures;
  for (const auto& row : summary.at("results")) {
    bundles.insert(row.at("bundle").get<std::string>());
    failures.insert(row.at("failure").get<std::string>());
  }
  EXPECT_EQ(bundles, (std::set<std::string>{(out / "model").string(), (out / "model-2").string()}));
  EXPECT_EQ(failures.size(), 2u) << summary.dump(2);
  EXPECT_NE(read_bytes(out / "model-2" / "report.json").find("Tanh"), std::string::npos);
  auto again = run_reduce({"batch", manifest, "-o", out.string()});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("2 already done"), std::string::npos) << again.out;
}

TEST(BatchCli, AModelThatDoesNotFailDoesNotStopTheNextOne) {
  TempDir dir;
  const std::string manifest = passing_then_failing(dir);
  const auto out = dir / "out";
  auto r = run_reduce({"batch", manifest, "-o", out.string(), "-j", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("interrupted"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("2 models (1 reduced now, 0 already done, 1 without failure), 1 buckets"), std::string::npos)
      << r.out;
  auto rows = results_by_model(out);
  EXPECT_EQ(rows["a.onnxtxt"].at("status"), "no failure");
  EXPECT_EQ(rows["b.onnxtxt"].at("status"), "reduced");
  EXPECT_EQ(rows["b.onnxtxt"].at("reduced_nodes"), 1);
  // The bundle of b still fails on its own inputs.
  auto check = run_reduce({"check", (out / "b" / "model.onnx").string(), "--engine", "opt:fault=broadcast-batch1",
                           "--inputs", (out / "b" / "inputs").string()});
  EXPECT_EQ(check.exit_code, 1) << check.out << check.err;
}

TEST(BatchCli, ASecondRunSkipsTheReducedModelsAndRetriesTheOthers) {
  TempDir dir;
  const std::string manifest = passing_then_failing(dir);
  const auto out = dir / "out";
  ASSERT_EQ(run_reduce({"batch", manifest, "-o", out.string(), "-j", "2"}).exit_code, 0);
  auto again = run_reduce({"batch", manifest, "-o", out.string(), "-j", "2"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("2 models (0 reduced now, 1 already done, 1 without failure), 1 buckets"), std::string::npos)
      << again.out;
  EXPECT_EQ(results_by_model(out)["b.onnxtxt"].at("status"), "reduced");
}

// A row interrupted (SIGTERM to its reduction) leaves a bundle "interrupted: best reproducer so far"
// with a journal: the next batch goes on from the journal instead of taking the row as done.
TEST(BatchCli, AnInterruptedRowIsResumedFromItsJournalNotTakenAsDone) {
  TempDir dir;
  write_bytes(dir / "m.onnxtxt", testing::kBroadcastChain);
  write_bytes(dir / "kill_once", "");
  // The check's parent is the reduction: stopped once, at its sixth check (after the probes).
  const std::string d = dir.path().string();
  write_bytes(dir / "tanh.sh", "#!/bin/sh\necho run >> '" + d + "/runs'\n"
                               "if [ -f '" + d + "/kill_once' ] && [ $(wc -l < '" + d + "/runs') -ge 6 ]; then rm '" + d +
                               "/kill_once'; kill -TERM $PPID; sleep 1; fi\n"
                               "if grep -aq Tanh \"$1\"; then echo 'engine: tanh refused'; exit 1; fi\nexit 0\n");
  const std::string manifest = write_manifest(dir, {{"m.onnxtxt", "check:sh " + (dir / "tanh.sh").string() + " {model}"}});
  const auto out = dir / "out";
  auto first = run_reduce({"batch", manifest, "-o", out.string(), "-j", "1"});
  EXPECT_EQ(results_by_model(out)["m.onnxtxt"].at("status"), "interrupted") << first.out << first.err;
  auto second = run_reduce({"batch", manifest, "-o", out.string(), "-j", "1"});
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_NE(second.err.find("resuming from"), std::string::npos) << second.err;
  EXPECT_NE(second.out.find("1 models (1 reduced now, 0 already done)"), std::string::npos) << second.out;
  auto rows = results_by_model(out);
  EXPECT_EQ(rows["m.onnxtxt"].at("status"), "reduced");
  EXPECT_EQ(rows["m.onnxtxt"].at("reduced_nodes"), 1);
  // Done now: a third run skips it.
  auto third = run_reduce({"batch", manifest, "-o", out.string(), "-j", "1"});
  EXPECT_NE(third.out.find("1 already done"), std::string::npos) << third.out;
}

// The reduction process of the first model is killed (as the kernel's OOM killer would, or a crash
// inside reduce itself): that model's row says so, and the next model is still reduced.
TEST(BatchCli, AReductionProcessThatDiesIsOnlyItsOwnRow) {
  TempDir dir;
  write_bytes(dir / "killed.onnxtxt", testing::kBroadcastChain);
  write_bytes(dir / "failing.onnxtxt", testing::kBroadcastChain);
  // The check script's parent is the process reducing the model.
  write_bytes(dir / "kill_reduction.sh", "#!/bin/sh\nkill -KILL $PPID\nexit 1\n");
  const std::string manifest = write_manifest(dir, {{"killed.onnxtxt", "check:sh " + (dir / "kill_reduction.sh").string()},
                                                    {"failing.onnxtxt", "opt:fault=broadcast-batch1"}});
  const auto out = dir / "out";
  auto r = run_reduce({"batch", manifest, "-o", out.string(), "-j", "2"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("2 models (1 reduced now, 0 already done, 1 failed), 1 buckets"), std::string::npos) << r.out;
  auto rows = results_by_model(out);
  EXPECT_EQ(rows["killed.onnxtxt"].at("status").get<std::string>().rfind("error (killed by SIGKILL", 0), 0u)
      << rows["killed.onnxtxt"].dump();
  EXPECT_EQ(rows["failing.onnxtxt"].at("status"), "reduced");
  EXPECT_EQ(rows["failing.onnxtxt"].at("failure"), "mismatch");
}

// A bad --reduce-option used to fail every row and exit 0 with a summary of failures: it is the
// batch's usage error, said once, before any folder is made.
TEST(BatchCli, ABadReduceOptionIsTheBatchsUsageErrorBeforeAnyWork) {
  TempDir dir;
  const std::string manifest = passing_then_failing(dir);
  for (const char* bad : {"--reduce-option=--atol=nan", "--reduce-option=--no-such-option"}) {
    auto r = run_reduce({"batch", manifest, "-o", (dir / "out").string(), bad});
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.out << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "out")) << bad;
  }
}

// So is a bad --engine (issue 66), or a bad release in a list of them (a release scan, issue 67); no row runs.
TEST(BatchCli, ABadEngineIsTheBatchsUsageErrorBeforeAnyWork) {
  TempDir dir;
  std::filesystem::create_directories(dir / "models");
  testing::save_named_model(dir, testing::kBroadcastChain, "models/chain.onnx");
  for (const char* bad : {"ort@1.14.0,ort@1.x", "nope", "ort@1.14.0,nope"}) {
    auto r = run_reduce({"batch", (dir / "models").string(), "--engine", bad, "-o", (dir / "out").string()});
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.out << r.err;
    EXPECT_EQ(r.err.rfind("error: --engine: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "out")) << bad;
  }
}

}  // namespace
}  // namespace reduce
