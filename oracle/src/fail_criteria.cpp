// FailCriteria: compiling the check options, and judging a check: script's run by them.
#include "fail_criteria.h"

#include <algorithm>

namespace reduce {

Expected<FailCriteria> FailCriteria::create(const std::vector<std::string>& fail_regexes, std::vector<int> fail_codes,
                                            std::vector<int> ignore_fail_codes) {
  FailCriteria c;
  for (const std::string& pattern : fail_regexes) {
    try {
      c.regexes_.emplace_back(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return make_error("invalid --fail-regex '" + pattern + "': " + e.what());
    }
  }
  c.fail_codes_ = std::move(fail_codes);
  c.ignore_fail_codes_ = std::move(ignore_fail_codes);
  return c;
}

bool FailCriteria::matches_regex(const std::string& text) const {
  return std::any_of(regexes_.begin(), regexes_.end(), [&](const std::regex& re) { return std::regex_search(text, re); });
}

Verdict FailCriteria::run_check_script(const CheckScript& script, const CandidateRun& run,
                                       const EngineEnvironment& environment, const std::atomic<bool>* cancel) const {
  TensorMap inputs;
  for (const auto& in : run.inputs) inputs[in.name] = in.tensor;
  auto result = script.run(run.model, inputs, environment, cancel);
  if (!result) return Verdict::invalid_because(result.error().message());
  Verdict v;
  v.seconds = result->seconds;
  FailureSignature& s = v.signature;
  // The tail of the output identifies the failure for humans; --fail-regex sees all of it.
  s.message = result->output;
  if (result->timed_out) {
    s.kind = FailureKind::Timeout;
    return v;
  }
  if (int sig = result->crash_signal(); sig != 0) {
    s.kind = FailureKind::Crash;
    s.signal = sig;
    return v;
  }
  const int code = result->exit_code;
  auto listed = [&](const std::vector<int>& codes) { return std::find(codes.begin(), codes.end(), code) != codes.end(); };
  bool fails;
  if (listed(ignore_fail_codes_)) fails = false;
  else if (!fail_codes_.empty()) fails = listed(fail_codes_) && (regexes_.empty() || matches_regex(result->output));
  else if (!regexes_.empty()) fails = matches_regex(result->output);
  else fails = code != 0;
  if (fails) {
    s.kind = FailureKind::Error;
    s.normalized = "check script exit code " + std::to_string(code);
  }
  return v;
}

}  // namespace reduce
