// A `cmd:` adapter for ONNX.js (npm onnxjs@0.1.8, its cpu backend) under Node.js, comparing values
// (reduce compares what it writes with the reference): docs/engine.md, "Writing a cmd: adapter".
//   reduce model.onnx --engine 'cmd:node docs/examples/onnxjs_adapter.mjs {model_inline} {inputs_npz} {outputs_npz}'
// onnxjs resolves from NODE_PATH (scripts/onnxjs/install.sh installs it in .cache/onnxjs). ONNX.js
// has no 64-bit integer tensors: it reads INT64 weights as int32, so int64 inputs are given to it as
// int32 (refused when a value does not fit) and its int32 results are written in the type the model
// declares for that output (onnx-proto, which onnxjs brings, reads the declarations).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { readNpz, writeNpz } from './npz.mjs';

const require = createRequire(import.meta.url);
const onnx = require('onnxjs');
const { onnx: proto } = require('onnx-proto');
const [modelFile, inputsNpz, outputsNpz] = process.argv.slice(2);

const kOnnxTypes = { 1: 'float32', 6: 'int32', 7: 'int64', 9: 'bool', 11: 'float64' };  // TensorProto.DataType

function toOnnxjs({ type, dims, data }) {
  if (type === 'int64') {
    const narrowed = Int32Array.from(data, v => {
      if (v < -(2n ** 31n) || v >= 2n ** 31n) throw new Error(`int64 value ${v} does not fit ONNX.js's int32`);
      return Number(v);
    });
    return new onnx.Tensor(narrowed, 'int32', dims);
  }
  if (type !== 'float32' && type !== 'int32' && type !== 'bool') throw new Error(`ONNX.js has no ${type} tensors`);
  return new onnx.Tensor(type === 'bool' ? Array.from(data, v => v !== 0) : data, type, dims);
}

function fromOnnxjs(tensor, declared) {
  const data = tensor.data;
  if (declared === 'int64') return { type: 'int64', dims: tensor.dims, data: BigInt64Array.from(data, v => BigInt(v)) };
  if (tensor.type === 'bool') return { type: 'bool', dims: tensor.dims, data: Uint8Array.from(data, v => (v ? 1 : 0)) };
  return { type: tensor.type, dims: tensor.dims, data };
}

const bytes = readFileSync(modelFile);
const graph = proto.ModelProto.decode(bytes).graph;
const declared = Object.fromEntries(graph.output.map(o => [o.name, kOnnxTypes[o.type?.tensorType?.elemType]]));
const initializers = new Set(graph.initializer.map(t => t.name));
const feeds = readNpz(inputsNpz);
const inputs = graph.input.filter(i => !initializers.has(i.name)).map(i => toOnnxjs(feeds[i.name]));

// The engine's error is the failure: its message on the last line (not a stack trace, whose last
// lines are the same for every error).
try {
  const session = new onnx.InferenceSession({ backendHint: 'cpu' });
  await session.loadModel(new Uint8Array(bytes));
  const results = await session.run(inputs);
  writeNpz(outputsNpz, graph.output.map(o => [o.name, fromOnnxjs(results.get(o.name), declared[o.name])]));
} catch (e) {
  console.error(`onnxjs: ${e.message}`);
  process.exit(1);
}
