// repro.py for ONNX Runtime (onnxruntime + numpy) and OpenCV (cv2.dnn + numpy): the model, inputs.npz
// and expected.npz of the bundle, compared by reduce's rule (docs/oracle.md) at the reduction's tolerances.
#include <nlohmann/json.hpp>

#include "adapters/script_words.h"
#include "reproduction/scripts.h"

namespace reduce::repro {

const char* const kPythonCompare = R"PY(
HERE = os.path.dirname(os.path.abspath(__file__))


def load(file, names):
    """The tensors of a .npz archive of the bundle, by name (none: an empty list of names)."""
    path = os.path.join(HERE, file)
    if not names and not os.path.exists(path):
        return {}
    with np.load(path, allow_pickle=False) as archive:
        return {name: archive[name] for name in archive.files}


def rank(values, q):
    """The element at quantile q, as reduce picks it (nearest rank)."""
    k = min(values.size - 1, int(q * (values.size - 1) + 0.5))
    return float(np.partition(values, k)[k])


def compare(actual, expected, atol, rtol):
    """What is wrong with one output ('' when it passes): shape and type, then NaN/Inf, then values."""
    actual = np.asarray(actual)
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return "engine gives %s%s, reference %s%s" % (actual.dtype, list(actual.shape), expected.dtype, list(expected.shape))
    a = actual.astype(np.float64).ravel()
    b = expected.astype(np.float64).ravel()
    fa, fb = np.isfinite(a), np.isfinite(b)
    problems = []
    new = int(np.sum(~fa & fb))
    if new:
        problems.append("%d NaN/Inf where the reference is finite" % new)
    both = ~fa & ~fb
    differs = int(np.sum(fa & ~fb)) + int(np.sum(both & ((np.isnan(a) != np.isnan(b)) | (~np.isnan(a) & (a != b)))))
    if differs:
        problems.append("%d values differ from the reference's NaN/Inf" % differs)
    finite = fa & fb
    d = np.abs(a[finite] - b[finite])
    scale = np.abs(b[finite])
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(scale != 0, d / np.where(scale != 0, scale, 1), np.where(d == 0, 0.0, np.inf))
    stat = CONFIG["stat"]
    if stat == "elemwise":
        bad = int(np.sum(d > atol + rtol * scale))
        if bad:
            problems.append("%d of %d values beyond atol %g + rtol %g x |expected| (largest error %g)"
                            % (bad, a.size, atol, rtol, float(d.max())))
    elif d.size:
        if stat == "max":
            sa, sr = float(d.max()), float(r.max())
        elif stat == "mean":
            sa, sr = float(d.mean()), float(r.mean())
        else:
            q = 0.5 if stat == "median" else CONFIG["quantile"]
            sa, sr = rank(d, q), rank(r, q)
        if sa > atol and sr > rtol:
            problems.append("%s error %g > atol %g and relative %g > rtol %g" % (stat, sa, atol, sr, rtol))
    return "; ".join(problems)


def main():
    inputs = load("inputs.npz", CONFIG["inputs"])
    expected = load("expected.npz", [o["name"] for o in CONFIG["outputs"]])
    print("model: %s   reduce saw: %s" % (CONFIG["model"], CONFIG["failure"]))
    try:
        actual = run(os.path.join(HERE, CONFIG["model"]), inputs, [o["name"] for o in CONFIG["outputs"]], expected)
    except Exception as e:  # the engine refused the model or failed to run it
        print("FAILS: the engine raised %s: %s" % (type(e).__name__, e))
        return 1
    failed = False
    for o in CONFIG["outputs"]:
        problem = compare(actual[o["name"]], expected[o["name"]], o["atol"], o["rtol"])
        print("  %s: %s" % (o["name"], problem or "as expected"))
        failed = failed or bool(problem)
    print("FAILS" if failed else "PASSES: the failure does not show")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
)PY";

namespace {

std::string header(const std::string& title, const std::string& needs) {
  return "#!/usr/bin/env python3\n# " + title + "\n# Needs " + needs +
         ". Run: python3 repro.py\n"
         "# Prints each output's comparison with expected/ (the reference's values, also in expected.npz) and\n"
         "# exits 1 when the model fails on the engine, 0 when it passes.\n"
         "import os\nimport sys\nimport json\n\nimport numpy as np\n";
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
  std::string text = header("The failure reduce found on ONNX Runtime (`" + spec_in_comment(spec) + "`), without reduce.",
                            "onnxruntime and numpy (pip install onnxruntime" +
                                (o.release.empty() ? "" : "==" + o.release) + " numpy)") +
                     "import onnxruntime as ort\n\nCONFIG = json.loads(" + python_string(config_json(context)) + ")\n\n\n" +
                     "def run(model, inputs, outputs, expected):\n"
                     "    options = ort.SessionOptions()\n"
                     "    options.graph_optimization_level = ort.GraphOptimizationLevel." +
                     kLevels[static_cast<int>(o.optimization)] + "\n" +
                     "    options.intra_op_num_threads = " + std::to_string(o.threads) + "  # 0: ONNX Runtime's default\n" +
                     "    options.inter_op_num_threads = 1\n"
                     "    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL\n"
                     "    session = ort.InferenceSession(model, options, providers=[" + python_string(python_provider(o.provider)) +
                     "])\n"
                     "    return dict(zip(outputs, session.run(outputs, inputs)))\n\n" + kPythonCompare;
  return {{"repro.py", std::move(text)}};
}

std::vector<ReproductionFile> opencv_scripts(const EngineSpec&, const ReproductionContext& context) {
  std::string text = header("The failure reduce found on OpenCV DNN (`opencv`), without reduce.",
                            "OpenCV's Python module and numpy (Debian: apt install python3-opencv)") +
                     "import cv2\n\nCONFIG = json.loads(" + python_string(config_json(context)) + ")\n\n\n" +
                     R"PY(def run(model, inputs, outputs, expected):
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

)PY" + std::string(kPythonCompare);
  return {{"repro.py", std::move(text)}};
}

}  // namespace reduce::repro
