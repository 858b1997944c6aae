// FailCriteria: compiling the check options, and judging a check: script's run by them.
#include "fail_criteria.h"

#include <algorithm>

namespace reduce {
namespace {

// Latin-1 makes a pattern match bytes, as std::regex did: engine output is not always valid UTF-8
// (a binary dump, a cut multi-byte character) and a UTF-8 `.` would not step over a stray byte.
// max_mem bounds what one pattern may take for its compiled program and DFA cache (RE2 falls back
// to a slower linear search when the cache fills, never to backtracking).
re2::RE2::Options regex_options() {
  re2::RE2::Options o;
  o.set_encoding(re2::RE2::Options::EncodingLatin1);
  o.set_max_mem(int64_t{64} << 20);
  o.set_log_errors(false);
  return o;
}

// What a user coming from ECMAScript or Perl syntax most likely tried, when RE2 refuses it.
std::string unsupported_hint(const re2::RE2& re) {
  const std::string& arg = re.error_arg();
  if (re.error_code() == re2::RE2::ErrorBadEscape && arg.size() == 2 && arg[1] >= '1' && arg[1] <= '9')
    return " (RE2 has no backreferences; docs/oracle.md)";
  if (re.error_code() == re2::RE2::ErrorBadPerlOp && (arg == "(?=" || arg == "(?!"))
    return " (RE2 has no lookahead; docs/oracle.md)";
  if (re.error_code() == re2::RE2::ErrorBadPerlOp && arg == "(?<")
    return " (RE2 has no lookbehind; a named group is (?P<name>...); docs/oracle.md)";
  return "";
}

bool search(const re2::RE2& re, std::string_view text) {
  const size_t n = text.size();
  if (n <= FailCriteria::kSearchedBytes) return re.Match(text, 0, n, re2::RE2::UNANCHORED, nullptr, 0);
  // The whole text stays the context, so ^, $ and \b still mean its own start, end and boundaries.
  const size_t half = FailCriteria::kSearchedBytes / 2;
  return re.Match(text, 0, half, re2::RE2::UNANCHORED, nullptr, 0) ||
         re.Match(text, n - half, n, re2::RE2::UNANCHORED, nullptr, 0);
}

}  // namespace

Expected<FailCriteria> FailCriteria::create(const std::vector<std::string>& fail_regexes, std::vector<int> fail_codes,
                                            std::vector<int> ignore_fail_codes) {
  FailCriteria c;
  const re2::RE2::Options options = regex_options();
  for (const std::string& pattern : fail_regexes) {
    auto re = std::make_unique<const re2::RE2>(pattern, options);
    if (!re->ok()) return make_error("invalid --fail-regex '" + pattern + "': " + re->error() + unsupported_hint(*re));
    c.regexes_.push_back(std::move(re));
  }
  c.fail_codes_ = std::move(fail_codes);
  c.ignore_fail_codes_ = std::move(ignore_fail_codes);
  return c;
}

bool FailCriteria::matches_regex(std::string_view text) const {
  return std::any_of(regexes_.begin(), regexes_.end(), [&](const auto& re) { return search(*re, text); });
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
    s.exit_code = code;
  }
  return v;
}

}  // namespace reduce
