// The precision families of the corpus (`reduce-corpus --precision`): `reduce precision` finds
// exactly the ground-truth set of nodes to keep in FP32, 1-minimal, the same for -j 1 and -j 4
// (sizes 10 and 100 here; 10 000 in bench/precision_corpus.sh).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "process_support.h"
#include "tsv_rows.h"

namespace reduce {
namespace {

using testing::read_bytes;
using testing::run_process;
using testing::run_reduce;
using testing::TempDir;

struct PrecisionRow {
  std::string model, engine, kind, fp32_nodes;
};

std::vector<PrecisionRow> read_precision_manifest(const std::filesystem::path& path) {
  const auto tsv = testing::read_tsv(path);
  EXPECT_EQ(tsv.header, "model\tengine\tkind\tfp32_nodes\tnodes\tdescription");
  std::vector<PrecisionRow> rows;
  for (const auto& cols : tsv.rows) {
    EXPECT_EQ(cols.size(), 6u) << cols.at(0);
    if (cols.size() >= 4) rows.push_back({cols[0], cols[1], cols[2], cols[3]});
  }
  return rows;
}

// "a,b,c" -> "a\nb\nc\n" (precision.txt lists the set one name per line, in topological order).
std::string as_lines(const std::string& names) {
  std::string out = names;
  std::replace(out.begin(), out.end(), ',', '\n');
  return out + "\n";
}

TEST(PrecisionCorpus, ReducePrecisionFindsExactlyTheGroundTruthSetForEveryJobCount) {
  TempDir dir;
  auto gen = run_process({std::string(REDUCE_BINARY_DIR) + "/reduce-corpus", dir.path().string(), "--precision", "all",
                          "--sizes", "10,100"});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "manifest.tsv")) << "--precision alone writes only the precision families";
  const auto rows = read_precision_manifest(dir / "precision_manifest.tsv");
  ASSERT_EQ(rows.size(), 6u);  // three families, two sizes
  for (const auto& row : rows) {
    ASSERT_FALSE(row.fp32_nodes.empty()) << row.model;
    const std::string model = (dir / row.model).string();
    auto check = run_reduce({"check", model, "--engine", row.engine});
    EXPECT_EQ(check.exit_code, 1) << row.model << check.out;
    EXPECT_NE(check.out.find("FAIL (" + row.kind + ")"), std::string::npos) << row.model << check.out;
    for (const char* jobs : {"1", "4"}) {
      const auto out = dir / (row.model + "-j" + jobs);
      auto r = run_reduce({"precision", model, "--engine", row.engine, "-j", jobs, "-o", out.string()});
      ASSERT_EQ(r.exit_code, 0) << row.model << " -j " << jobs << r.out << r.err;
      EXPECT_EQ(read_bytes(out / "precision.txt"), as_lines(row.fp32_nodes)) << row.model << " -j " << jobs;
      const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
      EXPECT_TRUE(report.at("one_minimal").get<bool>()) << row.model;
      EXPECT_FALSE(report.at("after").at("fails").get<bool>()) << row.model;
    }
  }
}

