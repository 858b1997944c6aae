// Where a model's behaviour and support change across releases of an engine, and the reductions that follow.
#include "oracle/release_scan.h"

#include <algorithm>
#include <filesystem>

#include "adapters/script_words.h"
#include "oracle/oracle.h"

namespace reduce {

std::string ReleaseVerdict::line() const {
  if (!verdict) return "NOT RUN: " + not_run;
  if (cannot_take()) return "CANNOT TAKE (" + verdict->cannot_take + ")";
  if (verdict->invalid) return "INVALID: " + verdict->invalid_reason;
  return verdict->signature.fails() ? "FAIL (" + verdict->signature.to_string() + ")" : "PASS";
}

std::vector<ReleaseEngine> make_release_engines(const std::vector<std::string>& specs, const EngineEnvironment& environment) {
  std::vector<ReleaseEngine> releases;
  for (const std::string& spec : specs) {
    auto engine = make_engine(spec, environment);
    releases.push_back({spec, engine ? std::shared_ptr<Engine>(std::move(*engine)) : nullptr,
                        engine ? "" : engine.error().message()});
  }
  return releases;
}

std::vector<ReleaseVerdict> scan_releases(Oracle& oracle, const std::vector<ReleaseEngine>& releases,
                                          const std::atomic<bool>* cancel) {
  std::vector<ReleaseVerdict> scan;
  for (const ReleaseEngine& r : releases) {
    if (!r.engine) {
      scan.push_back({r.spec, std::nullopt, r.not_run});
      continue;
    }
    scan.push_back({r.spec, oracle.evaluate_whole_on(*r.engine, cancel), ""});
  }
  return scan;
}

const char* to_string(ReleaseChangeKind kind) {
  switch (kind) {
    case ReleaseChangeKind::Fixed: return "fixed";
    case ReleaseChangeKind::Regressed: return "regressed";
    case ReleaseChangeKind::FailureChanged: return "failure changed";
    case ReleaseChangeKind::SupportAdded: return "support added";
    case ReleaseChangeKind::SupportRemoved: return "support removed";
  }
  return "?";
}

namespace {

// What an error says, without where in the engine's source it was raised: a normalized message's
// "<path>:<n> " and the C++ function after it ("onnxruntime::Model::Model(...)"), and "Failed to load
// model with error: ", whose text differs between releases of one engine for the same refusal.
std::string what_it_says(std::string_view message) {
  constexpr std::string_view kLocation = "<path>:<n> ", kLoad = "Failed to load model with error: ";
  std::string out;
  size_t i = 0;
  for (size_t at; (at = message.find(kLocation, i)) != std::string_view::npos;) {
    out += message.substr(i, at - i);
    i = at + kLocation.size();
    // A function: words up to its '(' (a return type, a qualified name), then balanced parentheses.
    const size_t open = message.find('(', i);
    if (open == std::string_view::npos || open - i > 200 || message.substr(i, open - i).find_first_of(".;") != std::string_view::npos)
      continue;
    int depth = 0;
    size_t end = open;
    for (; end < message.size(); ++end) {
      if (message[end] == '(') ++depth;
      else if (message[end] == ')' && --depth == 0) break;
    }
    if (end == message.size()) continue;
    i = end + 1;
    if (message.substr(i, 6) == " const") i += 6;
    while (i < message.size() && message[i] == ' ') ++i;
  }
  out += message.substr(i);
  for (size_t at; (at = out.find(kLoad)) != std::string::npos;) out.erase(at, kLoad.size());
  return out;
}

// Two failures that are not the same one: another kind, or an error or crash that says another thing.
bool another_failure(const FailureSignature& a, const FailureSignature& b) {
  if (a.kind != b.kind) return true;
  if (a.kind == FailureKind::Error || a.kind == FailureKind::Crash)
    return what_it_says(a.normalized) != what_it_says(b.normalized) || a.signal != b.signal;
  return false;
}

}  // namespace

std::vector<ReleaseChange> release_changes(const std::vector<ReleaseVerdict>& scan) {
  std::vector<ReleaseChange> changes;
  std::optional<size_t> ran, known;  // the last release that ran; the last that ran or cannot take it
  for (size_t i = 0; i < scan.size(); ++i) {
    const ReleaseVerdict& r = scan[i];
    if (!r.ran() && !r.cannot_take()) continue;
    if (known && scan[*known].cannot_take() != r.cannot_take())
      changes.push_back({r.cannot_take() ? ReleaseChangeKind::SupportRemoved : ReleaseChangeKind::SupportAdded, *known, i});
    known = i;
    if (!r.ran()) continue;
    if (ran) {
      const ReleaseVerdict& p = scan[*ran];
      if (p.fails() != r.fails())
        changes.push_back({r.fails() ? ReleaseChangeKind::Regressed : ReleaseChangeKind::Fixed, *ran, i});
      else if (r.fails() && another_failure(p.verdict->signature, r.verdict->signature))
        changes.push_back({ReleaseChangeKind::FailureChanged, *ran, i});
    }
    ran = i;
  }
  return changes;
}

const std::vector<std::string>& scan_classes() {
  static const std::vector<std::string> classes{"regressed", "failure changed", "fixed", "fails", "support removed",
                                                "support added", "passes", "cannot take", "not run"};
  return classes;
}

std::string scan_class(const std::vector<ReleaseVerdict>& scan) {
  const auto changes = release_changes(scan);
  const auto changed = [&](ReleaseChangeKind kind) {
    return std::any_of(changes.begin(), changes.end(), [&](const ReleaseChange& c) { return c.kind == kind; });
  };
  for (const ReleaseChangeKind kind : {ReleaseChangeKind::Regressed, ReleaseChangeKind::FailureChanged, ReleaseChangeKind::Fixed})
    if (changed(kind)) return to_string(kind);
  const auto any = [&](auto&& pred) { return std::any_of(scan.begin(), scan.end(), pred); };
  // A wrong answer says more than a change of support: a model first taken by a release that fails on it.
  if (any([](const ReleaseVerdict& r) { return r.fails(); })) return "fails";
  for (const ReleaseChangeKind kind : {ReleaseChangeKind::SupportRemoved, ReleaseChangeKind::SupportAdded})
    if (changed(kind)) return to_string(kind);
  if (any([](const ReleaseVerdict& r) { return r.ran(); })) return "passes";
  if (any([](const ReleaseVerdict& r) { return r.cannot_take(); })) return "cannot take";
  return "not run";
}

std::string release_folder_word(std::string spec) {
  std::replace_if(spec.begin(), spec.end(), [](char c) { return c == '@' || c == ':' || c == '/' || c == ',' || c == '='; }, '-');
  return spec;
}

std::string reduce_command_for(const std::vector<ReleaseVerdict>& scan, const ReleaseChange& change,
                               const std::string& model_path, const std::string& options, const std::string& output) {
  std::string command = "reduce " + shell_word(model_path) + " --engine " + shell_word(scan[change.failing()].spec);
  if (const auto passing = change.passing()) command += " --reference " + shell_word(scan[*passing].spec);
  return command + options + " -o " + shell_word(output);
}

std::string release_scan_summary(const std::vector<ReleaseVerdict>& scan, const std::string& model_path,
                                 const std::string& options) {
  const auto changes = release_changes(scan);
  const std::string stem = std::filesystem::path(model_path).stem().string();
  const size_t reductions = static_cast<size_t>(
      std::count_if(changes.begin(), changes.end(), [](const ReleaseChange& c) { return c.asks_for_reduction(); }));
  std::string out;
  for (const ReleaseChange& c : changes) {
    const ReleaseVerdict &a = scan[c.before], &b = scan[c.after];
    if (!out.empty()) out += "\n";
    out += std::string(to_string(c.kind)) + ": ";
    switch (c.kind) {
      case ReleaseChangeKind::Fixed: out += "fails up to " + a.spec + ", passes from " + b.spec; break;
      case ReleaseChangeKind::Regressed: out += "passes on " + a.spec + ", fails from " + b.spec; break;
      case ReleaseChangeKind::FailureChanged:
        out += a.verdict->signature.to_string() + " on " + a.spec + ", " + b.verdict->signature.to_string() + " from " + b.spec;
        break;
      case ReleaseChangeKind::SupportAdded:
        out += a.spec + " cannot take it (" + a.verdict->cannot_take + "), " + b.spec + " runs it (" +
               (b.fails() ? "and fails" : "and passes") + ")";
        break;
      case ReleaseChangeKind::SupportRemoved:
        out += a.spec + " runs it, " + b.spec + " cannot take it (" + b.verdict->cannot_take + ")";
        break;
    }
    if (!c.asks_for_reduction()) continue;
    // One folder per failing release when there are several reductions ("m.ort-1.15.1.reduced").
    const std::string spec_word = release_folder_word(scan[c.failing()].spec);
    const std::string output = reductions > 1 ? stem + "." + spec_word + ".reduced" : stem + ".reduced";
    out += ": " + reduce_command_for(scan, c, model_path, options, output);
  }
  if (!out.empty()) return out;
  size_t ran = 0, failing = 0, limited = 0;
  for (const auto& r : scan) {
    ran += r.ran();
    failing += r.fails();
    limited += r.cannot_take();
  }
  if (ran == 0) return limited ? "no release can take the model" : "no release gave a verdict";
  return failing == ran ? "every release that ran fails: no passing release to take as the reference"
                        : "every release that ran passes";
}

}  // namespace reduce
