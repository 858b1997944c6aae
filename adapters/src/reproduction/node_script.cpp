// repro.mjs for onnxruntime-node: the bundle's model, inputs/ and expected/ (TensorProto files, read
// here without any package but onnxruntime-node), compared by reduce's rule at the reduction's tolerances.
#include <nlohmann/json.hpp>

#include "core/base64.h"
#include "reproduction/scripts.h"

namespace reduce::repro {

namespace {

const char* const kNodeBody = R"JS(
const require = createRequire(import.meta.url);
const INSTALL = `npm install ${RELEASE}, here or on NODE_PATH`;
// The bundle's folder: this script's, the child's argument, or (pasted alone) a temporary one
// holding the files it carries (EMBEDDED).
let here = process.argv[2] === '--engine-process' ? process.argv[3] : dirname(fileURLToPath(import.meta.url));

// ONNX element types (TensorProto.DataType) and the ONNX Runtime tensor types and arrays that hold them.
const kOnnxTypes = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array], 4: ['uint16', Uint16Array],
  5: ['int16', Int16Array], 6: ['int32', Int32Array], 7: ['int64', BigInt64Array], 9: ['bool', Uint8Array],
  10: ['float16', Uint16Array], 11: ['float64', Float64Array], 12: ['uint32', Uint32Array], 13: ['uint64', BigUint64Array],
};

function varint(bytes, at) {
  let value = 0, scale = 1;
  for (;;) {
    if (at >= bytes.length) throw new Error('a truncated TensorProto');
    const b = bytes[at++];
    value += (b & 0x7f) * scale;
    scale *= 128;
    if (b < 0x80) return [value, at];
  }
}

// A TensorProto file as reduce writes it: name, dims, data type and raw data.
function readPb(bytes, what) {
  let name = '', type = 1, raw = null;
  const dims = [];
  for (let at = 0; at < bytes.length;) {
    let key, value;
    [key, at] = varint(bytes, at);
    const field = Math.floor(key / 8), wire = key % 8;
    if (wire === 0) {
      [value, at] = varint(bytes, at);
      if (field === 1) dims.push(value);
      else if (field === 2) type = value;
    } else if (wire === 2) {
      [value, at] = varint(bytes, at);
      const chunk = bytes.subarray(at, at + value);
      at += value;
      if (field === 9) raw = chunk;
      else if (field === 8) name = chunk.toString('utf8');
      else if (field === 1) for (let p = 0; p < chunk.length;) { let d; [d, p] = varint(chunk, p); dims.push(d); }
    } else if (wire === 5) at += 4;
    else if (wire === 1) at += 8;
    else throw new Error(`${what}: not a TensorProto file`);
  }
  const kind = kOnnxTypes[type];
  if (!kind || raw === null) throw new Error(`${what}: a tensor of ONNX type ${type}${raw === null ? ' without raw data' : ''} is not read here`);
  const copy = new ArrayBuffer(raw.length);  // typed arrays need aligned offsets
  new Uint8Array(copy).set(raw);
  return [name, { type: kind[0], data: new kind[1](copy), dims }];
}

// One of the bundle's folders (inputs/, expected/): its tensors by the names they hold.
function readFolder(folder) {
  const path = join(here, folder);
  if (!existsSync(path)) return {};
  const tensors = {};
  for (const file of readdirSync(path).filter(f => f.endsWith('.pb')).sort()) {
    const [name, tensor] = readPb(readFileSync(join(path, file)), `${folder}/${file}`);
    tensors[name] = tensor;
  }
  return tensors;
}

function half(bits) {
  const sign = bits & 0x8000 ? -1 : 1, exponent = (bits >> 10) & 0x1f, fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

function numbers(t) {
  if (t.type === 'float16' && t.data instanceof Uint16Array) return Array.from(t.data, half);
  return Array.from(t.data, Number);
}

function nearestRank(values, q) {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(q * (sorted.length - 1) + 0.5))];
}

