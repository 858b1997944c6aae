// The error chart (SVG and PNG, drawn by gnuplot): error per node along the topological order, local
// vs accumulated, and the distribution of one output's values, reference vs engine.
#pragma once

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/model.h"
#include "oracle/error_origin.h"

namespace reduce {

// One output's values on both sides, for the histogram.
struct OutputValues {
  std::string name;
  Tensor reference;
  Tensor engine;
};

// The output the histogram shows: the failing output with the largest error, else the first graph
// output; the reference from the oracle's record, the engine's value from `actual` (the engine's
// outputs of the whole model). Empty when either is missing.
std::optional<OutputValues> histogram_output(const Oracle& oracle, const ErrorOrigin& origin, const TensorMap& actual);

enum class ChartOutcome {
  Drawn,
  NoGnuplot,     // gnuplot is not installed: no chart, not an error
  GnuplotFailed, // gnuplot ran but gave no picture (its message in `note`)
};

struct ChartResult {
  ChartOutcome outcome = ChartOutcome::Drawn;
  std::string note;  // one line for the user when there is no chart
};

// gnuplot gets this long before its process group is killed.
inline constexpr double kChartSeconds = 30;

// Checks that `picture` can be written (its folder exists and is writable, it is not a folder) and,
// check_chart_path, that it ends in .svg or .png; before any work. The error names the file.
Status check_chart_folder(const std::filesystem::path& picture);
Status check_chart_path(const std::filesystem::path& picture);

// Draws `origin` (nodes of `graph`) and `output` to each of `pictures`, in the format its extension
// names (.svg, .png: error.svg and error.png in a bundle, from one gnuplot run): the data go to files
// next to them, read by a fixed gnuplot script (file names as arguments, labels as data: nothing from
// the model is ever parsed as a command), run without a shell within kChartSeconds and killed on
// `cancel`; each picture is renamed into place when complete. Node labels are placed where they do
// not overlap (the others are counted under the title; report.md lists every culprit); a chart with
// no value beyond the tolerance says why under its title. `kept_nodes` (graph node indices, e.g.
// precision's FP32 set) are ringed. An error only when the files cannot be written.
Expected<ChartResult> write_error_chart(const std::vector<std::filesystem::path>& pictures, const ErrorOrigin& origin,
                                        const Graph& graph, const std::optional<OutputValues>& output,
                                        const std::atomic<bool>* cancel = nullptr,
                                        const std::vector<size_t>& kept_nodes = {});

}  // namespace reduce
