// The report model's JSON renderer and the journal: values read back exactly, keys keep their
// names, a journal line cut short is skipped.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <limits>

#include "session/journal.h"
#include "report/report.h"
#include "test_support.h"

namespace reduce {
namespace {

using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;

ReductionReport sample_report() {
  ReductionReport r;
  r.model_path = "m.onnx";
  r.original_nodes = 50;
  r.reduced_nodes = 2;
  r.reduced_op_types = {{"Conv", 1}, {"BatchNormalization", 1}};
  r.filled_weights = {{"w", 0.1}, {"b", 1.0 / 3.0}};
  r.failure.kind = FailureKind::Mismatch;
  r.checks = 61;
  r.engine_runs = 39;
  r.seconds = 0.068907333123456789;
  r.passes = {{"certify", 3, 0, 1.2345678901234567e-05}};
  return r;
}

TEST(ReportJson, DoublesReadBackExactly) {
  const auto j = nlohmann::json::parse(report_json(sample_report()));
  EXPECT_EQ(j.at("seconds").get<double>(), 0.068907333123456789);
  EXPECT_EQ(j.at("reduced").at("filled_weights").at("b").get<double>(), 1.0 / 3.0);
  EXPECT_EQ(j.at("passes").at(0).at("seconds").get<double>(), 1.2345678901234567e-05);
}

TEST(ReportJson, HasEveryKeyWithEngineRunsNextToChecks) {
  const std::string text = report_json(sample_report());
  const auto j = nlohmann::json::parse(text);
  for (const char* key : {"original", "reduced", "failure", "engine", "reference", "tolerance", "strategy", "jobs",
                          "checks", "engine_runs", "cache_hits", "slipped", "invalid", "seconds", "one_minimal",
                          "interrupted", "passes", "command", "environment", "bundle_bytes"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j.at("checks"), 61);
  EXPECT_EQ(j.at("engine_runs"), 39);
  EXPECT_NE(text.find("\"checks\": 61,\n  \"engine_runs\": 39,"), std::string::npos) << text;
}

TEST(ReportJson, InvalidUtf8InAnEngineMessageIsReplacedNotThrown) {
  ReductionReport r = sample_report();
  r.failure.message = "bad byte \xff here";
  const auto j = nlohmann::json::parse(report_json(r));
  EXPECT_NE(j.at("failure").at("message").get<std::string>().find("here"), std::string::npos);
}

TEST(ReportJson, ErrorSourcesNameTheNodesAndWriteNonFiniteLocalErrorAsNull) {
  ReductionReport r = sample_report();
  r.error_sources = {{"ln/square", "Mul", "sq", std::numeric_limits<double>::infinity()}, {"", "Add", "a", 2.5}};
  r.nonfinite_born = r.error_sources[0];
  const auto j = nlohmann::json::parse(report_json(r));
  ASSERT_EQ(j.at("error_sources").size(), 2u);
  EXPECT_EQ(j.at("error_sources").at(0).at("node"), "ln/square");
  EXPECT_TRUE(j.at("error_sources").at(0).at("local_error").is_null());
  EXPECT_EQ(j.at("error_sources").at(1).at("local_error").get<double>(), 2.5);
  EXPECT_EQ(j.at("nonfinite_born").at("value"), "sq");
  // Not traced (not a numeric failure): an empty list and null.
  const auto plain = nlohmann::json::parse(report_json(sample_report()));
  EXPECT_TRUE(plain.at("error_sources").empty());
  EXPECT_TRUE(plain.at("nonfinite_born").is_null());
}

TEST(ReportMarkdown, HoldsTheErrorOriginSectionWhenTraced) {
  ReductionReport r = sample_report();
  EXPECT_EQ(report_markdown(r).find("Where error is born"), std::string::npos);
  r.error_origin = "## Where error is born (original model)\n\n";
  EXPECT_NE(report_markdown(r).find("## Where error is born (original model)"), std::string::npos);
}

// The check to paste repeats the reduction's reference when it is not the default one, and the
// header says which per-type tolerances applied.
TEST(ReportMarkdown, TheReproduceLineCarriesANonDefaultReferenceAndTheTypedTolerances) {
  ReductionReport r = sample_report();
  r.engine = "ort";
  r.reference = "ref";
  r.tolerance = default_tolerance(Precision::FP32);
  std::string md = report_markdown(r);
  EXPECT_NE(md.find("reduce check model.onnx --engine 'ort' --inputs inputs"), std::string::npos) << md;
  EXPECT_NE(md.find("float16 outputs atol 0.01 rtol 0.01"), std::string::npos) << md;
  r.reference = "ort:opt=disable";
  md = report_markdown(r);
  EXPECT_NE(md.find("reduce check model.onnx --engine 'ort' --reference 'ort:opt=disable' --inputs inputs"), std::string::npos)
      << md;
  const auto j = nlohmann::json::parse(report_json(r));
  EXPECT_EQ(j["tolerance"]["by_element_type"]["float16"]["atol"], 1e-2) << j.dump(2);
}

TEST(Bucket, ReadsBackWhatItWrote) {
  const BucketRecord b = bucket_record(sample_report(), "Conv<>(in).0\nBatchNormalization<>(0).0\n");
  const auto back = parse_bucket(bucket_json_line(b));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->failure, "mismatch");
  EXPECT_EQ(back->ops, "BatchNormalization:1 Conv:1");
  EXPECT_EQ(back->form, b.form);
  EXPECT_EQ(back->seconds, b.seconds);
  EXPECT_FALSE(parse_bucket("failure mismatch\nnodes 50 2\n"));
}

// What a journal belongs to, as reduction_identity gives it (shortened).
const ReductionIdentity kIdentity{{{"model", "fnv1a64:00000000000000aa"}, {"engine", "opt:fault=broadcast-batch1"},
                                   {"tolerance", "atol 0.0001 rtol 0.001 elemwise"}}};

TEST(Journal, ResumesFromTheLastCandidateWithOddNamesAndExactValues) {
  TempDir dir;
  Candidate first;
  first.nodes = {0, 1, 2};
  Candidate last;
  last.nodes = {2};
  last.frozen = {"a,b:c=d %e"};
  last.outputs = {"y\ttab"};
  last.input_shapes["x y"] = {1, 3};
  last.filled["w:0"] = 0.1 + 0.2;
  last.dropped_attributes = {{2, "kernel_shape"}};
  ASSERT_TRUE(append_journal(dir.path(), kIdentity, first).ok());
  ASSERT_TRUE(append_journal(dir.path(), kIdentity, last).ok());
  auto read = read_journal(dir.path());
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(read->nodes, last.nodes);
  EXPECT_EQ(read->frozen, last.frozen);
  EXPECT_EQ(read->outputs, last.outputs);
  EXPECT_EQ(read->input_shapes, last.input_shapes);
  EXPECT_EQ(read->filled.at("w:0"), 0.1 + 0.2);
  EXPECT_EQ(read->dropped_attributes, last.dropped_attributes);
}

TEST(Journal, TheSimplificationRunsSpentComeBackForResume) {
  TempDir dir;
  Candidate c;
  c.nodes = {1, 2};
  JournalStamp stamp;
  stamp.simplify_runs = 3;
  ASSERT_TRUE(append_journal(dir.path(), kIdentity, c, stamp).ok());
  auto read = read_journal_entry(dir.path());
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(read->candidate.nodes, c.nodes);
  EXPECT_EQ(read->simplify_runs, 3u);
  // A journal written before the runs were recorded: none spent.
  write_bytes(dir / "journal", "{\"candidate\": " + candidate_to_json(c) + ", \"nodes\": 2}\n");
  read = read_journal_entry(dir.path());
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(read->simplify_runs, 0u);
}

TEST(Journal, ResumeTakesOnlyAJournalOfTheSameReduction) {
  TempDir dir;
  Candidate c;
  c.nodes = {1, 2};
  ASSERT_TRUE(append_journal(dir.path(), kIdentity, c).ok());
  auto read = read_journal_entry(dir.path());
  ASSERT_TRUE(read) << read.error().message();
  ASSERT_TRUE(read->identity.has_value());
  EXPECT_EQ(*read->identity, kIdentity);
  EXPECT_TRUE(check_journal_identity(dir.path(), *read, kIdentity).ok());
  ReductionIdentity other = kIdentity;
  other.values[1].second = "opt";
  other.values[2].second = "atol 0.1 rtol 0.1 elemwise";
  const Status refused = check_journal_identity(dir.path(), *read, other);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().where, (dir / "journal").string());
  EXPECT_EQ(refused.error().what,
            "belongs to another reduction: engine 'opt:fault=broadcast-batch1' (now 'opt'), tolerance 'atol 0.0001 rtol "
            "0.001 elemwise' (now 'atol 0.1 rtol 0.1 elemwise'); resume with the same model, engine and options, or run "
            "without --resume");
}

TEST(Journal, AJournalThatRecordsNoReductionIsRefusedForResume) {
  TempDir dir;
  Candidate c;
  c.nodes = {1, 2};
  write_bytes(dir / "journal", "{\"candidate\": " + candidate_to_json(c) + ", \"nodes\": 2, \"simplify_runs\": 0}\n");
  auto read = read_journal_entry(dir.path());
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_FALSE(read->identity.has_value());
  const Status refused = check_journal_identity(dir.path(), *read, kIdentity);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("journal: written by an older reduce"), std::string::npos)
      << refused.error().message();
}

TEST(Journal, ALineCutShortIsSkipped) {
  TempDir dir;
  Candidate c;
  c.nodes = {4, 5};
  ASSERT_TRUE(append_journal(dir.path(), kIdentity, c).ok());
  std::ofstream(dir / "journal", std::ios::app) << "{\"candidate\": {\"nodes\": [4";
  auto read = read_journal(dir.path());
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(read->nodes, c.nodes);
}

TEST(Journal, MissingOrMalformedIsAnError) {
  TempDir dir;
  EXPECT_FALSE(read_journal(dir.path()));
  write_bytes(dir / "journal", "candidate nodes=1,2\n");
  auto read = read_journal(dir.path());
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message().find("malformed journal line"), std::string::npos);
}

}  // namespace
}  // namespace reduce