// One output as reduce compares it: [what is wrong ('' when nothing), what differs].
function compare(actual, expected, atol, rtol) {
  const same = actual.type === expected.type && actual.dims.length === expected.dims.length &&
               actual.dims.every((d, i) => Number(d) === expected.dims[i]);
  if (!same) {
    return [`${actual.type}[${actual.dims}] on the engine, ${expected.type}[${expected.dims}] on the reference`,
            { dtype: actual.type !== expected.type, shape: !actual.dims.every((d, i) => Number(d) === expected.dims[i]) ||
                                                           actual.dims.length !== expected.dims.length }];
  }
  const a = numbers(actual), b = numbers(expected), d = [], r = [];
  let fresh = 0, differs = 0, bad = 0, largest = 0, ratio = 0;
  for (let i = 0; i < a.length; ++i) {
    const fa = Number.isFinite(a[i]), fb = Number.isFinite(b[i]);
    if (!fa || !fb) {
      if (fb) ++fresh;
      else if (fa || Number.isNaN(a[i]) !== Number.isNaN(b[i]) || (!Number.isNaN(a[i]) && a[i] !== b[i])) ++differs;
      continue;
    }
    const e = Math.abs(a[i] - b[i]), scale = Math.abs(b[i]), allowed = atol + rtol * scale;
    d.push(e);
    r.push(scale !== 0 ? e / scale : (e === 0 ? 0 : Infinity));
    if (e > allowed) ++bad;
    ratio = Math.max(ratio, allowed > 0 ? e / allowed : (e > 0 ? Infinity : 0));
    largest = Math.max(largest, e);
  }
  const problems = [];
  if (fresh) problems.push(`${fresh} NaN/Inf where the reference is finite`);
  if (differs) problems.push(`${differs} values differ where the reference is NaN/Inf (e.g. finite where it is -inf)`);
  const stat = CONFIG.stat;
  if (stat === 'elemwise') {
    if (bad) problems.push(`${bad} of ${a.length} values beyond atol ${atol} + rtol ${rtol} x |expected| (largest error ${largest})`);
  } else {
    let sa = 0, sr = 0;
    if (d.length) {
      const pick = stat === 'max' ? v => v.reduce((m, x) => Math.max(m, x), 0)
                 : stat === 'mean' ? v => v.reduce((s, x) => s + x, 0) / v.length
                 : v => nearestRank(v, stat === 'median' ? 0.5 : CONFIG.quantile);
      sa = pick(d);
      sr = pick(r);
    }
    ratio = Math.min(atol > 0 ? sa / atol : Infinity, rtol > 0 ? sr / rtol : Infinity);
    if (sa > atol && sr > rtol) problems.push(`${stat} error ${sa} > atol ${atol} and relative ${sr} > rtol ${rtol}`);
  }
  if (differs) ratio = Infinity;
  return [problems.join('; '), { nonfinite: fresh > 0, ratio }];
}

function sameMessage(message) {
  const patterns = CONFIG.recorded.patterns;
  return patterns.length === 0 || patterns.some(p => new RegExp(p).test(message));
}

function shorten(message, limit = 4000) {
  return message.length <= limit ? message : `${message.slice(0, limit / 2)}\n[...]\n${message.slice(-limit / 2)}`;
}

// Exit status 1 when the engine failed the way reduce recorded, else 3; prints which.
function judge(kind, message, { signal = 0, magnitude = 0, shape = '', exitCode = 0 } = {}) {
  const r = CONFIG.recorded;
  let same;
  if (r.any_kind) same = sameMessage(message);  // --fail-regex: any failure whose message matches
  else if (kind !== r.kind) same = false;
  else if (kind === 'error') same = (!r.exit_code || exitCode === r.exit_code) && sameMessage(message);
  else if (kind === 'crash') same = signal === r.signal;
  else if (kind === 'shape') same = shape === r.shape;
  else if (kind === 'mismatch') same = magnitude >= r.magnitude - 1;  // rounding noise is not the recorded error
  else same = true;
  if (same) {
    console.log(`FAILS as reduce recorded (${kind}): ${shorten(message)}`);
    return 1;
  }
  console.log(`FAILS ANOTHER WAY (${kind}): ${shorten(message)}`);
  console.log(`  reduce recorded (${r.kind}): ${shorten(r.message)}`);
  return 3;
}

function magnitudeClass(ratio) {
  if (!(ratio > 1)) return 0;
  if (ratio === Infinity) return 99;
  return Math.floor(Math.log10(ratio));
}

