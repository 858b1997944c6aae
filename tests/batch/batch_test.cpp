// What `reduce batch` decides without running a reduction: the models of a folder or manifest, which
// bundles are done already, buckets of the same failure, the count line and the summaries.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "batch/attempts.h"
#include "batch/manifest.h"
#include "batch/order.h"
#include "batch/release_rows.h"
#include "batch/summary.h"
#include "test_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::TempDir;

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// ONNX's test-case layout (NAME/model.onnx with NAME/test_data_set_0/): the case's folder name is the
// row's, its first data set the inputs and expected outputs; a case without one has none.
TEST(BatchItems, OnnxTestCasesAreRowsNamedAfterTheirFolderWithTheirFirstDataSet) {
  TempDir dir;
  write(dir / "cases" / "test_b" / "model.onnx", "x");
  write(dir / "cases" / "test_b" / "test_data_set_0" / "input_0.pb", "x");
  write(dir / "cases" / "test_a" / "model.onnx", "x");
  write(dir / "cases" / "notes" / "readme.txt", "x");
  write(dir / "cases" / "c.onnx", "x");
  auto items = batch_items(dir / "cases", std::string("ort@1.15.1,ort@1.17.3"));
  ASSERT_TRUE(items) << items.error().message();
  ASSERT_EQ(items->size(), 3u);
  EXPECT_EQ((*items)[0].folder, "c");
  EXPECT_TRUE((*items)[0].data.empty());
  EXPECT_EQ((*items)[1].folder, "test_a");
  EXPECT_TRUE((*items)[1].data.empty());
  EXPECT_EQ((*items)[2].folder, "test_b");
  EXPECT_EQ((*items)[2].data, dir / "cases" / "test_b" / "test_data_set_0");
}

ReleaseVerdict release(const std::string& spec, FailureKind kind, const std::string& limit = {}) {
  Verdict v;
  v.signature.kind = kind;
  v.signature.message = v.signature.normalized = kind == FailureKind::None ? "" : "output `y` is float[2,0,4]";
  v.cannot_take = limit;
  return {spec, v, ""};
}

// A release scan's row is kept as it ends and read back as it was (the same classes and changes); a
// row of another model or another list of releases is scanned again.
TEST(ReleaseRows, ARowIsKeptAndReadBackForTheSameModelAndReleasesOnly) {
  TempDir dir;
  BatchItem item{dir / "m.onnx", "", "", "", "m", dir / "data", {}, false};
  Verdict binding = Verdict::invalid_because("float16");
  binding.cannot_take = "its JavaScript binding cannot pass float16 tensors";
  ReleaseRow row{item,
                 {release("ort@1.12.1", FailureKind::Error, "IR version 9; it reads up to 8"), release("ort@1.15.1", FailureKind::Shape),
                  {"ort@1.16.3", binding, ""}, release("ort@1.17.3", FailureKind::None), {"ort@1.8.0", std::nullopt, "no binary"}},
                 {},
                 {}};
  const std::vector<std::string> specs{"ort@1.12.1", "ort@1.15.1", "ort@1.16.3", "ort@1.17.3", "ort@1.8.0"};
  ASSERT_TRUE(write_release_row(dir / "out", row).ok());
  const auto back = read_release_row(dir / "out", item, specs);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->scan.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(back->scan[i].line(), row.scan[i].line()) << i;
  EXPECT_EQ(back->row_class(), "fixed");
  EXPECT_EQ(release_changes(back->scan).size(), release_changes(row.scan).size());
  EXPECT_FALSE(read_release_row(dir / "out", item, {"ort@1.12.1", "ort@1.15.1"}));
  BatchItem other = item;
  other.model = dir / "other.onnx";
  EXPECT_FALSE(read_release_row(dir / "out", other, specs));
  write(release_row_file(dir / "out", item), "{ not json");
  EXPECT_FALSE(read_release_row(dir / "out", item, specs));
}

