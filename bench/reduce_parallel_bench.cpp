// Reducer bench: checks per strategy on synthetic failures, and wall time of a slow oracle for -j N.
// Usage: reduce_parallel_bench [DELAY_MS (default 50)] [JOBS... (default 1 4 16)]; ONLY=0|3|5 runs
// one wall-time workload and skips the checks table. `reduce_parallel_bench trips [JOBS...]`
// counts round trips instead (RoundTripCounter: a check's answer waits until the reducer waits
// with every test it has running held), per pass, for every workload (ONLY=K: workload K): check times
// with unlimited cores.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "reducer/parallelism.h"
#include "reducer/reducer.h"
#include "reducer/synthetic_test.h"  // tests/reducer/

using namespace reduce;
using reduce::testing::CandidateView;
using reduce::testing::SyntheticTest;

namespace {

struct Workload {
  std::string name;
  std::string text;
  std::function<bool(const CandidateView&)> interesting;
  size_t minimum;  // nodes of the known minimum
};

std::function<bool(const CandidateView&)> needs(std::vector<std::string> nodes) {
  return [nodes](const CandidateView& v) {
    for (const auto& n : nodes)
      if (!v.has(n)) return false;
    return true;
  };
}

std::vector<Workload> workloads() {
  std::vector<Workload> w;
  w.push_back({"chain-1000 {n300,n700}", testing::chain_model_text(1000), needs({"n300", "n700"}), 2});
  w.push_back({"chain-1000 {n500,n501}", testing::chain_model_text(1000), needs({"n500", "n501"}), 2});
  w.push_back({"chain-1000 fusion n400-n402", testing::chain_model_text(1000),
               [](const CandidateView& v) {
                 return v.has("n400") && v.has("n401") && v.has("n402") && !v.outputs_has("n400") && !v.outputs_has("n401");
               },
               3});
  w.push_back({"residual-100 {a10,b55}+out t70", testing::residual_model_text(100),
               [](const CandidateView& v) { return v.has("a10") && v.has("b55") && v.outputs_has("t70"); }, 3});
  w.push_back({"residual-100 path a40..h60", testing::residual_model_text(100),
               [](const CandidateView& v) {
                 if (!v.has("a40") || !v.has("b40")) return false;
                 for (int i = 40; i <= 60; ++i)
                   if (!v.has("h" + std::to_string(i))) return false;
                 return true;
               },
               23});
  w.push_back({"residual-300 six scattered nodes", testing::residual_model_text(300),
               needs({"a10", "b100", "h150", "a200", "b201", "t280"}), 6});
  return w;
}

// Round trips per -j for every workload, and where they go (pass -> trips). -j 1 needs one trip
// per engine run; its result (instant test) is the one every -j must give.
int count_trips(const std::vector<Workload>& ws, std::vector<int> jobs) {
  if (jobs.empty()) jobs = {16};
  std::printf("| workload | engine runs at -j 1 | -j | round trips | checks | trips per pass | same result as -j 1 |\n"
              "|---|---|---|---|---|---|---|\n");
  for (size_t k = 0; k < ws.size(); ++k) {
    if (std::getenv("ONLY") && std::atoi(std::getenv("ONLY")) != static_cast<int>(k)) continue;
    const auto& w = ws[k];
    auto model = parse_model_text(w.text);
    if (!model) return 1;
    SyntheticTest sequential(*model, w.interesting);
    auto expected = reduce_model(*model, sequential, ReduceOptions{});
    if (!expected) return 1;
    for (int j : jobs) {
      SyntheticTest inner(*model, w.interesting);
      testing::RoundTripCounter counter(inner);
      testing::TripsPerPass per_pass(counter);
      ReduceOptions o;
      o.jobs = j;
      o.on_progress = per_pass.observer();
      o.on_wait = counter.observer();
      auto r = reduce_model(*model, counter, o);
      if (!r) return 1;
      per_pass.finish();
      std::printf("| %s | %zu | %d | %zu | %zu | %s | %s |\n", w.name.c_str(), expected->checks - expected->cache_hits, j,
                  counter.trips(), r->checks, per_pass.summary().c_str(), r->best == expected->best ? "yes" : "NO");
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const reduce::CheckParallelism parallelism(1 << 16);  // as the `reduce` executable
  if (argc > 1 && std::string(argv[1]) == "trips") {
    std::vector<int> jobs;
    for (int i = 2; i < argc; ++i) jobs.push_back(std::atoi(argv[i]));
    return count_trips(workloads(), jobs);
  }
  const int delay = argc > 1 ? std::atoi(argv[1]) : 50;
  std::vector<int> jobs;
  for (int i = 2; i < argc; ++i) jobs.push_back(std::atoi(argv[i]));
  if (jobs.empty()) jobs = {1, 4, 16};
  auto ws = workloads();

  std::printf("## Checks per strategy (instant test)\n\n");
  std::printf("| workload | nodes | strategy | checks | engine runs | final nodes | minimum | 1-minimal |\n|---|---|---|---|---|---|---|---|\n");
  for (const auto& w : ws) {
    if (std::getenv("ONLY")) break;  // ONLY=K: just the wall-time rows of workload K
    auto model = parse_model_text(w.text);
    if (!model) { std::fprintf(stderr, "%s\n", model.error().message().c_str()); return 1; }
    for (const auto& strategy : reduce_strategies()) {
      SyntheticTest t(*model, w.interesting);
      ReduceOptions o;
      o.strategy = strategy;
      auto r = reduce_model(*model, t, o);
      if (!r) { std::fprintf(stderr, "%s\n", r.error().message().c_str()); return 1; }
      std::printf("| %s | %zu | %s | %zu | %zu | %zu | %zu | %s |\n", w.name.c_str(), model->graph.nodes.size(),
                  strategy.c_str(), r->checks, r->checks - r->cache_hits, candidate_size(*model, r->best), w.minimum,
                  r->one_minimal ? "yes" : "no");
    }
  }

  std::printf("\n## Wall time, default strategy, test sleeping %d ms per check\n\n", delay);
  std::printf("| workload | -j | seconds | checks | engine runs | final nodes | same result as -j %d |\n|---|---|---|---|---|---|---|\n", jobs[0]);
  for (size_t k : {size_t{0}, size_t{3}, size_t{5}}) {
    if (std::getenv("ONLY") && std::atoi(std::getenv("ONLY")) != static_cast<int>(k)) continue;
    const auto& w = ws[k];
    auto model = parse_model_text(w.text);
    std::optional<Candidate> first;
    for (int j : jobs) {
      SyntheticTest t(*model, w.interesting, delay);
      ReduceOptions o;
      o.jobs = j;
      const auto t0 = std::chrono::steady_clock::now();
      auto r = reduce_model(*model, t, o);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!r) return 1;
      if (!first) first = r->best;
      std::printf("| %s | %d | %.2f | %zu | %zu | %zu | %s |\n", w.name.c_str(), j, s, r->checks, r->checks - r->cache_hits,
                  candidate_size(*model, r->best), r->best == *first ? "yes" : "NO");
      std::fflush(stdout);
      for (const auto& ps : r->passes)  // where the wall time goes (stderr, not part of the table)
        std::fprintf(stderr, "  -j %d %-18s %6.2f s %4zu checks %3zu commits\n", j, ps.name.c_str(), ps.seconds, ps.checks,
                     ps.successes);
    }
  }
  return 0;
}