// The verdict on the outputs the engine gave, as reduce's oracle gives it (oracle/verdict.cpp).
function judgeOutputs(actual, expected) {
  let dtype = false, shape = false, nonfinite = false, structural = 0, worst = 0, firstShape = '', firstValues = '';
  for (const o of CONFIG.outputs) {
    if (!actual[o.name]) return judge('error', `the engine gave no value for output '${o.name}'`);
    const [problem, what] = compare(actual[o.name], expected[o.name], o.atol, o.rtol);
    console.log(`  ${o.name}: ${problem || 'as expected'}`);
    if (!problem) continue;
    if ('shape' in what) {
      ++structural;
      dtype ||= what.dtype;
      shape ||= what.shape;
      firstShape ||= `output \`${o.name}\` is ${problem}`;
    } else {
      nonfinite ||= what.nonfinite;
      worst = Math.max(worst, what.ratio);
      firstValues ||= `output '${o.name}': ${problem}`;
    }
  }
  if (structural) {
    const differs = dtype && shape ? 'element type and shape differ' : dtype ? 'element type differs' : 'shape differs';
    return judge('shape', firstShape, { shape: differs });
  }
  if (firstValues) return judge(nonfinite ? 'nonfinite' : 'mismatch', firstValues, { magnitude: magnitudeClass(worst) });
  console.log(`PASSES: the engine gives the expected values (reduce recorded: ${CONFIG.recorded.kind})`);
  return 0;
}

// The release of the package `require` finds: its package.json, found upwards from its main file.
function installedRelease() {
  let dir = dirname(require.resolve(PACKAGE));
  for (; dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const json = JSON.parse(readFileSync(file, 'utf8'));
      if (json.name === PACKAGE) return `${PACKAGE} ${json.version}`;
    }
  }
  return `${PACKAGE} (release unknown)`;
}

function showRelease(running) {
  const number = /\d+\.\d+(\.\d+)?/;
  const a = number.exec(running)?.[0], b = number.exec(CONFIG.release)?.[0];
  if (a && b && a !== b) console.log(`NOTE: this runs ${running}; reduce found the failure on ${CONFIG.release}`);
  else console.log(`engine: ${running}   (reduce ran: ${CONFIG.release || 'unknown'})`);
}

// The engine's run, in a process of its own (a crash is a verdict): exits 10 + the verdict.
async function engineProcess() {
  const ort = require(PACKAGE);
  if (WASM_THREADS !== null) ort.env.wasm.numThreads = WASM_THREADS;  // onnxruntime-web takes them here
  const inputs = CONFIG.inputs.length ? readFolder('inputs') : {};
  const expected = readFolder('expected');
  let actual;
  try {
    const session = await ort.InferenceSession.create(join(here, CONFIG.model), CONFIG.session);
    const feeds = {};
    for (const [name, t] of Object.entries(inputs)) feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
    actual = await session.run(feeds, CONFIG.outputs.map(o => o.name));
  } catch (e) {  // as reduce reads it: one line after 'ONNX Runtime: '
    return judge('error', 'ONNX Runtime: ' + String(e && e.message ? e.message : e).trim().replace(/\n/g, ' '));
  }
  return judgeOutputs(actual, expected);
}

function cannotRun(why) {
  console.log(`CANNOT RUN: ${why}`);
  return 2;
}

function unpack() {
  const folder = mkdtempSync(join(tmpdir(), 'repro-'));
  for (const [name, data] of Object.entries(EMBEDDED)) {
    mkdirSync(dirname(join(folder, name)), { recursive: true });
    writeFileSync(join(folder, name), Buffer.from(data, 'base64'));
  }
  process.on('exit', () => rmSync(folder, { recursive: true, force: true }));
  return folder;
}

