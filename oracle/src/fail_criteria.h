// FailCriteria: Polygraphy's check options (--fail-regex, --fail-code, --ignore-fail-code) and the
// check: script runner that applies them to a script's exit code and output.
#pragma once

#include <re2/re2.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/check_script.h"
#include "oracle/materializer.h"
#include "oracle/verdict.h"

namespace reduce {

class FailCriteria {
 public:
  // Patterns are RE2 syntax (docs/oracle.md). Errors: a regex that does not compile, or uses what
  // RE2 leaves out (backreferences, lookaround), in one line naming it.
  static Expected<FailCriteria> create(const std::vector<std::string>& fail_regexes, std::vector<int> fail_codes,
                                       std::vector<int> ignore_fail_codes);

  bool has_regexes() const { return !regexes_.empty(); }
  // Any regex matches somewhere in `text`, in time linear in its size; of a text over
  // kSearchedBytes only the first and the last kSearchedBytes / 2 are searched.
  bool matches_regex(std::string_view text) const;

  // An engine may print gigabytes: this bounds the time one verdict spends matching.
  static constexpr size_t kSearchedBytes = size_t{64} << 20;

  // Runs `script` on the candidate and judges it by Polygraphy's rule (docs/oracle.md): an ignored
  // code passes; with fail codes only those fail, and only when a regex (if any) matches too;
  // without them a regex decides alone (a match fails even on exit 0), else any non-zero code
  // fails. A crash or timeout of the script is that failure; a script that cannot run is invalid.
  Verdict run_check_script(const CheckScript& script, const CandidateRun& run, const EngineEnvironment& environment,
                           const std::atomic<bool>* cancel) const;

 private:
  // RE2 objects cannot move; the pointers let FailCriteria be returned by value.
  std::vector<std::unique_ptr<const re2::RE2>> regexes_;
  std::vector<int> fail_codes_, ignore_fail_codes_;
};

}  // namespace reduce