// Only changes of behaviour are reduced: on the failing release against the passing one, with the
// row's options, into a folder per failing release when there are several.
TEST(ReleaseRows, EachChangeOfBehaviourIsPlannedAsAReduction) {
  BatchItem item{"cases/t/model.onnx", "", "", "", "t", "cases/t/test_data_set_0", {}, true};
  ReleaseRow row{item,
                 {release("a", FailureKind::Error, "IR version 9; it reads up to 8"), release("b", FailureKind::Shape),
                  release("c", FailureKind::None), release("d", FailureKind::Mismatch)},
                 {},
                 {}};
  plan_release_reductions(row, "out", " --inputs cases/t/test_data_set_0");
  ASSERT_EQ(row.reductions.size(), 2u);  // fixed b -> c, regressed c -> d; support added a -> b is none
  EXPECT_EQ(row.reductions[0].item.engine, "b");
  EXPECT_EQ(row.reductions[0].item.reference, "c");
  EXPECT_EQ(row.reductions[0].item.folder, "t.b");
  EXPECT_EQ(row.reductions[0].command, "reduce cases/t/model.onnx --engine b --reference c --inputs cases/t/test_data_set_0 -o out/t.b");
  EXPECT_EQ(row.reductions[1].item.engine, "d");
  EXPECT_EQ(row.reductions[1].item.reference, "c");
  const std::string md = release_summary_markdown({row}, {"a", "b", "c", "d"});
  EXPECT_NE(md.find("| regressed | 1 |"), std::string::npos) << md;
  EXPECT_NE(md.find("- support added: a cannot take it (IR version 9; it reads up to 8), b runs it (and fails)"), std::string::npos) << md;
  const auto json = release_summary_json({row}, {"a", "b", "c", "d"}, "out");
  EXPECT_NE(json.find("\"regressed\": 1"), std::string::npos) << json;
}

TEST(BatchItems, AFolderGivesItsModelsOnTheEngineWithAFolderPerRow) {
  TempDir dir;
  write(dir / "models" / "b.onnx", "x");
  write(dir / "models" / "a.onnx", "x");
  write(dir / "models" / "notes.txt", "x");
  auto items = batch_items(dir / "models", std::string("opt:fp16"));
  ASSERT_TRUE(items.ok()) << items.error().message();
  ASSERT_EQ(items->size(), 2u);
  EXPECT_EQ((*items)[0].model.filename(), "a.onnx");
  EXPECT_EQ((*items)[0].engine, "opt:fp16");
  EXPECT_NE((*items)[0].folder, (*items)[1].folder);
}

TEST(BatchItems, AManifestGivesItsRowsAndOneStemTwiceGetsTwoFolders) {
  TempDir dir;
  write(dir / "x" / "model.onnx", "x");
  write(dir / "y" / "model.onnx", "x");
  write(dir / "manifest.tsv", "model\tengine\tkind\nx/model.onnx\topt:fp16\tmismatch\ny/model.onnx\topt\t\n");
  auto items = batch_items(dir / "manifest.tsv", std::nullopt);
  ASSERT_TRUE(items.ok()) << items.error().message();
  ASSERT_EQ(items->size(), 2u);
  EXPECT_EQ((*items)[0].engine, "opt:fp16");
  EXPECT_EQ((*items)[0].expected_kind, "mismatch");
  EXPECT_EQ((*items)[1].engine, "opt");
  EXPECT_NE((*items)[0].folder, (*items)[1].folder) << "x/model.onnx and y/model.onnx share a stem";
}

TEST(BatchItems, AManifestWithoutItsColumnsIsAnErrorNamingIt) {
  TempDir dir;
  write(dir / "bad.tsv", "path\tspec\nm.onnx\topt\n");
  auto items = batch_items(dir / "bad.tsv", std::nullopt);
  ASSERT_FALSE(items.ok());
  EXPECT_NE(items.error().message().find("bad.tsv"), std::string::npos) << items.error().message();
  EXPECT_FALSE(batch_items(dir / "missing", std::nullopt).ok());
}

BucketRecord bucket(const std::string& failure, const std::string& form, const std::string& ops) {
  BucketRecord b;
  b.failure = failure;
  b.form = form;
  b.ops = ops;
  b.one_minimal = true;
  return b;
}

