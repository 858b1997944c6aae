// The worker behind `reduce --engine ort` (and `ort@VERSION`, `ort-web`): one Node.js process that
// keeps ONNX Runtime sessions and answers load/run requests on descriptor 3 (a Unix socket), so a
// check costs no process start. Embedded into `reduce` at build time (adapters/CMakeLists.txt); the
// engine starts it as
//   node ort_worker.js ORT_DIR LEVEL THREADS PROVIDER PACKAGE
// PACKAGE: onnxruntime-node (a release whose npm package ships its binary), or onnxruntime-web (its wasm
// backend, PROVIDER wasm).
// Frames both ways: u32 type, u32 id, u64 payload bytes (little-endian), then the payload.
//   reduce -> worker: LOAD(id, model bytes) -> OK | ERROR; RUN(id, feeds + fetch names) -> TENSORS | ERROR;
//                     FREE(id) (no answer)
//   worker -> reduce: first HELLO(version text), or ERROR when ONNX Runtime or the provider is missing
// Tensors: u32 count, then per tensor: u32 name bytes, name, u32 ONNX dtype, u32 rank, i64 dims, u64
// data bytes, raw little-endian data. Fetch names: u32 count, then u32 bytes + name each.
// Test hooks (real failures on demand, for reduce's tests): when the file named by
// REDUCE_ORT_WORKER_CRASH_FILE exists at the start of a run, the worker deletes it and aborts
// (SIGABRT); with REDUCE_ORT_WORKER_HANG_FILE it deletes it and blocks forever.
'use strict';
const fs = require('fs');
const path = require('path');

const FD = 3;
const T = { LOAD: 1, RUN: 2, FREE: 3, HELLO: 10, OK: 11, ERROR: 12, TENSORS: 13 };
// ONNX TensorProto data types <-> ONNX Runtime's tensor types and the arrays that hold them.
const kTypes = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array], 4: ['uint16', Uint16Array],
  5: ['int16', Int16Array], 6: ['int32', Int32Array], 7: ['int64', BigInt64Array], 9: ['bool', Uint8Array],
  10: ['float16', Uint16Array], 11: ['float64', Float64Array], 12: ['uint32', Uint32Array], 13: ['uint64', BigUint64Array],
};
const kOnnxType = Object.fromEntries(Object.entries(kTypes).map(([k, v]) => [v[0], Number(k)]));

function readExactly(n) {
  const buf = Buffer.alloc(n);
  for (let done = 0; done < n;) {
    let got;
    try {
      got = fs.readSync(FD, buf, done, n - done, null);
    } catch (e) {
      if (e.code === 'EAGAIN' || e.code === 'EINTR') continue;
      throw e;
    }
    if (got === 0) return null;  // reduce closed the socket: the engine is gone
    done += got;
  }
  return buf;
}

function writeAll(buf) {
  for (let done = 0; done < buf.length;) done += fs.writeSync(FD, buf, done, buf.length - done);
}

function send(type, id, payload) {
  const head = Buffer.alloc(16);
  head.writeUInt32LE(type, 0);
  head.writeUInt32LE(id, 4);
  head.writeBigUInt64LE(BigInt(payload.length), 8);
  writeAll(Buffer.concat([head, payload]));
}

// A cursor over a request payload.
class Reader {
  constructor(buf) { this.buf = buf; this.at = 0; }
  u32() { const v = this.buf.readUInt32LE(this.at); this.at += 4; return v; }
  u64() { const v = this.buf.readBigUInt64LE(this.at); this.at += 8; return Number(v); }
  i64() { const v = this.buf.readBigInt64LE(this.at); this.at += 8; return Number(v); }
  bytes(n) { const b = this.buf.subarray(this.at, this.at + n); this.at += n; return b; }
  string() { return this.bytes(this.u32()).toString('utf8'); }
}

function readTensors(r, ort) {
  const feeds = {};
  for (let count = r.u32(); count > 0; --count) {
    const name = r.string();
    const type = kTypes[r.u32()];
    const dims = [];
    for (let rank = r.u32(); rank > 0; --rank) dims.push(r.i64());
    const raw = r.bytes(r.u64());
    if (!type) throw new Error(`input '${name}': its type cannot be given to ONNX Runtime`);
    // A fresh buffer: typed arrays need aligned offsets.
    const copy = new ArrayBuffer(raw.length);
    new Uint8Array(copy).set(raw);
    feeds[name] = new ort.Tensor(type[0], new type[1](copy), dims);
  }
  return feeds;
}

