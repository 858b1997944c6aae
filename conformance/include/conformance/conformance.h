// The ONNX conformance runner: runs ONNX backend test folders (model.onnx + test_data_set_N) on an engine.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/model.h"
#include "engine/engine.h"

namespace reduce {

struct ConformanceTolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

struct ConformanceOutcome {
  enum class Kind { Passed, Failed, Skipped };
  Kind kind = Kind::Passed;
  std::string reason;  // why it failed or was skipped
};

// Every folder under `roots` (the roots included) that holds a model.onnx, sorted by path.
std::vector<std::filesystem::path> find_conformance_tests(const std::vector<std::filesystem::path>& roots);

// Why a test is excluded (docs/engine.md, "conformance"; conformance/src/exclusions.def), or nullopt when it must run.
std::optional<std::string> conformance_skip_reason(const std::string& test_name, const Model& model);

// The documented exclusions, as (what, reason) lines for `reduce conformance --list-skips`.
std::vector<std::pair<std::string, std::string>> conformance_exclusions();

// Compares an actual value with the expected one: dtype and shape exactly, elements with
// |actual - expected| <= atol + rtol * |expected|, NaN equal to NaN, infinities equal by sign.
// Returns the first difference as a message, or nullopt.
std::optional<std::string> conformance_difference(const Tensor& expected, const Tensor& actual,
                                                  const ConformanceTolerance& tol);

// Loads the test at `dir`, runs every test_data_set_N on the engine and compares the outputs.
ConformanceOutcome run_conformance_test(const std::filesystem::path& dir, Engine& engine,
                                        const ConformanceTolerance& tol = {});

}  // namespace reduce
