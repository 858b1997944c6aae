// Names of test outcomes, for logs and reports.
#include "reducer/candidate.h"

namespace reduce {

const char* to_string(TestOutcome outcome) {
  switch (outcome) {
    case TestOutcome::Interesting: return "interesting";
    case TestOutcome::Uninteresting: return "uninteresting";
    case TestOutcome::Slipped: return "slipped";
    case TestOutcome::Invalid: return "invalid";
    case TestOutcome::Cancelled: return "cancelled";
  }
  return "unknown";
}

}  // namespace reduce
