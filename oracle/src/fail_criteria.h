// FailCriteria: Polygraphy's check options (--fail-regex, --fail-code, --ignore-fail-code) and the
// check: script runner that applies them to a script's exit code and output.
#pragma once

#include <atomic>
#include <regex>
#include <string>
#include <vector>

#include "adapters/check_script.h"
#include "oracle/materializer.h"
#include "oracle/verdict.h"

namespace reduce {

class FailCriteria {
 public:
  // Errors: a regex that does not compile (one line naming it).
  static Expected<FailCriteria> create(const std::vector<std::string>& fail_regexes, std::vector<int> fail_codes,
                                       std::vector<int> ignore_fail_codes);

  bool has_regexes() const { return !regexes_.empty(); }
  // Any regex matches somewhere in `text`.
  bool matches_regex(const std::string& text) const;

  // Runs `script` on the candidate and judges it by Polygraphy's rule (docs/oracle.md): an ignored
  // code passes; with fail codes only those fail, and only when a regex (if any) matches too;
  // without them a regex decides alone (a match fails even on exit 0), else any non-zero code
  // fails. A crash or timeout of the script is that failure; a script that cannot run is invalid.
  Verdict run_check_script(const CheckScript& script, const CandidateRun& run, const EngineEnvironment& environment,
                           const std::atomic<bool>* cancel) const;

 private:
  std::vector<std::regex> regexes_;
  std::vector<int> fail_codes_, ignore_fail_codes_;
};

}  // namespace reduce
