// Subcommands of the `reduce` executable: each parses its own options and returns an exit code.
#pragma once

#include <iostream>
#include <stop_token>
#include <string>
#include <vector>

namespace reduce::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // e.g. `check`: the model fails
inline constexpr int kExitUsage = 2;    // bad usage, unreadable or invalid input
inline constexpr int kExitDoesNotFail = 3;    // the model to reduce does not fail
inline constexpr int kExitNotPrecision = 4;   // `precision`: fails even with every float node in FP32
inline constexpr int kExitRankZeroLost = 5;   // MPI worker rank: rank 0 silent for --rank-timeout
inline constexpr int kExitNotConfirmed = 6;   // `reduce`: the reproducer did not fail again on every fresh run
inline constexpr int kExitModelIndependent = 7;  // `reduce`: the engine fails the same way on a one-node model
inline constexpr int kExitRounding = 8;  // `reduce`: the exact FP16/BF16 reference fails the same way (rounding, not a bug)
inline constexpr int kExitInterrupted = 130;  // stopped by Ctrl-C, SIGTERM, SIGHUP or SIGPIPE

// `check --confirm`, `reduce --confirm`: each confirmation is one more engine run.
inline constexpr int kMaxConfirm = 1000;

// A line for stderr in one write: under mpirun every rank's stderr goes to the same place, and
// pieces of two lines would interleave.
inline void print_stderr_line(const std::string& line) { std::cerr << line + "\n"; }

int info_command(const std::vector<std::string>& args);
int convert_command(const std::vector<std::string>& args);
// run, check and compare: `stop` (Ctrl-C) kills the engine run in progress; they exit 130.
int run_command(const std::vector<std::string>& args, std::stop_token stop);
int conformance_command(const std::vector<std::string>& args);
int check_command(const std::vector<std::string>& args, std::stop_token stop);
int compare_command(const std::vector<std::string>& args, std::stop_token stop);
// args[0] is the model. `stop` (Ctrl-C) interrupts the reduction: the best reproducer so far is kept.
int reduce_command(const std::vector<std::string>& args, std::stop_token stop);
// Finds a 1-minimal set of nodes to keep in FP32 (precision/precision.h).
int precision_command(const std::vector<std::string>& args, std::stop_token stop);
int batch_command(const std::vector<std::string>& args, std::stop_token stop);
// Hidden: the worker process of isolated engines (adapters/isolated_worker.h).
int worker_command(const std::vector<std::string>& args);

}  // namespace reduce::cli
