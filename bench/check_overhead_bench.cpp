// Per-check overhead of the oracle on a 10 000-node corpus model: time spent building the candidate
// (extraction, binding recorded values, comparing) apart from the engine's own run, for candidates of
// several sizes. Prints a Markdown table for bench/RESULTS.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "core/graph_index.h"
#include "corpus_model.h"
#include "oracle/inputs.h"
#include "oracle/oracle.h"

using namespace reduce;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

int main(int argc, char** argv) {
  reduce::tune_allocator_for_engines();  // as the `reduce` executable runs them
  const std::string fault = argc > 1 ? argv[1] : "broadcast-batch1";
  const size_t size = argc > 2 ? std::stoul(argv[2]) : 10000;
  const int repeats = argc > 3 ? std::stoi(argv[3]) : 20;
  const auto* family = corpus::find_family(fault);
  if (!family) {
    std::fprintf(stderr, "unknown corpus family %s\n", fault.c_str());
    return 2;
  }
  corpus::GeneratedModel gen = corpus::generate(*family, size, 1);
  const Model& model = gen.model;
  OracleOptions options;
  options.engine = std::string(family->engine);
  double t0 = now();
  std::vector<NamedTensor> inputs;
  {
    RandomInputOptions ri;
    inputs = make_random_inputs(model.graph, ri).value();
  }
  auto oracle = Oracle::create(model, inputs, options);
  if (!oracle) {
    std::fprintf(stderr, "%s\n", oracle.error().message().c_str());
    return 1;
  }
  const double record_seconds = now() - t0;
  const auto& topo = (*oracle)->extractor().index().topological_order();
  std::printf("model: %s_%zu (%zu nodes), engine %s; reference recorded once in %.3f s (%.1f MB)\n\n",
              std::string(family->stem).c_str(), size, count_nodes(model.graph), options.engine.c_str(), record_seconds,
              (*oracle)->recorded().bytes_in_memory() / 1e6);
  std::printf("| candidate | nodes | materialize (extract + bind) ms | engine ms | compare + verdict ms | overhead ms (all but engine) |\n"
              "|---|---|---|---|---|---|\n");
  for (size_t keep : {size_t{1}, size_t{10}, size_t{100}, size_t{1000}, size / 2, topo.size()}) {
    keep = std::min(keep, topo.size());
    // A window of the topological order in the middle of the model (a typical mid-reduction candidate).
    const size_t start = (topo.size() - keep) / 2;
    Candidate c;
    c.nodes.assign(topo.begin() + start, topo.begin() + start + keep);
    std::sort(c.nodes.begin(), c.nodes.end());
    double materialize = 0, total = 0, engine = 0;
    for (int r = 0; r < repeats; ++r) {
      double a = now();
      auto run = (*oracle)->materialize(c);
      materialize += now() - a;
      if (!run) {
        std::fprintf(stderr, "%s\n", run.error().message().c_str());
        return 1;
      }
      TensorMap actual;  // bypasses the verdict cache
      a = now();
      Verdict v = (*oracle)->evaluate(c, nullptr, &actual);
      total += now() - a;
      engine += v.seconds;
    }
    const double n = repeats;
    // evaluate() = materialize + engine (prepare + run) + compare; v.seconds covers prepare + run.
    const double compare = (total - engine) / n - materialize / n;
    std::printf("| topological window | %zu | %.3f | %.3f | %.3f | %.3f |\n", keep, 1e3 * materialize / n, 1e3 * engine / n,
                1e3 * std::max(0.0, compare), 1e3 * (total - engine) / n);
  }
  return 0;
}