function tensorBytes(name, t) {
  const code = kOnnxType[t.type];
  if (!code) throw new Error(`output '${name}' has type ${t.type}, which reduce cannot take`);
  const head = Buffer.alloc(4 + Buffer.byteLength(name) + 8 + 8 * t.dims.length + 8);
  let at = head.writeUInt32LE(Buffer.byteLength(name), 0);
  at += head.write(name, at, 'utf8');
  at = head.writeUInt32LE(code, at);
  at = head.writeUInt32LE(t.dims.length, at);
  for (const d of t.dims) at = head.writeBigInt64LE(BigInt(d), at);
  const data = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  head.writeBigUInt64LE(BigInt(data.length), at);
  return [head, data];
}

// A one-shot test hook: whether the file named by `variable` exists (it is deleted).
function hookFires(variable) {
  const file = process.env[variable];
  if (!file || !fs.existsSync(file)) return false;
  fs.unlinkSync(file);
  return true;
}

async function serve(ort, options) {
  const sessions = new Map();
  for (;;) {
    const head = readExactly(16);
    if (!head) return;
    const type = head.readUInt32LE(0), id = head.readUInt32LE(4);
    const payload = readExactly(Number(head.readBigUInt64LE(8)));
    if (!payload) return;
    try {
      if (type === T.FREE) {
        const session = sessions.get(id);
        sessions.delete(id);
        if (session) await session.release();
      } else if (type === T.LOAD) {
        sessions.set(id, await ort.InferenceSession.create(new Uint8Array(payload), options));
        send(T.OK, id, Buffer.alloc(0));
      } else if (type === T.RUN) {
        if (hookFires('REDUCE_ORT_WORKER_CRASH_FILE')) process.abort();
        if (hookFires('REDUCE_ORT_WORKER_HANG_FILE')) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
        const session = sessions.get(id);
        if (!session) throw new Error(`worker: no session ${id}`);
        const r = new Reader(payload);
        const feeds = readTensors(r, ort);
        const fetches = [];
        for (let count = r.u32(); count > 0; --count) fetches.push(r.string());
        const results = await session.run(feeds, fetches);
        const parts = [Buffer.alloc(4)];
        parts[0].writeUInt32LE(fetches.length, 0);
        for (const name of fetches) parts.push(...tensorBytes(name, results[name]));
        send(T.TENSORS, id, Buffer.concat(parts));
      } else {
        throw new Error(`worker: unknown request type ${type}`);
      }
    } catch (e) {
      if (type !== T.FREE) send(T.ERROR, id, Buffer.from(String(e && e.message ? e.message : e).trim(), 'utf8'));
    }
  }
}

// The execution providers an onnxruntime-node release has here. listSupportedBackends() came with
// 1.17; a provider it lists but the package does not ship (CUDA, TensorRT) needs its library next to
// the binding (bin/napi-vN/PLATFORM/ARCH: napi-v3 up to 1.2x, napi-v6 after).
function nodeProviders(ort, packageDir) {
  if (typeof ort.listSupportedBackends !== 'function') return ['cpu'];
  const bin = path.join(packageDir, 'bin');
  const binding = fs.readdirSync(bin).map(d => path.join(bin, d, process.platform, process.arch))
      .find(d => fs.existsSync(path.join(d, 'onnxruntime_binding.node')));
  return ort.listSupportedBackends()
      .filter(b => b.bundled || (binding && fs.existsSync(path.join(binding, `libonnxruntime_providers_${b.name}.so`))))
      .map(b => b.name);
}

function start() {
  const [ortDir, level, threads, provider, pkg = 'onnxruntime-node'] = process.argv.slice(2);
  const packageDir = path.join(path.resolve(ortDir), 'node_modules', pkg);
  let ort, version;
  try {
    ort = require(packageDir);
    version = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')).version;
  } catch (e) {
    send(T.ERROR, 0, Buffer.from(`cannot load ${pkg} from ${ortDir}: ${e.message.split('\n')[0]}`));
    return null;
  }
  const web = pkg === 'onnxruntime-web';
  const available = web ? ['wasm'] : nodeProviders(ort, packageDir);
  if (!available.includes(provider)) {
    send(T.ERROR, 0, Buffer.from(`execution provider '${provider}' is not in the installed ${pkg} ${version} ` +
                                 `(it has: ${available.join(', ')})`));
    return null;
  }
  // The wasm backend takes its threads from env (0: its default, half the cores up to 4), not the session.
  if (web) Object.assign(ort.env.wasm, { numThreads: Number(threads), proxy: false });
  send(T.HELLO, 0, Buffer.from(`${pkg} ${version}`));
  return [ort, {
    graphOptimizationLevel: level === 'disable' ? 'disabled' : level,  // reduce's word, then ORT's
    intraOpNumThreads: Number(threads), interOpNumThreads: 1,
    executionMode: 'sequential', executionProviders: [provider], logSeverityLevel: 3,
  }];
}

const started = start();
// process.exit: the wasm backend's thread pool would keep Node running after reduce has gone.
if (started) serve(...started).then(() => process.exit(0), e => { console.error(`error: ${e.stack || e}`); process.exit(1); });