function main() {
  let release;
  try {
    release = installedRelease();
  } catch (e) {
    return cannotRun(`${PACKAGE} cannot be found from ${here} or NODE_PATH (${INSTALL})`);
  }
  showRelease(release);
  const needed = [CONFIG.model, 'expected', ...(CONFIG.inputs.length ? ['inputs'] : [])];
  if (Object.keys(EMBEDDED).length && !needed.every(file => existsSync(join(here, file)))) here = unpack();
  for (const file of needed)
    if (!existsSync(join(here, file))) return cannotRun(`${file} is missing from ${here}`);
  console.log(`model: ${CONFIG.model}   reduce recorded: ${CONFIG.recorded.kind}`);
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--engine-process', here],
                          { stdio: 'inherit', timeout: CONFIG.timeout > 0 ? CONFIG.timeout * 1000 : undefined });
  if (child.error && child.error.code === 'ETIMEDOUT')
    return judge('timeout', `the engine gave no answer within ${CONFIG.timeout} s`);
  if (child.error) return cannotRun(`cannot start ${process.execPath}: ${child.error.message}`);
  if (child.signal) {
    const signal = constants.signals[child.signal] || 0;
    return judge('crash', `the engine's process was killed by ${child.signal}`, { signal });
  }
  if (child.status >= 10 && child.status <= 13) return child.status - 10;
  if (child.status === 20) return cannotRun("the engine's process could not run it (above)");
  return judge('crash', `the engine's process exited with code ${child.status}`);
}

// A status of 1 must only ever mean that the engine failed the recorded way: when the script itself
// fails (an unreadable file, a regex JavaScript cannot compile), it cannot run (2; the child: 20).
async function guarded(run, failed) {
  try {
    return await run();
  } catch (e) {
    console.log(`CANNOT RUN: the script could not judge the run: ${e && e.stack ? e.stack.split('\n')[0] : e}`);
    return failed;
  }
}

if (process.argv[2] === '--engine-process') process.exit(await guarded(async () => 10 + await engineProcess(), 20));
process.exit(await guarded(main, 2));
)JS";

// The files a small reproducer carries, base64 (ReproductionContext::embedded).
std::string embedded_js(const ReproductionContext& context) {
  nlohmann::ordered_json files = nlohmann::ordered_json::object();
  for (const auto& [name, bytes] : context.embedded) files[name] = encode_base64(bytes);
  return "// The bundle's files, for this script pasted alone (base64; written to a temporary folder).\nconst EMBEDDED = " +
         files.dump(1) + ";\n";
}

}  // namespace

std::vector<ReproductionFile> ort_node(const EngineSpec& spec, const ReproductionContext& context) {
  const OrtOptions& o = spec.ort;
  nlohmann::ordered_json session;
  // The worker's session options (scripts/ort/ort_worker.js), in onnxruntime-node's words.
  session["graphOptimizationLevel"] = o.optimization == OrtOptimization::Disable ? "disabled" : std::string(to_string(o.optimization));
  if (o.threads > 0) session["intraOpNumThreads"] = o.threads;
  session["interOpNumThreads"] = 1;
  session["executionMode"] = "sequential";
  const bool web = spec.kind == EngineKind::OrtWeb;
  session["executionProviders"] = {web ? std::string("wasm") : o.provider};
  session["logSeverityLevel"] = 3;
  const std::string package(package_name(web ? OrtPackage::Web : OrtPackage::Node));
  const std::string release = package + "@" + (o.release.empty() ? std::string(kOrtDefaultRelease) : o.release);
  std::string text = "// The failure reduce found on ONNX Runtime (`" + spec_in_comment(spec) +
                     "`), with " + package + " alone.\n"
                     "// Needs " + release + " (npm install " + release + ", here or on NODE_PATH). Run: node repro.mjs\n"
                     "// Prints each output's comparison with expected/ (TensorProto files). Exit status: 1 the engine\n"
                     "// fails the way reduce recorded, 0 it passes, 3 it fails another way, 2 it cannot run here. The\n"
                     "// engine runs in a process of its own, so that a crash is a verdict.\n"
                     "import { createRequire } from 'node:module';\n"
                     "import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';\n"
                     "import { spawnSync } from 'node:child_process';\n"
                     "import { constants, tmpdir } from 'node:os';\n"
                     "import { dirname, join } from 'node:path';\n"
                     "import { fileURLToPath } from 'node:url';\n\n"
                     "const CONFIG = " + config_json(context, "session", session.dump()) + ";\n" +
                     "const PACKAGE = '" + package + "';\nconst RELEASE = '" + release + "';\nconst WASM_THREADS = " + (web ? std::to_string(o.threads) : "null") +
                     ";\n" + embedded_js(context) + kNodeBody;
  return {{"repro.mjs", std::move(text)}};
}

}  // namespace reduce::repro
