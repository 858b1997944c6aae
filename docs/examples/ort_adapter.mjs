// A `cmd:` adapter for ONNX Runtime under Node.js (docs/engine.md, "Writing a cmd: adapter"), in the
// protocol's NumPy files, which need no protobuf reader:
//   reduce model.onnx --engine 'cmd:node docs/examples/ort_adapter.mjs {model_inline} {inputs_npz} {outputs_npz}'
// {model_inline}: the model with every weight in the file (a model read from bytes cannot follow a
// .data file); {inputs_npz}: one .npy entry per input, named after it; {outputs_npz}: where this
// writes one .npy entry per graph output of {model}, named after it (reduce may add outputs to a
// candidate: write every output the model declares). The NumPy files: ./npz.mjs.
// onnxruntime-node resolves from here or NODE_PATH; onnxruntime-web works the same way
// (InferenceSession.create(bytes), 'wasm' execution provider).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { readNpz, writeNpz } from './npz.mjs';

const require = createRequire(import.meta.url);
const ort = require('onnxruntime-node');
const [model, inputsNpz, outputsNpz] = process.argv.slice(2);

const session = await ort.InferenceSession.create(readFileSync(model));  // an error here is the engine's
const feeds = Object.fromEntries(Object.entries(readNpz(inputsNpz)).map(([name, t]) => [name, new ort.Tensor(t.type, t.data, t.dims)]));
const results = await session.run(feeds);
writeNpz(outputsNpz, session.outputNames.map(name => [name, results[name]]));
