// NumPy .npy/.npz files for `cmd:` adapters under Node.js (docs/engine.md, "Writing a cmd: adapter"):
// readNpz gives { name: { type, dims, data } } (type an ONNX Runtime-style name: 'float32', 'int64',
// ...; data a typed array), writeNpz writes [name, { type, dims, data }] entries. Stored (not
// deflated) entries, as numpy's savez writes and reduce reads.
import { readFileSync, writeFileSync } from 'node:fs';

export const kTypes = {  // .npy descr <-> type name and array
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array], '<f2': ['float16', Uint16Array],
  '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array], '<i2': ['int16', Int16Array], '<u2': ['uint16', Uint16Array],
  '<i4': ['int32', Int32Array], '<u4': ['uint32', Uint32Array], '<i8': ['int64', BigInt64Array],
  '<u8': ['uint64', BigUint64Array], '|b1': ['bool', Uint8Array],
};

export function readNpy(bytes) {
  const offset = bytes[6] === 1 ? 10 : 12;
  const length = bytes[6] === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const header = bytes.toString('latin1', offset, offset + length);
  const [type, Array] = kTypes[/'descr':\s*'([^']+)'/.exec(header)[1]];
  const dims = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').filter(s => s.trim()).map(Number);
  const data = new Uint8Array(bytes.subarray(offset + length)).buffer;  // a copy: aligned
  return { type, dims, data: new Array(data) };
}

export function npyBytes({ type, dims, data }) {
  const descr = Object.keys(kTypes).find(k => kTypes[k][0] === type);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((header.length + 10) % 64)) + '\n';
  const head = Buffer.alloc(10);
  Buffer.from('\x93NUMPY', 'latin1').copy(head);
  head[6] = 1;
  head.writeUInt16LE(header.length, 8);
  const bytes = type === 'bool' ? Buffer.from(Array.from(data, v => (v ? 1 : 0))) : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.concat([head, Buffer.from(header, 'latin1'), bytes]);
}

// A zip of stored entries: local headers, then the central directory (CRC-32 is required).
function crc32(bytes) {
  let c = ~0;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; ++k) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

export function writeNpz(file, entries) {
  const locals = [], centrals = [];
  let offset = 0;
  for (const [name, tensor] of entries) {
    const bytes = npyBytes(tensor);
    const fileName = Buffer.from(`${name}.npy`, 'utf8'), crc = crc32(bytes);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4); local.writeUInt16LE(0x800, 6);
    local.writeUInt32LE(crc, 14); local.writeUInt32LE(bytes.length, 18); local.writeUInt32LE(bytes.length, 22);
    local.writeUInt16LE(fileName.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0); central.writeUInt16LE(20, 4); central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x800, 8); central.writeUInt32LE(crc, 16); central.writeUInt32LE(bytes.length, 20);
    central.writeUInt32LE(bytes.length, 24); central.writeUInt16LE(fileName.length, 28); central.writeUInt32LE(offset, 42);
    locals.push(local, fileName, bytes);
    centrals.push(central, fileName);
    offset += 30 + fileName.length + bytes.length;
  }
  const directory = Buffer.concat(centrals), end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0); end.writeUInt16LE(entries.length, 8); end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12); end.writeUInt32LE(offset, 16);
  writeFileSync(file, Buffer.concat([...locals, directory, end]));
}

export function readNpz(file) {
  const zip = readFileSync(file), entries = {};
  let end = zip.length - 22;
  while (zip.readUInt32LE(end) !== 0x06054b50) --end;
  for (let n = zip.readUInt16LE(end + 10), at = zip.readUInt32LE(end + 16); n > 0; --n) {
    const size = zip.readUInt32LE(at + 20), nameLength = zip.readUInt16LE(at + 28);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength), local = zip.readUInt32LE(at + 42);
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    entries[name.replace(/\.npy$/, '')] = readNpy(zip.subarray(start, start + size));  // stored entries only
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return entries;
}
