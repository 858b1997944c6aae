// The parts of the report model that are not rendering: the bucket record and the environment line.
#include <sys/utsname.h>

#include <fstream>

#include "core/version.h"
#include "report/report.h"

namespace reduce {

BucketRecord bucket_record(const ReductionReport& r, const std::string& canonical_form) {
  BucketRecord b;
  b.failure = to_string(r.failure.kind);
  // What tells failures of one kind apart: models whose reproducers share a form but not this are
  // different bugs.
  if (r.failure.kind == FailureKind::Error || r.failure.kind == FailureKind::Shape) b.failure += ": " + r.failure.normalized;
  if (r.failure.kind == FailureKind::Crash) b.failure += ": signal " + std::to_string(r.failure.signal);
  b.original_nodes = r.original_nodes;
  b.reduced_nodes = r.reduced_nodes;
  b.checks = r.checks;
  b.seconds = r.seconds;
  b.one_minimal = r.one_minimal;
  for (const auto& [op, n] : r.reduced_op_types) b.ops += (b.ops.empty() ? "" : " ") + op + ":" + std::to_string(n);
  b.form = canonical_form;
  b.complete = !r.interrupted && !r.not_confirmed();
  return b;
}

std::string environment_line() {
  std::string s = std::string("reduce ") + kReduceVersion + " (built with g++ " __VERSION__ ")";
  struct utsname u;
  if (uname(&u) == 0) s += ", " + std::string(u.sysname) + " " + u.release + " " + u.machine;
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);)
    if (line.rfind("model name", 0) == 0) {
      s += ", " + line.substr(line.find(':') + 2);
      break;
    }
  return s;
}

}  // namespace reduce
