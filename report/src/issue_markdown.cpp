// issue.md: the reproducer as the engine's own bug template asks for it (ONNX Runtime, OpenCV,
// TensorRT), its script inline, so that the text pasted into a new issue is the whole report.
#include <sys/utsname.h>

#include <fstream>
#include <sstream>

#include "adapters/engine_spec.h"
#include "core/version.h"
#include "report/report.h"
#include "oracle/verdict_report.h"
#include "report/reproducer_section.h"

namespace reduce {

namespace {

struct Platform {
  std::string os = "Linux", os_version, arch, compiler = "g++ " __VERSION__;
};

Platform platform() {
  Platform p;
  struct utsname u;
  if (uname(&u) == 0) {
    p.os = u.sysname;
    p.arch = u.machine;
    p.os_version = std::string(u.sysname) + " " + u.release;
  }
  std::ifstream release("/etc/os-release");
  for (std::string line; std::getline(release, line);)
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string name = line.substr(12);
      if (name.size() >= 2 && name.front() == '"') name = name.substr(1, name.size() - 2);
      p.os_version = name + " (" + p.os_version + ")";
    }
  return p;
}

// What the bug is, in the words a maintainer reads first.
void describe(const ReductionReport& r, std::ostream& md) {
  md << "`" << (r.engine_release.empty() ? r.engine : r.engine_release) << "` gives a wrong answer (" << to_string(r.failure.kind)
     << ") on a " << r.reduced_nodes << "-node model (";
  bool first = true;
  for (const auto& [op, n] : r.reduced_op_types) md << (first ? "" : ", ") << op << (n > 1 ? " x" + std::to_string(n) : ""), first = false;
  md << "):\n\n```\n" << shown_message(r.reduced_failure.message.empty() ? r.failure.message : r.reduced_failure.message)
     << "\n```\n\nExpected: the values of the reference (`" << r.reference << "`";
  if (r.reference == "ref") md << ", an exact ONNX interpreter";
  md << ") within atol " << format_number(r.tolerance.atol) << ", rtol " << format_number(r.tolerance.rtol)
     << ". The model is a " << (r.one_minimal ? "1-minimal " : "") << "reduction of a " << r.original_nodes
     << "-node model made by reduce " << kReduceVersion << " (removing any one node makes the failure disappear).";
  if (r.rounding.explained)
    md << " Note: the exact " << r.rounding.precision << " reference (`" << r.rounding.engine
       << "`) fails the same way, so this may be " << r.rounding.precision << " rounding rather than a bug.";
  md << "\n\n";
}

// The script inline when it carries the bundle's files, else how to run it beside them.
void reproduce(const ReductionReport& r, const std::string& script, const std::string& text, bool standalone,
               std::ostream& md) {
  const bool node = script.ends_with(".mjs");
  const std::string run = node ? "node " + script : script.ends_with(".py") ? "python3 " + script : "sh " + script;
  if (standalone)
    md << "Save this as `" << script << "` and run `" << run << "`: it carries the model and its data, exits 1 while the "
       << "bug is there and 0 once it is fixed.\n\n```" << (node ? "js" : "python") << "\n" << text << "\n```\n\n";
  else
    md << "Attach the bundle's `" << r.reproducer_model << "` with its `inputs/` and `expected/` folders (ONNX TensorProto "
       << "files) and run `" << run << "` beside them: it exits 1 while the bug is there and 0 once it is fixed.\n\n";
  md << "The model:\n\n" << r.reproducer << "\n";
}

void onnxruntime(const ReductionReport& r, const EngineSpec& spec, const std::string& script, const std::string& text,
                 bool standalone, std::ostream& md) {
  const Platform p = platform();
  const bool web = spec.innermost().kind == EngineKind::OrtWeb;
  md << "### Describe the issue\n\n";
  describe(r, md);
  md << "### To reproduce\n\n";
  reproduce(r, script, text, standalone, md);
  md << "### Urgency\n\n(none given)\n\n### Platform\n\n" << p.os << "\n\n### OS Version\n\n" << p.os_version
     << "\n\n### ONNX Runtime Installation\n\nReleased Package\n\n### ONNX Runtime Version or Commit ID\n\n"
     << (r.engine_release.empty() ? "unknown" : r.engine_release.substr(0, r.engine_release.find(" (")))
     << "\n\n### ONNX Runtime API\n\n" << (script.ends_with(".py") ? "Python" : "JavaScript") << "\n\n### Architecture\n\n"
     << (p.arch == "x86_64" ? "X64" : p.arch == "aarch64" ? "ARM64" : p.arch) << "\n\n### Execution Provider\n\n"
     << (web ? "WebAssembly (wasm)" : spec.innermost().ort.provider == "cpu" ? "Default CPU" : spec.innermost().ort.provider)
     << "\n";
}

void opencv(const ReductionReport& r, const std::string& script, const std::string& text, bool standalone, std::ostream& md) {
  const Platform p = platform();
  md << "### System Information\n\n" << (r.engine_release.empty() ? "OpenCV" : r.engine_release)
     << " (python: `cv2.dnn`, DNN_BACKEND_OPENCV, DNN_TARGET_CPU)\nOperating System / Platform: " << p.os_version << " "
     << p.arch << "\nCompiler & compiler version: " << p.compiler << "\n\n### Detailed description\n\n";
  describe(r, md);
  md << "### Steps to reproduce\n\n";
  reproduce(r, script, text, standalone, md);
}

void tensorrt(const ReductionReport& r, const std::string& script, const std::string& text, std::ostream& md) {
  const Platform p = platform();
  md << "## Description\n\n";
  describe(r, md);
  md << "## Environment\n\n**TensorRT Version**: " << (r.engine_release.empty() ? "(see `trtexec --version`)" : r.engine_release)
     << "\n\n**Operating System**: " << p.os_version << " " << p.arch
     << "\n\n**NVIDIA GPU, driver, CUDA, cuDNN**: (fill in: `nvidia-smi`)\n\n## Relevant Files\n\nThe bundle's `"
     << r.reproducer_model << "`, `inputs.json` and `expected.json`.\n\n## Steps To Reproduce\n\n";
  reproduce(r, script, text, false, md);
  md << "**Can this model run on other frameworks?** Its expected values are those of `" << r.reference << "`.\n";
}

}  // namespace

std::string issue_markdown(const ReductionReport& r, const std::string& script, const std::string& text, bool standalone) {
  const std::optional<EngineSpec>& spec = r.engine_spec;
  if (!spec) return {};
  std::ostringstream md;
  md << "<!-- " << (spec->innermost().kind == EngineKind::Trt ? "TensorRT" : "the engine's")
     << " bug template, filled by reduce " << kReduceVersion << " from this bundle (report.md has the rest) -->\n\n";
  switch (spec->innermost().kind) {
    case EngineKind::Ort:
    case EngineKind::OrtWeb: onnxruntime(r, *spec, script, text, standalone, md); break;
    case EngineKind::OpenCV:
    case EngineKind::OpenCVInProcess: opencv(r, script, text, standalone, md); break;
    case EngineKind::Trt: tensorrt(r, script, text, md); break;
    default: return {};
  }
  return md.str();
}

}  // namespace reduce
