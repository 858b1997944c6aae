// The reductions of `reduce batch`, shared by its release scan (batch_releases.cpp): each row reduced
// in a process of its own, as `reduce MODEL --engine E -o OUT/FOLDER ...` would run it.
#pragma once

#include <boost/program_options.hpp>

#include <filesystem>
#include <stop_token>
#include <string>
#include <variant>
#include <vector>

#include "batch/manifest.h"
#include "batch/summary.h"

namespace reduce::cli {

// The arguments of one row's reduction: its engine, reference and data set, -j and --reduce-option.
std::vector<std::string> reduce_arguments_of(const BatchItem& item, const std::filesystem::path& dir,
                                             const boost::program_options::variables_map& vm, bool resume = false);

// Reduces the items not reduced yet (batch_rows: a complete bundle is skipped, an interrupted one
// resumed), until all are done or `stop` is requested; in an MPI job one rank each. The rows, or the
// exit code of a rank other than 0.
std::variant<int, std::vector<BatchRow>> run_batch(const std::vector<BatchItem>& items, const std::filesystem::path& out,
                                                   const boost::program_options::variables_map& vm, std::stop_token stop,
                                                   int& ranks_lost);

// `reduce batch DIR --engine ort@A,ort@B,... -o OUT`: every model of DIR checked on every release
// (-j models at a time, each release's engine made once), its class, and a reduction for each change
// of behaviour; OUT/summary.md and summary.json. Resumes from OUT/releases/. The exit code.
int batch_releases(const std::vector<BatchItem>& items, const std::vector<std::string>& specs, const std::filesystem::path& out,
                   const boost::program_options::variables_map& vm, std::stop_token stop);

}  // namespace reduce::cli
