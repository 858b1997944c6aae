// repro.sh for a cmd: or check: engine: the user's template filled with the bundle's files (its program
// carried in the bundle when the template names it by a relative path), and compare.py, which judges
// what the command did by reduce's rule: its exit status, its output, the outputs it wrote.
#include <sys/stat.h>

#include <filesystem>
#include <optional>

#include "adapters/command_template.h"
#include "adapters/script_words.h"
#include "core/mapped_file.h"
#include "reproduction/scripts.h"

namespace reduce::repro {

namespace {

namespace fs = std::filesystem;

// The bundle's stand-ins for a template's placeholders: shell text (double-quoted, expanded by the
// script: $here is the bundle, $out a fresh folder). Unknown placeholders stay as they are.
const std::pair<const char*, const char*> kPlaceholders[] = {
    {"inputs", "\"$here/inputs\""},          {"outputs", "\"$out/outputs\""},
    {"inputs_json", "\"$here/inputs.json\""}, {"outputs_json", "\"$out/outputs.json\""},
    {"timing_cache", "\"$out/timing.cache\""}, {"fp32_nodes_file", "\"$out/fp32_nodes.txt\""},
    {"trtexec_output_json", "\"$out/trtexec_outputs.json\""}, {"slot", "0"},
    {"inputs_npz", "\"$out/inputs.npz\""},   {"outputs_npz", "\"$out/outputs.npz\""}};

// A program the template names by a relative path is carried in the bundle up to this size (a
// larger one, or one given by an absolute path, is named where it is and checked before the run).
constexpr uintmax_t kCarriedProgramBytes = uintmax_t{1} << 20;

// One template token as shell text: literal parts single-quoted, placeholders expanded.
std::string shell_token(const std::string& token, const ReproductionContext& c) {
  std::string out, literal;
  auto flush = [&] {
    if (!literal.empty()) out += shell_word(literal);
    literal.clear();
  };
  for (size_t at = 0; at < token.size();) {
    const size_t close = token[at] == '{' ? token.find('}', at) : std::string::npos;
    const std::string name = close == std::string::npos ? "" : token.substr(at + 1, close - at - 1);
    std::string value;
    if (name == "model" || name == "model_inline") value = "\"$here/" + c.model_file + "\"";
    if (name == "fp32_nodes") {
      std::string list;
      for (const auto& n : c.fp32_nodes) list += (list.empty() ? "" : ",") + n;
      value = list.empty() ? "''" : shell_word(list);
    }
    for (auto [key, text] : kPlaceholders)
      if (name == key) value = text;
    if (value.empty()) {
      literal += token[at++];
      continue;
    }
    flush();
    out += value;
    at = close + 1;
  }
  flush();
  return out.empty() ? "''" : out;
}

// The template's tokens that name a file of the user's (no placeholder in them): a relative one is
// copied into the bundle's engine/ folder and used from there; an absolute one is checked to exist.
struct EnginePrograms {
  std::vector<ReproductionFile> carried;
  std::vector<std::string> line;  // the command line, as shell words
  std::string checks;             // shell lines that exit 2 when a program is missing
};

// A template token that names a file of the user's (no placeholder, not an option).
bool names_a_file(const std::string& token) {
  std::error_code ec;
  return !token.empty() && token.find('{') == std::string::npos && token[0] != '-' && fs::is_regular_file(token, ec);
}

// Where a template token's file goes in the bundle ("engine/NAME"), when it is one the bundle carries.
std::optional<std::string> carried_name(const std::string& token) {
  if (!names_a_file(token)) return {};
  std::error_code ec;
  const fs::path path(token);
  const uintmax_t bytes = fs::file_size(path, ec);
  if (!path.is_relative() || ec || bytes > kCarriedProgramBytes) return {};
  return "engine/" + path.filename().string();
}

EnginePrograms engine_programs(const std::vector<std::string>& tokens, const ReproductionContext& context) {
  EnginePrograms p;
  for (const auto& t : tokens) {
    if (!names_a_file(t)) {
      p.line.push_back(shell_token(t, context));
      continue;
    }
    if (const auto name = carried_name(t)) {
      auto bytes = read_file(t, kCarriedProgramBytes);
      struct stat st{};
      const bool executable = ::stat(t.c_str(), &st) == 0 && (st.st_mode & S_IXUSR);
      p.carried.push_back({*name, bytes ? std::move(*bytes) : std::string(), executable});
      p.line.push_back("\"$here/\"" + shell_word(*name));
      p.checks += "[ -e \"$here/\"" + shell_word(*name) + " ] || { echo " +
                  shell_word("CANNOT RUN: the engine's program " + *name + " is missing from the bundle") + "; exit 2; }\n";
      continue;
    }
    std::error_code ec;
    const fs::path path(t);
    const std::string absolute = fs::absolute(path, ec).lexically_normal().string();
    p.line.push_back(shell_word(absolute));
    p.checks += "[ -e " + shell_word(absolute) + " ] || { echo " +
                shell_word("CANNOT RUN: the engine's program " + absolute + " is missing on this machine") +
                "; exit 2; }\n";
  }
  return p;
}

// compare.py: reads what the command wrote and judges it (the judge: python_judge.cpp).
const char* const kPythonCommand = R"PY(


def read_outputs(folder, names):
    """What the command wrote, in every form reduce reads: outputs.npz, Polygraphy's outputs.json, or
    outputs/ with NAME.npy, output_K.npy, output_K.pb, NAME.pb or .pb files holding the name."""
    npz = os.path.join(folder, "outputs.npz")
    if os.path.exists(npz):
        with np.load(npz, allow_pickle=False) as archive:
            keys = archive.files
            return {n: archive[n if n in keys else "output_%d" % k] for k, n in enumerate(names)
                    if n in keys or "output_%d" % k in keys}
    polygraphy = os.path.join(folder, "outputs.json")
    if os.path.exists(polygraphy):
        results = json.load(open(polygraphy))["lst"][0][1][0]["outputs"]
        array = lambda o: o["values"] if o.get("polygraphy_class") == "LazyArray" else o  # noqa: E731
        return {n: np.load(io.BytesIO(base64.b64decode(array(results[n])["array"])), allow_pickle=False)
                for n in names if n in results}
    d = os.path.join(folder, "outputs")
    values = {}
    for k, n in enumerate(names):
        for file in (n + ".npy", "output_%d.npy" % k):
            if os.path.isfile(os.path.join(d, file)):
                values[n] = np.load(os.path.join(d, file), allow_pickle=False)
                break
        else:
            for file in ("output_%d.pb" % k, n + ".pb"):
                if os.path.isfile(os.path.join(d, file)):
                    values[n] = read_pb(os.path.join(d, file))[1]
                    break
    for file in sorted(os.listdir(d)) if len(values) < len(names) else []:
        if file.endswith(".pb"):
            name, value = read_pb(os.path.join(d, file))
            if name in names and name not in values:
                values[name] = value
    return values


# What Node.js, Python, the dynamic linker and shells print when a program's runtime is not there: the
# engine never ran (unless reduce recorded that very message).
MISSING = re.compile(r"Cannot find (module|package) '[^']+'|ModuleNotFoundError: No module named|"
                     r"ImportError: |error while loading shared libraries|command not found|: not found$|"
                     r"No such file or directory", re.M)


def missing_runtime(log):
    """The line saying what is missing, when the command's output says so and reduce saw otherwise."""
    found = MISSING.search(log)
    if not found or MISSING.search(RECORDED["message"]):
        return None
    start = log.rfind("\n", 0, found.start()) + 1
    end = log.find("\n", found.end())
    return log[start:end if end >= 0 else len(log)].strip()


def as_reduce_reads(log):
    """The command's output as reduce made its message of it: non-blank lines, each stripped and cut
    after 400 characters, joined by ' | ' (adapters/process.h, last_output_lines); all of them here."""
    lines = []
    for line in log.splitlines():
        line = line.strip(" \t\r")
        if line:
            lines.append(line if len(line) <= 400 else line[:400] + " [line truncated]")
    return " | ".join(lines)


def judge_check(status, log):
    """A check: script's verdict by Polygraphy's rule, as reduce applied it (docs/oracle.md)."""
    patterns = RECORDED["patterns"] if RECORDED["any_kind"] else []
    matched = any(re.search(p, log) for p in patterns)
    if status in CONFIG["ignore_fail_codes"]:
        fails = False
    elif CONFIG["fail_codes"]:
        fails = status in CONFIG["fail_codes"] and (not patterns or matched)
    elif patterns:
        fails = matched
    else:
        fails = status != 0
    if not fails:
        print("PASSES: the check exited with status %d%s" % (status, ", and no --fail-regex matched" if patterns else ""))
        return 0
    return judge("error", log.strip() or "check script exit code %d" % status, exit_code=status)


def main():
    if sys.argv[1] == "--npz":
        return write_npz(sys.argv[2], sys.argv[3])
    folder, status = sys.argv[1], int(sys.argv[2])
    limited = len(sys.argv) > 3 and sys.argv[3] != ""
    values = len(sys.argv) <= 4 or sys.argv[4] != ""  # "": the tool wrote no outputs (trtexec alone)
    with open(os.path.join(folder, "log"), encoding="utf-8", errors="replace") as f:
        log = f.read()
    print("model: %s   reduce recorded: %s" % (CONFIG["model"], RECORDED["kind"]))
    if status in (126, 127):
        lines = log.strip().splitlines()
        return cannot_run("the engine's command could not start (exit status %d%s)" % (status, ": " + lines[-1] if lines else ""))
    if limited and status == 124:
        return judge("timeout", "the command gave no answer within %g s" % CONFIG["timeout"])
    missing = missing_runtime(log) if status != 0 else None
    if missing:
        return cannot_run("the engine's command could not find what it needs: %s" % missing)
    if 128 < status < 160:
        return judge("crash", "the command was killed by signal %d" % (status - 128), signal=status - 128)
    if CHECK:
        return judge_check(status, log)
    if status != 0:
        return judge("error", as_reduce_reads(log) or "command failed with exit code %d" % status)
    if not values:
        if RECORDED["kind"] in ("mismatch", "nonfinite", "shape") or RECORDED["any_kind"]:
            return cannot_run("the tool ran, but wrote no outputs to compare (trtexec alone): with Polygraphy on PATH "
                              "this script compares them")
        print("PASSES: the tool ran without the recorded %s" % RECORDED["kind"])
        return 0
    if np is None:
        return cannot_run("the Python module numpy is missing (pip install numpy; Debian: apt install python3-numpy)")
    names = [o["name"] for o in CONFIG["outputs"]]
    return judge_outputs(read_outputs(folder, names), load_folder("expected"))


NPY_DESCR = {1: "<f4", 2: "|u1", 3: "|i1", 4: "<u2", 5: "<i2", 6: "<i4", 7: "<i8", 9: "|b1", 10: "<f2", 11: "<f8",
             12: "<u4", 13: "<u8"}


def write_npz(folder, file):
    """The bundle's inputs/ as the .npz archive a command's {inputs_npz} names (an entry NAME.npy per
    tensor, stored): written without numpy, from the raw data reduce wrote."""
    import zipfile
    with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED) as archive:
        for f in sorted(os.listdir(folder)):
            if not f.endswith(".pb"):
                continue
            name, dims, dtype, raw, _ = read_pb_fields(os.path.join(folder, f))
            if raw is None or dtype not in NPY_DESCR:
                return cannot_run("%s: a tensor of ONNX type %d without raw data cannot be written as .npy here" % (f, dtype))
            header = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (NPY_DESCR[dtype], tuple(dims))
            header += " " * (63 - (10 + len(header)) % 64) + "\n"
            archive.writestr(name + ".npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + raw)
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main))
)PY";

}  // namespace

