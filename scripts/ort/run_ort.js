// Runs an ONNX model with ONNX Runtime (onnxruntime-node) on input_K.npy (or input_K.pb) files and writes output_K.npy.
// usage: node run_ort.js ORT_DIR MODEL INPUT_DIR OUTPUT_DIR [--threads N] [--repeat N]
// input_K.npy binds to the K-th model input (inputs with initializers excluded, as in `reduce run
// --save-inputs`); output_K.npy is the K-th graph output. With --repeat it prints the median time.
// input_K.pb (a TensorProto with raw_data, as the `cmd:` engine writes them) is read when there is
// no .npy, so that `--engine 'cmd:node run_ort.js ORT_DIR {model} {inputs} {outputs}'` works.
'use strict';
const fs = require('fs');
const path = require('path');

const kTypes = {  // npy descr (without byte order) -> [ort type, typed array]
  f4: ['float32', Float32Array], f8: ['float64', Float64Array], f2: ['float16', Uint16Array],
  i1: ['int8', Int8Array], i2: ['int16', Int16Array], i4: ['int32', Int32Array], i8: ['int64', BigInt64Array],
  u1: ['uint8', Uint8Array], u2: ['uint16', Uint16Array], u4: ['uint32', Uint32Array], u8: ['uint64', BigUint64Array],
  b1: ['bool', Uint8Array],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([<>|=])(\w+)'/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !shape || /'fortran_order':\s*True/.test(header)) throw new Error(`${file}: unsupported .npy header`);
  if (descr[1] === '>') throw new Error(`${file}: big-endian .npy is not supported`);
  const type = kTypes[descr[2]];
  if (!type) throw new Error(`${file}: unsupported dtype ${descr[2]}`);
  const dims = shape[1].split(',').map(s => s.trim()).filter(s => s.length).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const bytes = buf.subarray(start + headerLen);
  const copy = new ArrayBuffer(count * type[1].BYTES_PER_ELEMENT);
  new Uint8Array(copy).set(bytes.subarray(0, copy.byteLength));
  return { type: type[0], data: new type[1](copy), dims };
}

const kOnnxTypes = {  // TensorProto.DataType -> [ort type, typed array]
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array], 4: ['uint16', Uint16Array],
  5: ['int16', Int16Array], 6: ['int32', Int32Array], 7: ['int64', BigInt64Array], 9: ['bool', Uint8Array],
  10: ['float16', Uint16Array], 11: ['float64', Float64Array], 12: ['uint32', Uint32Array], 13: ['uint64', BigUint64Array],
};

// A TensorProto with dims (1), data_type (2) and raw_data (9); other fields are skipped.
function readPb(file) {
  const buf = fs.readFileSync(file);
  let at = 0;
  const varint = () => {
    let v = 0n, shift = 0n;
    for (;;) {
      const b = buf[at++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  };
  const dims = [];
  let type = 0, raw = null;
  while (at < buf.length) {
    const key = Number(varint()), field = key >> 3, wire = key & 7;
    if (wire === 0) {
      const v = varint();
      if (field === 1) dims.push(Number(v));
      if (field === 2) type = Number(v);
    } else if (wire === 2) {
      const n = Number(varint()), end = at + n;
      if (field === 1) while (at < end) dims.push(Number(varint()));  // packed dims
      if (field === 9) raw = buf.subarray(at, end);
      at = end;
    } else if (wire === 5) at += 4;
    else if (wire === 1) at += 8;
    else throw new Error(`${file}: unsupported protobuf wire type ${wire}`);
  }
  const t = kOnnxTypes[type];
  if (!t || !raw) throw new Error(`${file}: needs a TensorProto of a numeric type with raw_data`);
  const copy = new ArrayBuffer(raw.length);
  new Uint8Array(copy).set(raw);
  return { type: t[0], data: new t[1](copy), dims };
}

function writeNpy(file, tensor) {
  const entry = Object.entries(kTypes).find(([, t]) => t[0] === tensor.type);
  if (!entry) throw new Error(`output type ${tensor.type} cannot be written as .npy`);
  const descr = (entry[0] === 'b1' || entry[0].endsWith('1') ? '|' : '<') + entry[0];
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const tmp = file + '.tmp';
  fs.writeFileSync(tmp, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
  fs.renameSync(tmp, file);
}

async function main() {
  const args = process.argv.slice(2);
  const option = (name, fallback) => {
    const i = args.indexOf(name);
    if (i < 0) return fallback;
    const v = Number(args[i + 1]);
    args.splice(i, 2);
    return v;
  };
  const threads = option('--threads', 0);
  const repeat = option('--repeat', 1);
  if (args.length !== 4) throw new Error('usage: node run_ort.js ORT_DIR MODEL INPUT_DIR OUTPUT_DIR [--threads N] [--repeat N]');
  const [ortDir, model, inputDir, outputDir] = args;
  const ort = require(path.join(path.resolve(ortDir), 'node_modules', 'onnxruntime-node'));
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all',
  });
  const feeds = {};
  session.inputNames.forEach((name, k) => {
    const npy = path.join(inputDir, `input_${k}.npy`);
    const t = fs.existsSync(npy) ? readNpy(npy) : readPb(path.join(inputDir, `input_${k}.pb`));
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  });
  const times = [];
  let results;
  for (let r = 0; r < repeat; ++r) {
    const start = process.hrtime.bigint();
    results = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  fs.mkdirSync(outputDir, { recursive: true });
  session.outputNames.forEach((name, k) => writeNpy(path.join(outputDir, `output_${k}.npy`), results[name]));
  times.sort((a, b) => a - b);
  console.log(`onnxruntime ${ort.env.versions ? ort.env.versions.common : ''}: ${repeat > 1 ? 'median ' : ''}${times[Math.floor(times.length / 2)]} ms per run (${repeat} runs)`);
}

main().catch(e => { console.error(`error: ${e.message}`); process.exit(1); });
