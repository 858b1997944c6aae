// repro.py for ONNX Runtime (onnxruntime + numpy) and OpenCV (cv2.dnn + numpy): the model, inputs/ and
// expected/ of the bundle (TensorProto files, read without onnx), run in a process of its own (a crash is a verdict) and judged by
// reduce's rule (python_judge.cpp) at the reduction's tolerances.
#include <nlohmann/json.hpp>

#include "adapters/script_words.h"
#include "core/base64.h"
#include "reproduction/scripts.h"

namespace reduce::repro {

namespace {

// After the engine's own part (RUNTIME, INSTALL, engine_release, message_of, run) and the judge.
const char* const kPythonMain = R"PY(

# The engine's process exits with this when the script, not the engine, failed there.
SCRIPT_FAILED = 20


def engine_process(folder):
    """Runs the engine on the bundle's files and saves what it gave in `folder` (outputs.npz, or
    error.txt with its message when it raised). A process of its own: a crash is a verdict."""
    engine = importlib.import_module(RUNTIME)
    inputs = load_folder("inputs") if CONFIG["inputs"] else {}
    expected = load_folder("expected")
    names = [o["name"] for o in CONFIG["outputs"]]
    try:
        actual = run(engine, os.path.join(HERE, CONFIG["model"]), inputs, names, expected)
    except Exception as e:  # the engine refused the model or failed to run it
        with open(os.path.join(folder, "error.txt"), "w", encoding="utf-8") as f:
            f.write(message_of(e))
        return 0
    np.savez(os.path.join(folder, "outputs.npz"),
             **{"output_%d" % k: np.asarray(actual[n]) for k, n in enumerate(names) if n in actual})
    return 0


def unpack(folder):
    """This script pasted alone: the bundle's files it carries (EMBEDDED), written into `folder`."""
    for name, data in EMBEDDED.items():
        os.makedirs(os.path.dirname(os.path.join(folder, name)), exist_ok=True)
        with open(os.path.join(folder, name), "wb") as f:
            f.write(base64.b64decode(data))
    return folder


def main(scratch):
    global HERE
    if len(sys.argv) == 4 and sys.argv[1] == "--engine-process":
        HERE = sys.argv[3]
        return 0 if guarded(engine_process, sys.argv[2]) == 0 else SCRIPT_FAILED
    if np is None:
        return cannot_run("the Python module numpy is missing (%s)" % INSTALL)
    try:
        engine = importlib.import_module(RUNTIME)
    except Exception as e:  # not installed, or its native library does not load
        return cannot_run("the Python module %s cannot be loaded: %s (%s)" % (RUNTIME, str(e).splitlines()[0], INSTALL))
    show_release(engine_release(engine))
    needed = [CONFIG["model"], "expected"] + (["inputs"] if CONFIG["inputs"] else [])
    if EMBEDDED and not all(os.path.exists(os.path.join(HERE, file)) for file in needed):
        HERE = unpack(scratch)
    for file in needed:
        if not os.path.exists(os.path.join(HERE, file)):
            return cannot_run("%s is missing from %s" % (file, HERE))
    print("model: %s   reduce recorded: %s" % (CONFIG["model"], RECORDED["kind"]))
    sys.stdout.flush()
    folder = os.path.join(scratch, "engine")
    os.mkdir(folder)
    try:
        child = subprocess.run([sys.executable, os.path.abspath(__file__), "--engine-process", folder, HERE],
                               timeout=CONFIG["timeout"] or None)
    except subprocess.TimeoutExpired:
        return judge("timeout", "the engine gave no answer within %g s" % CONFIG["timeout"])
    if child.returncode < 0:
        return judge("crash", "the engine's process was killed by signal %d" % -child.returncode, signal=-child.returncode)
    if child.returncode == SCRIPT_FAILED:
        return cannot_run("the engine's process could not run it (above)")
    if child.returncode != 0:
        return judge("crash", "the engine's process exited with code %d" % child.returncode)
    error = os.path.join(folder, "error.txt")
    if os.path.exists(error):
        with open(error, encoding="utf-8", errors="replace") as f:
            return judge("error", f.read())
    with np.load(os.path.join(folder, "outputs.npz"), allow_pickle=False) as archive:
        actual = {o["name"]: archive["output_%d" % k] for k, o in enumerate(CONFIG["outputs"])
                  if "output_%d" % k in archive.files}
    return judge_outputs(actual, load_folder("expected"))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        status = guarded(main, scratch)
    sys.exit(status)
)PY";

// The bundle's files a small reproducer carries (ReproductionContext::embedded), base64, so that the
// script pasted alone into an issue reproduces; {} when it carries none.
std::string embedded_python(const ReproductionContext& context) {
  std::string text = "# The bundle's files, for this script pasted alone (base64; written to a temporary folder).\nEMBEDDED = {";
  for (const auto& [name, bytes] : context.embedded) text += "\n    " + python_string(name) + ": " + python_string(encode_base64(bytes)) + ",";
  return text + (context.embedded.empty() ? "}\n" : "\n}\n");
}

// `needs`: the modules in words; `install`: how to get them (printed with a CANNOT RUN).
std::string header(const std::string& title, const std::string& runtime, const std::string& needs,
                   const std::string& install, const ReproductionContext& context) {
  return "#!/usr/bin/env python3\n# " + title + "\n# Needs " + needs + " (" + install + ")" +
         ". Run: python3 repro.py\n"
         "# Prints each output's comparison with expected/ (the reference's values, ONNX TensorProto files).\n"
         "# Exit status: 1 the engine fails the way reduce recorded, 0 it passes, 3 it fails another way,\n"
         "# 2 it cannot run here (a module or a file is missing). The engine runs in a process of its own.\n"
         "import base64\nimport importlib\nimport json\nimport math\nimport os\nimport re\nimport struct\nimport subprocess\n"
         "import sys\nimport tempfile\n\n"
         "try:\n    import numpy as np\nexcept ImportError:\n    np = None\n\n"
         "CONFIG = json.loads(" + python_string(config_json(context)) + ")\n" +
         "RUNTIME = " + python_string(runtime) + "\nINSTALL = " + python_string(install) + "\n" + embedded_python(context);
}

// ONNX Runtime's Python names of reduce's `ep=` words.
std::string python_provider(const std::string& ep) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"cpu", "CPUExecutionProvider"},     {"cuda", "CUDAExecutionProvider"},   {"tensorrt", "TensorrtExecutionProvider"},
      {"dml", "DmlExecutionProvider"},     {"coreml", "CoreMLExecutionProvider"}, {"openvino", "OpenVINOExecutionProvider"},
      {"webgpu", "WebGpuExecutionProvider"}, {"qnn", "QNNExecutionProvider"}};
  for (auto [word, name] : kNames)
    if (ep == word) return name;
  return ep;
}

}  // namespace

