// Sample oracles: made in sample order, checked as the command asks, the failing one chosen.
#include "oracle/samples.h"

#include "oracle/verdict_report.h"

namespace reduce {

std::vector<Oracle*> SampleOracles::kept() const {
  std::vector<Oracle*> out{oracles[chosen].get()};
  for (size_t i = 0; i < oracles.size(); ++i)
    if (i != chosen && oracles[i]) out.push_back(oracles[i].get());
  return out;
}

std::vector<size_t> SampleOracles::failing() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < verdicts.size(); ++i)
    if (verdicts[i] && verdicts[i]->fails()) out.push_back(i);
  return out;
}

Expected<SampleOracles> create_sample_oracles(const Model& model, const std::string& model_source,
                                              std::vector<InputSample> samples,
                                              std::vector<TensorSample> expected, OracleOptions options, SampleUse use,
                                              const std::atomic<bool>* cancel,
                                              const std::function<void(const std::string&)>& warn) {
  const auto cancelled = [cancel] { return cancel && cancel->load(); };
  SampleOracles out;
  out.oracles.resize(samples.size());
  out.verdicts.resize(samples.size());
  for (const auto& sample : samples) out.sources.push_back(sample.source);
  bool found = false;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (cancelled()) return make_error("interrupted");
    if (!expected.empty()) {
      options.record.given = std::move(expected[i].tensors);
      options.record.given_source = expected[i].source;
    }
    auto oracle = Oracle::create(model, std::move(samples[i].inputs), options);
    if (!oracle) return oracle.error().at(samples.size() > 1 ? samples[i].source : model_source);
    out.oracles[i] = std::move(*oracle);
    if (warn)
      for (const auto& d : out.oracles[i]->recording().given_disagreements)
        warn(out.oracles[i]->recording().given_source + ": the reference (" + options.reference + ") computes '" + d.name +
             "' differently (max abs error " + format_number(d.max_abs) +
             "); values not in the file come from the reference, so a reduction may find that difference");
    if (samples.size() == 1) break;
    Oracle& o = *out.oracles[i];
    out.verdicts[i] = o.evaluate(Candidate::whole(model.graph), cancel);
    if (out.verdicts[i]->cancelled) return make_error("interrupted");
    const bool fails = out.verdicts[i]->fails();
    if (fails && !found) {
      if (use != SampleUse::KeepAll && i > 0) out.oracles[out.chosen].reset();  // the first sample, kept so far
      out.chosen = i;
      found = true;
      if (use == SampleUse::FirstFailing) break;
    } else if (use != SampleUse::KeepAll && (found || i > 0)) {
      out.oracles[i].reset();
    }
  }
  return out;
}

}  // namespace reduce