TEST(BatchRows, ACompleteBundleIsDoneAlreadyAndAReducedRowWithoutOneIsAnError) {
  TempDir dir;
  const std::vector<BatchItem> items{{dir / "a.onnx", "opt", "", "", "a"}, {dir / "b.onnx", "opt", "", "", "b"}};
  write(dir / "out" / "a" / "bucket.txt", bucket_json_line(bucket("mismatch", "Exp", "Exp")));
  auto rows = batch_rows(items, dir / "out");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].already_done);
  ASSERT_TRUE(rows[0].bucket);
  EXPECT_EQ(rows[0].bucket->failure, "mismatch");
  EXPECT_FALSE(rows[1].already_done);
  finish_batch_row(rows[1], "reduced", dir / "out" / "b");
  EXPECT_EQ(rows[1].status, "error (exit 0)") << "reduced, but no complete bundle";
  EXPECT_EQ(batch_count_line(rows), "2 models (0 reduced now, 1 already done, 1 failed)");
}

// A resumed batch used to take an interrupted row and a NOT CONFIRMED one as done (both leave a
// bundle with bucket.txt): the first is continued from its journal, the second keeps its status.
TEST(BatchRows, InterruptedRowsResumeAndUnconfirmedOnesKeepTheirStatus) {
  TempDir dir;
  const std::vector<BatchItem> items{{dir / "a.onnx", "opt", "", "", "a"},
                                     {dir / "b.onnx", "opt", "", "", "b"},
                                     {dir / "c.onnx", "opt", "", "", "c"},
                                     {dir / "d.onnx", "opt", "", "", "d"}};
  BucketRecord stopped = bucket("mismatch", "Exp", "Exp");
  stopped.complete = false;
  write(dir / "out" / "a" / "bucket.txt", bucket_json_line(stopped));
  write(dir / "out" / "a" / "journal", "");
  write(dir / "out" / "a" / kBatchStatusName, "interrupted\n\n");
  write(dir / "out" / "b" / "bucket.txt", bucket_json_line(stopped));
  write(dir / "out" / "b" / kBatchStatusName, "not confirmed (flaky)\nmismatch\n");
  write(dir / "out" / "c" / kBatchStatusName, "model-independent (fails on every probe model)\nerror: refused\n");
  // An older reduce's bucket.txt, without "complete": not trusted.
  write(dir / "out" / "d" / "bucket.txt", R"({"failure":"mismatch","original_nodes":3,"reduced_nodes":1,"checks":4,)"
                                          R"("seconds":0.1,"one_minimal":true,"ops":"Exp:1","form":"Exp"})" "\n");
  auto rows = batch_rows(items, dir / "out");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_FALSE(rows[0].already_done);
  EXPECT_TRUE(rows[0].resume);
  EXPECT_TRUE(rows[1].already_done);
  EXPECT_EQ(rows[1].status, "not confirmed (flaky)");
  EXPECT_TRUE(rows[2].already_done);
  EXPECT_EQ(rows[2].failure, "error: refused");
  EXPECT_FALSE(rows[3].already_done);
  EXPECT_FALSE(rows[3].resume) << "no journal";
  EXPECT_TRUE(batch_row_failed(rows[1]));
  EXPECT_TRUE(batch_row_failed(rows[2]));
  for (const auto& members : batch_buckets(rows))
    EXPECT_EQ(std::count(members.begin(), members.end(), size_t{1}), 0) << "an unconfirmed reproducer is no bucket";
  // --retry reduces the settled rows again, from the start.
  auto retried = batch_rows(items, dir / "out", true);
  EXPECT_FALSE(retried[1].already_done);
  EXPECT_FALSE(retried[1].resume);
  EXPECT_FALSE(retried[2].already_done);
}

TEST(BatchRows, AFinishedRowKeepsItsStatusAndTheFailureTheReductionPrinted) {
  TempDir dir;
  BatchRow row{{dir / "m.onnx", "opt", "", "", "m"}, "", {}, false, false, {}, {}};
  finish_batch_row(row, "model-independent (fails on every probe model)", dir / "out" / "m",
                   "the engine fails the same way on every probe model\nfailure: error: refused\nprobe: ...\n");
  EXPECT_EQ(row.failure, "error: refused");
  EXPECT_EQ(read_bytes(dir / "out" / "m" / kBatchStatusName), "model-independent (fails on every probe model)\nerror: refused\n");
  const std::string md = batch_summary_markdown({row}, 0);
  EXPECT_NE(md.find("| error: refused |"), std::string::npos) << md;
}

