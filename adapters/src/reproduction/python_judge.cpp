// The Python every script of a bundle judges with (repro.py, compare.py): reduce's comparison
// (docs/oracle.md) and its same-failure rule, giving the exit contract of docs/reference.md.
#include "reproduction/scripts.h"

namespace reduce::repro {

const char* const kPythonJudge = R"PY(
HERE = os.path.dirname(os.path.abspath(__file__))
RECORDED = CONFIG["recorded"]


def cannot_run(why):
    """Exit status 2: the engine did not run, so nothing is said about the model."""
    print("CANNOT RUN: " + why)
    return 2


def show_release(running):
    """The engine release this script loaded beside the one reduce ran; first, when they differ."""
    recorded = CONFIG["release"]
    number = re.compile(r"\d+\.\d+(\.\d+)?")
    a, b = number.search(running or ""), number.search(recorded or "")
    if a and b and a.group(0) != b.group(0):
        print("NOTE: this runs %s; reduce found the failure on %s" % (running, recorded))
    else:
        print("engine: %s   (reduce ran: %s)" % (running or "unknown", recorded or "unknown"))


def guarded(run, *args):
    """run(*args), or 2 when the script itself fails (an unreadable file, a regex Python cannot
    compile): a status of 1 must only ever mean that the engine failed the recorded way."""
    try:
        return run(*args)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: B902
        print("CANNOT RUN: the script could not judge the run: %s: %s" % (type(e).__name__, e))
        return 2


TYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
         10: "float16", 11: "float64", 12: "uint32", 13: "uint64"}