std::vector<ReproductionFile> ort_python(const EngineSpec& spec, const ReproductionContext& context) {
  const OrtOptions& o = spec.ort;
  static const char* kLevels[] = {"ORT_DISABLE_ALL", "ORT_ENABLE_BASIC", "ORT_ENABLE_EXTENDED", "ORT_ENABLE_ALL"};
  const std::string provider = python_string(python_provider(o.provider));
  std::string text =
      header("The failure reduce found on ONNX Runtime (`" + spec_in_comment(spec) + "`), without reduce.", "onnxruntime",
             "onnxruntime and numpy", "pip install onnxruntime" + (o.release.empty() ? "" : "==" + o.release) + " numpy",
             context) +
      "PROVIDER = " + provider + "\n\n\n" +
      "def engine_release(ort):\n"
      "    return \"onnxruntime %s (%s)\" % (ort.__version__, PROVIDER)\n\n\n"
      "def message_of(error):\n"
      "    \"\"\"The message as reduce reads it from onnxruntime-node (Python adds an error-code prefix).\"\"\"\n"
      "    text = re.sub(r\"^\\[ONNXRuntimeError\\] : \\d+ : \\w+ : \", \"\", str(error).strip())\n"
      "    return \"ONNX Runtime: \" + text.replace(\"\\n\", \" \")\n\n\n"
      "def run(ort, model, inputs, outputs, expected):\n"
      "    options = ort.SessionOptions()\n"
      "    options.graph_optimization_level = ort.GraphOptimizationLevel." +
      kLevels[static_cast<int>(o.optimization)] + "\n" +
      "    options.intra_op_num_threads = " + std::to_string(o.threads) + "  # 0: ONNX Runtime's default\n" +
      "    options.inter_op_num_threads = 1\n"
      "    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL\n"
      "    session = ort.InferenceSession(model, options, providers=[PROVIDER])\n"
      "    return dict(zip(outputs, session.run(outputs, inputs)))\n" +
      kPythonJudge + kPythonMain;
  return {{"repro.py", std::move(text)}};
}

std::vector<ReproductionFile> opencv_scripts(const EngineSpec&, const ReproductionContext& context) {
  std::string text =
      header("The failure reduce found on OpenCV DNN (`opencv`), without reduce.", "cv2",
             "OpenCV's Python module and numpy",
             "Debian: apt install python3-opencv python3-numpy; elsewhere: pip install opencv-python numpy", context) +
      R"PY(

def engine_release(cv2):
    return "OpenCV %s" % cv2.__version__


def message_of(error):
    """The message as reduce reads it from OpenCV (one line; the node's error, not the importer's wrapper)."""
    err = getattr(error, "err", "") or ""
    text = err if "OpenCV(" in err else str(error)
    text = re.sub(r"OpenCV\([\s\S]*?: error: ", "", text)
    text = re.sub(r"in function '([^'(]*)[^']*'",
                  lambda m: "in function '%s'" % re.split(r"::| ", m.group(1))[-1], text)
    lines = [line.lstrip(" \t>") for line in text.replace("\r", "\n").split("\n")]
    return "OpenCV: " + re.sub(r"[ \t]+", " ", " ".join(line for line in lines if line)).strip()


def run(cv2, model, inputs, outputs, expected):
    net = cv2.dnn.readNetFromONNX(model)
    net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
    net.setPreferableTarget(cv2.dnn.DNN_TARGET_CPU)
    for name, value in inputs.items():
        if value.dtype == np.int64:  # OpenCV holds int64 as int32
            value = value.astype(np.int32)
        if value.ndim < 2:  # and has no Mat of rank 0 or 1
            value = value.reshape((1,) * (2 - value.ndim) + value.shape)
        net.setInput(value, name)
    values = net.forward(outputs)
    return {name: as_declared(value, expected[name]) for name, value in zip(outputs, values)}


def as_declared(value, expected):
    """OpenCV's Mat as the model declares the output, where only the representation differs."""
    if expected.ndim < 2 and value.size == expected.size:
        value = value.reshape(expected.shape)
    if expected.dtype == np.int64 and value.dtype == np.int32:
        value = value.astype(np.int64)
    if expected.dtype == np.bool_ and value.dtype in (np.int32, np.uint8):
        value = value != 0
    return value
)PY" + std::string(kPythonJudge) +
      kPythonMain;
  return {{"repro.py", std::move(text)}};
}

}  // namespace reduce::repro