// The same families on a strongly typed FP16 engine (the model converted at the ONNX level, as
// TensorRT 11 builds it): the same ground truth, 1-minimal, for -j 1 and -j 4; the bundle's converted
// model passes when run as it is (against the FP32 model's values), and the model without the set fails.
TEST(PrecisionCorpus, StronglyTypedFp16FindsTheGroundTruthAndWritesTheDeployableModel) {
  TempDir dir;
  auto gen = run_process({std::string(REDUCE_BINARY_DIR) + "/reduce-corpus", dir.path().string(), "--precision", "all",
                          "--sizes", "10,100"});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const auto rows = read_precision_manifest(dir / "precision_manifest.tsv");
  ASSERT_EQ(rows.size(), 6u);
  for (const auto& row : rows) {
    const std::string model = (dir / row.model).string();
    for (const char* jobs : {"1", "4"}) {
      const auto out = dir / (row.model + "-typed-j" + jobs);
      auto r = run_reduce({"precision", model, "--engine", "fp16:ref", "-j", jobs, "-o", out.string()});
      ASSERT_EQ(r.exit_code, 0) << row.model << " -j " << jobs << r.out << r.err;
      EXPECT_EQ(read_bytes(out / "precision.txt"), as_lines(row.fp32_nodes)) << row.model << " -j " << jobs;
      const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
      EXPECT_TRUE(report.at("one_minimal").get<bool>()) << row.model;
      EXPECT_EQ(report.at("converted_model"), "model_fp16.onnx") << row.model;
      // AutoCast's default rule on the same values: its set, and whether the model passes with it.
      const auto& rule = report.at("autocast_rule");
      ASSERT_TRUE(rule.is_object()) << row.model;
      EXPECT_EQ(rule.at("data_max"), 512);
      EXPECT_TRUE(rule.at("passes").is_boolean());
      EXPECT_TRUE(rule.at("fp32_nodes").is_array());
    }
    const auto out = dir / (row.model + "-typed-j1");
    // The deployable model, run as it is on the reference, against the FP32 model's own values.
    const auto values = dir / (row.model + "-values");
    ASSERT_EQ(run_reduce({"run", model, "--save-inputs", values.string(), "--save-outputs", values.string(),
                          "--save-format", "pb"})
                  .exit_code,
              0);
    auto deployed = run_reduce({"check", (out / "model_fp16.onnx").string(), "--engine", "ref", "--inputs", values.string(),
                                "--expected", values.string(), "--atol", "0.01", "--rtol", "0.01"});
    EXPECT_EQ(deployed.exit_code, 0) << row.model << deployed.out << deployed.err;
    auto without = run_reduce({"check", model, "--engine", "fp16:ref"});
    EXPECT_EQ(without.exit_code, 1) << row.model << without.out;
    EXPECT_NE(read_bytes(out / "report.md").find("python -m modelopt.onnx.autocast --onnx_path model.onnx"), std::string::npos);
  }
}

// The same families through the trtexec stand-in as TensorRT 11 (tests/adapters/trtexec_stand_in.cpp:
// --fp16 is an unknown option there, the graph runs as typed): `trt:fp16` converts each candidate at
// the ONNX level, and `reduce precision` finds the ground truth, 1-minimal, for -j 1 and -j 4; the
// bundle's model_fp16.onnx passes on the stand-in as it is, the model without the set fails.
TEST(PrecisionCorpus, OnTheTensorRt11StandInFindsTheGroundTruth) {
  TempDir dir;
  auto gen = run_process({std::string(REDUCE_BINARY_DIR) + "/reduce-corpus", dir.path().string(), "--precision", "all",
                          "--sizes", "10"});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  std::filesystem::create_directories(dir / "bin");
  std::filesystem::create_symlink(std::string(REDUCE_BINARY_DIR) + "/trtexec_stand_in", dir / "bin" / "trtexec");
  const auto on_trt11 = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"env", "PATH=" + (dir / "bin").string() + ":/usr/bin:/bin", "TRTEXEC_STAND_IN_VERSION=11",
                               std::string(REDUCE_BINARY_DIR) + "/reduce"});
    return run_process(args);
  };
  const auto rows = read_precision_manifest(dir / "precision_manifest.tsv");
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& row : rows) {
    const std::string model = (dir / row.model).string();
    for (const char* jobs : {"1", "4"}) {
      const auto out = dir / (row.model + "-trt11-j" + jobs);
      auto r = on_trt11({"precision", model, "--engine", "trt:fp16", "-j", jobs, "-o", out.string()});
      ASSERT_EQ(r.exit_code, 0) << row.model << " -j " << jobs << r.out << r.err;
      EXPECT_EQ(read_bytes(out / "precision.txt"), as_lines(row.fp32_nodes)) << row.model << " -j " << jobs;
      const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
      EXPECT_TRUE(report.at("one_minimal").get<bool>()) << row.model;
      EXPECT_EQ(report.at("converted_model"), "model_fp16.onnx") << row.model;
    }
    const auto deployed = dir / (row.model + "-trt11-j1") / "model_fp16.onnx";
    auto passes = on_trt11({"check", deployed.string(), "--engine", "trt", "--atol", "0.01", "--rtol", "0.01"});
    EXPECT_EQ(passes.exit_code, 0) << row.model << passes.out << passes.err;
    auto fails = on_trt11({"check", model, "--engine", "trt:fp16"});
    EXPECT_EQ(fails.exit_code, 1) << row.model << fails.out << fails.err;
  }
}