def varint(data, at):
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def read_pb_fields(path):
    """An ONNX TensorProto file's name, dims, data type, raw data (or None) and typed values."""
    data = open(path, "rb").read()
    name, dims, dtype, raw, typed, at = "", [], 1, None, [], 0
    while at < len(data):
        key, at = varint(data, at)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, at = varint(data, at)
            if field == 1:
                dims.append(value)
            elif field == 2:
                dtype = value
            elif field in (5, 7, 11):
                typed.append(value)
        elif wire == 2:
            length, at = varint(data, at)
            chunk, at = data[at:at + length], at + length
            if field == 9:
                raw = chunk
            elif field == 8:
                name = chunk.decode("utf-8", "replace")
            elif field == 1:
                p = 0
                while p < len(chunk):
                    v, p = varint(chunk, p)
                    dims.append(v)
            elif field == 4:
                typed.extend(struct.unpack("<%df" % (len(chunk) // 4), chunk))
            elif field == 10:
                typed.extend(struct.unpack("<%dd" % (len(chunk) // 8), chunk))
            elif field in (5, 7, 11):
                p = 0
                while p < len(chunk):
                    v, p = varint(chunk, p)
                    typed.append(v)
        elif wire == 5:
            typed.append(struct.unpack("<f", data[at:at + 4])[0])
            at += 4
        elif wire == 1:
            at += 8
    return name, dims, dtype, raw, typed


def read_pb(path):
    """An ONNX TensorProto file: (its name, the array) from dims, data type and raw or typed data."""
    name, dims, dtype, raw, typed = read_pb_fields(path)
    kind = np.dtype(TYPES[dtype])
    if raw is not None:
        return name, np.frombuffer(raw, dtype=kind).reshape(dims)
    if dtype == 10:  # float16 bits in int32_data
        return name, np.array(typed, dtype=np.uint16).view(np.float16).reshape(dims)
    if dtype in (3, 5, 6, 7):  # varints of negative values are 64-bit two's complement
        typed = [v - (1 << 64) if v >= 1 << 63 else v for v in typed]
    return name, np.array(typed, dtype=kind).reshape(dims)


def load_folder(folder):
    """The tensors of one of the bundle's folders (inputs/, expected/), by the names they hold."""
    path = os.path.join(HERE, folder)
    if not os.path.isdir(path):
        return {}
    return dict(read_pb(os.path.join(path, f)) for f in sorted(os.listdir(path)) if f.endswith(".pb"))


def same_message(message):
    patterns = RECORDED["patterns"]
    return not patterns or any(re.search(p, message) for p in patterns)


def shorten(message, limit=4000):
    return message if len(message) <= limit else message[:limit // 2] + "\n[...]\n" + message[-limit // 2:]


def judge(kind, message, signal=0, magnitude=0, shape="", exit_code=0):
    """Exit status 1 when the engine failed the way reduce recorded, else 3; prints which."""
    r = RECORDED
    if r["any_kind"]:  # --fail-regex: any failure whose message matches
        same = same_message(message)
    elif kind != r["kind"]:
        same = False
    elif kind == "error":
        same = (not r["exit_code"] or exit_code == r["exit_code"]) and same_message(message)
    elif kind == "crash":
        same = signal == r["signal"]
    elif kind == "shape":
        same = shape == r["shape"]
    elif kind == "mismatch":  # plain rounding noise does not stand in for the recorded error
        same = magnitude >= r["magnitude"] - 1
    else:
        same = True
    if same:
        print("FAILS as reduce recorded (%s): %s" % (kind, shorten(message)))
        return 1
    print("FAILS ANOTHER WAY (%s): %s" % (kind, shorten(message)))
    print("  reduce recorded (%s): %s" % (r["kind"], shorten(r["message"])))
    return 3


def rank(values, q):
    """The element at quantile q, as reduce picks it (nearest rank)."""
    k = min(values.size - 1, int(q * (values.size - 1) + 0.5))
    return float(np.partition(values, k)[k])


def compare(actual, expected, atol, rtol):
    """One output as reduce compares it: (what is wrong, '' when nothing; a dict of what differs)."""
    actual = np.asarray(actual)
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        return ("%s%s on the engine, %s%s on the reference" % (actual.dtype, list(actual.shape), expected.dtype,
                                                               list(expected.shape)),
                {"dtype": actual.dtype != expected.dtype, "shape": actual.shape != expected.shape})
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
        problems.append("%d values differ where the reference is NaN/Inf (e.g. finite where it is -inf)" % differs)
    finite = fa & fb
    d = np.abs(a[finite] - b[finite])
    scale = np.abs(b[finite])
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(scale != 0, d / np.where(scale != 0, scale, 1), np.where(d == 0, 0.0, np.inf))
        stat = CONFIG["stat"]
        ratio = 0.0
        if stat == "elemwise":
            allowed = atol + rtol * scale
            bad = int(np.sum(d > allowed))
            if d.size:
                ratio = float(np.max(np.where(allowed > 0, d / np.where(allowed > 0, allowed, 1), np.where(d > 0, np.inf, 0))))
            if bad:
                problems.append("%d of %d values beyond atol %g + rtol %g x |expected| (largest error %g)"
                                % (bad, a.size, atol, rtol, float(d.max())))
        else:
            sa = sr = 0.0
            if d.size:
                if stat == "max":
                    sa, sr = float(d.max()), float(r.max())
                elif stat == "mean":
                    sa, sr = float(d.mean()), float(r.mean())
                else:
                    q = 0.5 if stat == "median" else CONFIG["quantile"]
                    sa, sr = rank(d, q), rank(r, q)
            ratio = min(sa / atol if atol > 0 else float("inf"), sr / rtol if rtol > 0 else float("inf"))
            if sa > atol and sr > rtol:
                problems.append("%s error %g > atol %g and relative %g > rtol %g" % (stat, sa, atol, sr, rtol))
    if differs:
        ratio = float("inf")
    return "; ".join(problems), {"nonfinite": new > 0, "ratio": ratio}


def magnitude_class(ratio):
    if not ratio > 1:
        return 0
    if ratio == float("inf"):
        return 99
    return int(math.floor(math.log10(ratio)))


def judge_outputs(actual, expected):
    """The verdict on the outputs the engine gave, as reduce's oracle gives it (oracle/verdict.cpp)."""
    dtype = shape = nonfinite = False
    structural, worst, first_shape, first_values = 0, 0.0, "", ""
    for o in CONFIG["outputs"]:
        name = o["name"]
        if name not in actual:
            return judge("error", "the engine gave no value for output '%s'" % name)
        problem, what = compare(actual[name], expected[name], o["atol"], o["rtol"])
        print("  %s: %s" % (name, problem or "as expected"))
        if not problem:
            continue
        if "shape" in what:
            structural += 1
            dtype, shape = dtype or what["dtype"], shape or what["shape"]
            first_shape = first_shape or "output `%s` is %s" % (name, problem)
        else:
            nonfinite = nonfinite or what["nonfinite"]
            worst = max(worst, what["ratio"])
            first_values = first_values or "output '%s': %s" % (name, problem)
    if structural:
        differs = "element type and shape differ" if dtype and shape else "element type differs" if dtype else "shape differs"
        return judge("shape", first_shape, shape=differs)
    if first_values:
        return judge("nonfinite" if nonfinite else "mismatch", first_values, magnitude=magnitude_class(worst))
    print("PASSES: the engine gives the expected values (reduce recorded: %s)" % RECORDED["kind"])
    return 0
)PY";

}  // namespace reduce::repro
