// repro.mjs for onnxruntime-node: the bundle's model, inputs.npz and expected.npz (read here without
// any package but onnxruntime-node), compared by reduce's rule at the reduction's tolerances.
#include <nlohmann/json.hpp>

#include "reproduction/scripts.h"

namespace reduce::repro {

namespace {

const char* const kNodeBody = R"JS(
const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));

// .npy dtypes and the ONNX Runtime tensor types and arrays that hold them.
const kDescr = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<f2': ['float16', Uint16Array],
  '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array], '<i2': ['int16', Int16Array], '<u2': ['uint16', Uint16Array],
  '<i4': ['int32', Int32Array], '<u4': ['uint32', Uint32Array], '<i8': ['int64', BigInt64Array],
  '<u8': ['uint64', BigUint64Array], '|b1': ['bool', Uint8Array],
};

function readNpy(bytes, what) {
  const major = bytes[6];
  const offset = major === 1 ? 10 : 12;
  const length = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const header = bytes.toString('latin1', offset, offset + length);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const type = kDescr[descr];
  if (!type || /'fortran_order':\s*True/.test(header)) throw new Error(`${what}: unsupported .npy header ${header}`);
  const dims = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').filter(s => s.trim()).map(Number);
  const data = bytes.subarray(offset + length);
  const copy = new ArrayBuffer(data.length);  // typed arrays need aligned offsets
  new Uint8Array(copy).set(data);
  return { type: type[0], data: new type[1](copy), dims };
}

// A .npz archive (a zip of .npy entries), read through its central directory.
function readNpz(file, names) {
  const path = join(here, file);
  if (names.length === 0 && !existsSync(path)) return {};
  const zip = readFileSync(path);
  let end = zip.length - 22;
  while (end >= 0 && zip.readUInt32LE(end) !== 0x06054b50) --end;
  if (end < 0) throw new Error(`${file}: not a zip archive`);
  const arrays = {};
  for (let count = zip.readUInt16LE(end + 10), at = zip.readUInt32LE(end + 16); count > 0; --count) {
    const method = zip.readUInt16LE(at + 10), size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28), skip = zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    if (size === 0xffffffff || local === 0xffffffff) throw new Error(`${file}: zip64 entries are not read here`);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const raw = zip.subarray(start, start + size);
    arrays[name.replace(/\.npy$/, '')] = readNpy(method === 8 ? inflateRawSync(raw) : raw, `${file}: ${name}`);
    at += 46 + nameLength + skip;
  }
  return arrays;
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

// What is wrong with one output ('' when it passes): shape and type, then NaN/Inf, then values.
function compare(actual, expected, atol, rtol) {
  const same = actual.type === expected.type && actual.dims.length === expected.dims.length &&
               actual.dims.every((d, i) => Number(d) === expected.dims[i]);
  if (!same) return `engine gives ${actual.type}[${actual.dims}], reference ${expected.type}[${expected.dims}]`;
  const a = numbers(actual), b = numbers(expected), d = [], r = [];
  let fresh = 0, differs = 0, bad = 0, largest = 0;
  for (let i = 0; i < a.length; ++i) {
    const fa = Number.isFinite(a[i]), fb = Number.isFinite(b[i]);
    if (!fa || !fb) {
      if (fb) ++fresh;
      else if (fa || Number.isNaN(a[i]) !== Number.isNaN(b[i]) || (!Number.isNaN(a[i]) && a[i] !== b[i])) ++differs;
      continue;
    }
    const e = Math.abs(a[i] - b[i]), scale = Math.abs(b[i]);
    d.push(e);
    r.push(scale !== 0 ? e / scale : (e === 0 ? 0 : Infinity));
    if (e > atol + rtol * scale) ++bad;
    largest = Math.max(largest, e);
  }
  const problems = [];
  if (fresh) problems.push(`${fresh} NaN/Inf where the reference is finite`);
  if (differs) problems.push(`${differs} values differ from the reference's NaN/Inf`);
  const stat = CONFIG.stat;
  if (stat === 'elemwise') {
    if (bad) problems.push(`${bad} of ${a.length} values beyond atol ${atol} + rtol ${rtol} x |expected| (largest error ${largest})`);
  } else if (d.length) {
    const pick = stat === 'max' ? v => Math.max(...v) : stat === 'mean' ? v => v.reduce((s, x) => s + x, 0) / v.length
               : v => nearestRank(v, stat === 'median' ? 0.5 : CONFIG.quantile);
    const sa = pick(d), sr = pick(r);
    if (sa > atol && sr > rtol) problems.push(`${stat} error ${sa} > atol ${atol} and relative ${sr} > rtol ${rtol}`);
  }
  return problems.join('; ');
}

const ort = require(PACKAGE);
if (WASM_THREADS !== null) ort.env.wasm.numThreads = WASM_THREADS;  // onnxruntime-web takes them here
const inputs = readNpz('inputs.npz', CONFIG.inputs);
const expected = readNpz('expected.npz', CONFIG.outputs.map(o => o.name));
console.log(`model: ${CONFIG.model}   reduce saw: ${CONFIG.failure}`);
let actual;
try {
  const session = await ort.InferenceSession.create(join(here, CONFIG.model), CONFIG.session);
  const feeds = {};
  for (const [name, t] of Object.entries(inputs)) feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  actual = await session.run(feeds, CONFIG.outputs.map(o => o.name));
} catch (e) {
  console.log(`FAILS: the engine raised: ${e && e.message ? e.message : e}`);
  process.exit(1);
}
let failed = false;
for (const o of CONFIG.outputs) {
  const problem = compare(actual[o.name], expected[o.name], o.atol, o.rtol);
  console.log(`  ${o.name}: ${problem || 'as expected'}`);
  failed = failed || problem !== '';
}
console.log(failed ? 'FAILS' : 'PASSES: the failure does not show');
process.exit(failed ? 1 : 0);
)JS";

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
                     "// Prints each output's comparison with expected/ (also in expected.npz) and exits 1 when the model\n"
                     "// fails on the engine, 0 when it passes.\n"
                     "import { createRequire } from 'node:module';\n"
                     "import { existsSync, readFileSync } from 'node:fs';\n"
                     "import { inflateRawSync } from 'node:zlib';\n"
                     "import { dirname, join } from 'node:path';\n"
                     "import { fileURLToPath } from 'node:url';\n\n"
                     "const CONFIG = " + config_json(context, "session", session.dump()) + ";\n" +
                     "const PACKAGE = '" + package + "';\nconst WASM_THREADS = " + (web ? std::to_string(o.threads) : "null") +
                     ";\n" + kNodeBody;
  return {{"repro.mjs", std::move(text)}};
}

}  // namespace reduce::repro