TEST(PrecisionCorpus, UnknownPrecisionFamilyIsAUsageError) {
  TempDir dir;
  auto r = run_process({std::string(REDUCE_BINARY_DIR) + "/reduce-corpus", dir.path().string(), "--precision", "nope"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown precision family 'nope'"), std::string::npos) << r.err;
  auto q = run_process({std::string(REDUCE_BINARY_DIR) + "/reduce-corpus", dir.path().string(), "--quantized", "nope"});
  EXPECT_EQ(q.exit_code, 2);
  EXPECT_NE(q.err.find("unknown quantized family 'nope'"), std::string::npos) << q.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "quantized_manifest.tsv"));
}

// The quantized families (`reduce-corpus --quantized`): every quantization is exact but the sensitive
// node's, so `reduce precision --float-model` must leave exactly that node in float, 1-minimal, for
// -j 1 and -j 4; `reduce compare --float-model` names it as the node that adds the most error.
TEST(QuantizedCorpus, ReducePrecisionLeavesExactlyTheGroundTruthInFloat) {
  TempDir dir;
  auto gen = run_process({std::string(REDUCE_BINARY_DIR) + "/reduce-corpus", dir.path().string(), "--quantized", "all",
                          "--sizes", "10,100"});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "manifest.tsv")) << "--quantized alone writes only the quantized families";
  const auto tsv = testing::read_tsv(dir / "quantized_manifest.tsv");
  EXPECT_EQ(tsv.header, "model\tfloat_model\tengine\tkind\tfloat_nodes\tnodes\tdescription");
  ASSERT_EQ(tsv.rows.size(), 4u);  // two families, two sizes
  for (const auto& cols : tsv.rows) {
    ASSERT_EQ(cols.size(), 7u);
    const std::string model = (dir / cols[0]).string(), float_model = (dir / cols[1]).string(), truth = cols[4];
    ASSERT_FALSE(truth.empty()) << cols[0];
    auto compare = run_reduce({"compare", model, "--engine", cols[2], "--float-model", float_model});
    EXPECT_EQ(compare.exit_code, 1) << cols[0] << compare.out << compare.err;
    EXPECT_NE(compare.out.find("adds the most error when quantized alone: " + truth + " (MatMul)"), std::string::npos)
        << cols[0] << compare.out;
    for (const char* jobs : {"1", "4"}) {
      const auto out = dir / (cols[0] + "-j" + jobs);
      auto r = run_reduce({"precision", model, "--engine", cols[2], "--float-model", float_model, "-j", jobs, "-o", out.string()});
      ASSERT_EQ(r.exit_code, 0) << cols[0] << " -j " << jobs << r.out << r.err;
      EXPECT_EQ(read_bytes(out / "precision.txt"), as_lines(truth)) << cols[0] << " -j " << jobs;
      const auto report = nlohmann::json::parse(read_bytes(out / "report.json"));
      EXPECT_TRUE(report.at("one_minimal").get<bool>()) << cols[0];
      EXPECT_FALSE(report.at("after").at("fails").get<bool>()) << cols[0];
      EXPECT_EQ(report.at("max_abs_error").at("partially_quantized").begin()->get<double>(), 0.0) << cols[0];
    }
  }
}

}  // namespace
}  // namespace reduce
