// A sample of ONNX 1.23's node tests at opsets 18 to 23 through external paths: each case that
// passes in-process (`--engine ref`) passes the same way when its model is written to disk and run
// by another process (`isolated:ref`, and `reduce run` as a `cmd:` engine), so the models written for
// external engines keep what the newer opsets mean.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "core/model_io.h"
#include "process_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::run_reduce;

const fs::path kCases = fs::path(REDUCE_BINARY_DIR) / "onnx-node-tests-1.23";

std::set<std::string> known_failures() {
  std::ifstream in(std::string(REDUCE_SOURCE_DIR) + "/tests/conformance/known_failures_1.23.txt");
  std::set<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.insert(line.substr(0, line.find_first_of(" \t#")));
  return out;
}

// Cases whose default-domain opset is 18..23, in name order.
std::vector<fs::path> newer_opset_cases() {
  const auto skip = known_failures();
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kCases))
    if (e.is_directory() && fs::exists(e.path() / "model.onnx") && fs::exists(e.path() / "test_data_set_0") &&
        !skip.count(e.path().filename().string()))
      dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  std::vector<fs::path> out;
  for (const auto& d : dirs) {
    auto m = load_model(d / "model.onnx");
    if (!m) continue;
    const int64_t opset = m->opset("").value_or(0);
    if (opset >= 18 && opset <= 23) out.push_back(d);
  }
  return out;
}

TEST(NodeTestsExternal, NewerOpsetCasesPassThroughIsolatedAndCommandEngines) {
  const auto cases = newer_opset_cases();
  ASSERT_GT(cases.size(), 200u) << kCases;
  const std::string cmd =
      "cmd:" + std::string(REDUCE_BINARY_DIR) + "/reduce run {model} --inputs {inputs} --save-outputs {outputs}";
  // Every 16th case: about 30, spread over the alphabet (op families from Abs to Xor).
  size_t in_process = 0, external = 0;
  for (size_t k = 0; k < cases.size(); k += 16) {
    const std::string model = (cases[k] / "model.onnx").string(), data = (cases[k] / "test_data_set_0").string();
    auto check = [&](const std::string& engine) {
      return run_reduce({"check", model, "--engine", engine, "--inputs", data, "--expected", data});
    };
    auto ref = check("ref");
    if (ref.exit_code != 0) continue;  // skipped in-process too (strings, sequences, ...): nothing to compare
    ++in_process;
    for (const std::string& engine : {std::string("isolated:ref"), cmd}) {
      auto r = check(engine);
      EXPECT_EQ(r.exit_code, 0) << cases[k].filename() << " " << engine << "\n" << r.out << r.err;
      EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << cases[k].filename() << " " << engine << "\n" << r.out;
      external += r.exit_code == 0;
    }
  }
  EXPECT_GT(in_process, 20u) << cases.size() << " cases";
  std::cout << in_process << " of " << cases.size() << " cases sampled passed in-process and through both external engines\n";
  EXPECT_EQ(external, 2 * in_process);
}

}  // namespace
}  // namespace reduce