TEST(BatchSummary, RowsOfFilesThatShareANameShowTheirBundleFolder) {
  std::vector<BatchRow> rows(2);
  rows[0].item = {"x/model.onnx", "opt", "", "", "model"};
  rows[1].item = {"y/model.onnx", "opt", "", "", "model-2"};
  rows[0].status = rows[1].status = "no failure";
  const std::string md = batch_summary_markdown(rows, 0);
  EXPECT_NE(md.find("| model.onnx | `opt`"), std::string::npos) << md;
  EXPECT_NE(md.find("| model.onnx (`model-2/`) | `opt`"), std::string::npos) << md;
}

TEST(BatchBuckets, RowsWithTheSameFailureAndFormShareABucket) {
  std::vector<BatchRow> rows(4);
  rows[0].status = rows[1].status = rows[2].status = "reduced";
  rows[0].bucket = bucket("mismatch", "Exp", "Exp");
  rows[1].bucket = bucket("crash SIGSEGV", "Conv", "Conv");
  rows[2].bucket = bucket("mismatch", "Exp", "Exp");
  rows[3].status = "no failure";
  const auto buckets = batch_buckets(rows);
  ASSERT_EQ(buckets.size(), 2u);
  size_t shared = 0;
  for (const auto& members : buckets)
    if (members.size() == 2) shared = members[0] + members[1];
  EXPECT_EQ(shared, 2u) << "rows 0 and 2";
  EXPECT_EQ(batch_count_line(rows), "4 models (3 reduced now, 0 already done, 1 without failure)");
  const std::string md = batch_summary_markdown(rows, 0);
  EXPECT_NE(md.find("2 distinct failures"), std::string::npos) << md;
}

TEST(BatchAttempts, EachTryGetsAFolderOfItsOwn) {
  TempDir dir;
  const fs::path first = make_attempt_folder(dir / "m", 1);
  const fs::path again = make_attempt_folder(dir / "m", 1);
  EXPECT_TRUE(fs::is_directory(first));
  EXPECT_TRUE(fs::is_directory(again));
  EXPECT_NE(first, again) << "a folder left by an earlier job is not reused";
  write(first / "report.md", "x");
  EXPECT_EQ(accept_attempt_folder(first, dir / "m", "reduced"), "reduced");
  EXPECT_TRUE(fs::exists(dir / "m" / "report.md"));
}

// Rows of models of `bytes` bytes each, in that order; `done` of them already reduced.
std::vector<BatchRow> rows_of_sizes(const fs::path& dir, const std::vector<size_t>& bytes, const std::vector<size_t>& done = {}) {
  std::vector<BatchRow> rows;
  for (size_t k = 0; k < bytes.size(); ++k) {
    BatchRow row;
    row.item.model = dir / ("m" + std::to_string(k) + ".onnx");
    write(row.item.model, std::string(bytes[k], 'x'));
    row.already_done = std::find(done.begin(), done.end(), k) != done.end();
    rows.push_back(row);
  }
  return rows;
}

TEST(BatchOrder, OnOneHostTheRowsNotDoneGoInManifestOrder) {
  TempDir dir;
  const auto rows = rows_of_sizes(dir.path(), {3, 10, 1, 7}, {1});
  EXPECT_EQ(reduction_order(rows, false), (std::vector<size_t>{0, 2, 3}));
}

TEST(BatchOrder, OverSeveralRanksTheLargestModelGoesFirstAndTiesKeepManifestOrder) {
  TempDir dir;
  const auto rows = rows_of_sizes(dir.path(), {3, 10, 1, 7, 3, 10}, {5});
  EXPECT_EQ(reduction_order(rows, true), (std::vector<size_t>{1, 3, 0, 4, 2}));
}

TEST(BatchOrder, OverSeveralRanksAModelThatCannotBeReadGoesFirst) {
  TempDir dir;
  auto rows = rows_of_sizes(dir.path(), {3, 10});
  BatchRow missing;
  missing.item.model = dir / "gone.onnx";
  rows.push_back(missing);
  EXPECT_EQ(reduction_order(rows, true), (std::vector<size_t>{2, 1, 0}));
}

}  // namespace
}  // namespace reduce