std::string compare_py(const ReproductionContext& context, bool check) {
  std::string text = "#!/usr/bin/env python3\n"
                     "# Judges what the engine's command did (its exit status, its output, the outputs it wrote) as reduce\n"
                     "# does, and exits by the bundle's contract: 1 fails the way reduce recorded, 0 passes, 3 fails another\n"
                     "# way, 2 cannot run. Used by repro.sh (python3 compare.py FOLDER STATUS [LIMITED]); numpy for outputs.\n"
                     "import base64\nimport io\nimport json\nimport math\nimport os\nimport re\nimport struct\nimport sys\n\n"
                     "try:\n    import numpy as np\nexcept ImportError:\n    np = None\n\n"
                     "CONFIG = json.loads(" + python_string(config_json(context)) + ")\n" +
                     "CHECK = " + (check ? "True" : "False") + "\n";
  return text + kPythonJudge + kPythonCommand;
}


std::vector<ReproductionFile> command_scripts(const EngineSpec& spec, const ReproductionContext& context) {
  auto tokens = split_command_template(spec.command);
  if (!tokens) return reduce_check_scripts(spec, context);
  for (const auto& t : *tokens)  // trtexec's raw input files are not in a bundle
    if (t.find("{trtexec_inputs}") != std::string::npos || t.find("{trtexec_shapes}") != std::string::npos)
      return reduce_check_scripts(spec, context);
  const bool check = !spec.gives_values();
  // Without data compare.py reads (a tensor type numpy has not) it has nothing to compare with.
  const bool npz = spec.command.find("{inputs_npz}") != std::string::npos;
  if (!context.script_data && (!check || npz)) return reduce_check_scripts(spec, context);
  EnginePrograms programs = engine_programs(*tokens, context);
  std::string text =
      std::string("#!/bin/sh\n# The failure reduce found with ") + (check ? "the check script" : "the engine's command") +
      " (`" + spec_in_comment(spec) + "`), without reduce.\n"
      "# Run: sh repro.sh   Exit status: 1 the engine fails the way reduce recorded, 0 it passes, 3 it fails\n"
      "# another way, 2 it cannot run here. compare.py (python3; numpy for outputs) judges what the command did.\n"
      "here=$(cd \"$(dirname \"$0\")\" && pwd)\n"
      "command -v python3 >/dev/null 2>&1 || { echo 'CANNOT RUN: python3 is needed to judge the result'; exit 2; }\n" +
      programs.checks +
      "out=$(mktemp -d) || exit 2\n"
      "trap 'rm -rf \"$out\"' EXIT\n"
      "mkdir \"$out/outputs\"\n";
  // As the command ran, unless the maintainer's shell sets it (NODE_PATH to another release).
  for (const auto& [name, value] : context.environment)
    text += "[ -n \"${" + name + "+set}\" ] || " + name + "=" + shell_word(value) + "\nexport " + name + "\n";
  if (!context.fp32_nodes.empty()) {
    text += "printf '%s\\n'";
    for (const auto& n : context.fp32_nodes) text += " " + shell_word(n);
    text += " > \"$out/fp32_nodes.txt\"\n";
  }
  if (npz)  // the command reads an .npz archive: made from inputs/, the one copy the bundle keeps
    text += "python3 \"$here/compare.py\" --npz \"$here/inputs\" \"$out/inputs.npz\" || exit 2\n";
  text += "limit=''\n";
  if (context.timeout_seconds > 0) {
    std::string seconds = std::to_string(static_cast<long long>(context.timeout_seconds + 0.999));
    text += "command -v timeout >/dev/null 2>&1 && limit='timeout " + seconds + "'\n";
  }
  text += "$limit";
  for (const auto& word : programs.line) text += " " + word;
  text += " > \"$out/log\" 2>&1\nstatus=$?\ntail -n 40 \"$out/log\"\n"
          "python3 \"$here/compare.py\" \"$out\" \"$status\" \"$limit\"\n";
  std::vector<ReproductionFile> files{{"repro.sh", std::move(text)}, {"compare.py", compare_py(context, check)}};
  for (auto& f : programs.carried) files.push_back(std::move(f));
  return files;
}

}  // namespace reduce::repro

namespace reduce {

std::string bundle_engine_spec(const EngineSpec& spec) {
  const std::string text = to_string(spec);
  auto tokens = split_command_template(spec.command);
  if (spec.command.empty() || !tokens || !text.ends_with(spec.command)) return text;
  bool carried = false;
  std::string command;
  for (const auto& t : *tokens) {
    const auto name = repro::carried_name(t);
    carried |= name.has_value();
    command += (command.empty() ? "" : " ") + shell_word(name.value_or(t));
  }
  return carried ? text.substr(0, text.size() - spec.command.size()) + command : text;
}

}  // namespace reduce
