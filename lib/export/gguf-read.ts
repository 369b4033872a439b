// Reading GGUF v3 files (the layout of gguf-file.ts): the key-values and tensor infos, each checked as read
// (a truncated or corrupt file is a GRPO_DATA_FORMAT error naming the file and the field), and F32/F16/BF16
// tensors widened to float32 on request. The header is read in growing prefixes, the tensors at their offsets.
import { open } from 'node:fs/promises';
import { GrpoError } from '../errors.js';
import { toFloat32 } from '../policy/safetensors.js';
import { unreadable } from '../user-files.js';
import {
  alignmentOf, GGUF_MAGIC, padding, TENSOR_BYTES, TENSOR_TYPES, VALUE_TYPES,
  type GgufScalar, type GgufScalarType, type GgufTensorType, type GgufValue,
} from './gguf-file.js';

export interface GgufTensorInfo {
  name: string;
  /** ne[0] first. */
  dims: number[];
  type: GgufTensorType;
  /** Absolute byte offset in the file. */
  offset: number;
}

export interface GgufHeader {
  version: number;
  alignment: number;
  metadata: Map<string, GgufValue>;
  tensors: GgufTensorInfo[];
  /** Where the data section starts. */
  dataStart: number;
}

/** Raised inside the parser when the prefix read so far ends before the header does. */
class NeedMore extends Error {}

const TYPE_NAMES = new Map<number, keyof typeof VALUE_TYPES>(Object.entries(VALUE_TYPES).map(([k, v]) => [v, k as keyof typeof VALUE_TYPES]));
const TENSOR_NAMES = new Map<number, GgufTensorType>(Object.entries(TENSOR_TYPES).map(([k, v]) => [v, k as GgufTensorType]));

class ByteReader {
  at = 0;
  constructor(private readonly b: Buffer, private readonly complete: boolean, private readonly path: string) {}

  private take(n: number): number {
    if (this.at + n > this.b.length) {
      if (this.complete) throw new GrpoError('GRPO_DATA_FORMAT', `${this.path}: the GGUF header ends past the end of the file (byte ${this.at + n} of ${this.b.length})`);
      throw new NeedMore();
    }
    const at = this.at;
    this.at += n;
    return at;
  }

  u32(): number {
    return this.b.readUInt32LE(this.take(4));
  }

  /** A u64 that must fit a JavaScript number (counts, lengths, offsets). */
  count(what: string): number {
    const v = this.b.readBigUInt64LE(this.take(8));
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new GrpoError('GRPO_DATA_FORMAT', `${this.path}: ${what} ${v} is too large`);
    return Number(v);
  }

  string(what: string): string {
    const n = this.count(`the length of ${what}`);
    const at = this.take(n);
    return this.b.toString('utf8', at, at + n);
  }

  scalar(type: GgufScalarType, what: string): GgufScalar {
    const b = this.b;
    switch (type) {
      case 'uint8': return b.readUInt8(this.take(1));
      case 'int8': return b.readInt8(this.take(1));
      case 'bool': return b.readUInt8(this.take(1)) !== 0;
      case 'uint16': return b.readUInt16LE(this.take(2));
      case 'int16': return b.readInt16LE(this.take(2));
      case 'uint32': return b.readUInt32LE(this.take(4));
      case 'int32': return b.readInt32LE(this.take(4));
      case 'float32': return b.readFloatLE(this.take(4));
      case 'uint64': return b.readBigUInt64LE(this.take(8));
      case 'int64': return b.readBigInt64LE(this.take(8));
      case 'float64': return b.readDoubleLE(this.take(8));
      case 'string': return this.string(what);
    }
  }

  valueType(what: string): keyof typeof VALUE_TYPES {
    const code = this.u32();
    const name = TYPE_NAMES.get(code);
    if (name === undefined) throw new GrpoError('GRPO_DATA_FORMAT', `${this.path}: ${what} has unknown value type ${code}`);
    return name;
  }

  value(key: string): GgufValue {
    const type = this.valueType(`key "${key}"`);
    if (type !== 'array') return { type, value: this.scalar(type, `the value of "${key}"`) };
    const itemType = this.valueType(`the items of "${key}"`);
    if (itemType === 'array') throw new GrpoError('GRPO_UNSUPPORTED', `${this.path}: key "${key}" is an array of arrays (not read here)`);
    const n = this.count(`the length of "${key}"`);
    const values: GgufScalar[] = [];
    for (let i = 0; i < n; i++) values.push(this.scalar(itemType, `"${key}"[${i}]`));
    return { type: 'array', itemType, values };
  }
}

function parse(b: Buffer, complete: boolean, path: string, fileSize: number): GgufHeader {
  const r = new ByteReader(b, complete, path);
  const magic = r.u32();
  if (magic !== GGUF_MAGIC) throw new GrpoError('GRPO_DATA_FORMAT', `${path}: not a GGUF file (magic 0x${magic.toString(16)}, expected "GGUF")`);
  const version = r.u32();
  if (version !== 3) throw new GrpoError('GRPO_UNSUPPORTED', `${path}: GGUF version ${version}; only version 3 is read`);
  const tensorCount = r.count('the tensor count'), kvCount = r.count('the key-value count');
  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < kvCount; i++) {
    const key = r.string(`key ${i}`);
    if (metadata.has(key)) throw new GrpoError('GRPO_DATA_FORMAT', `${path}: key "${key}" appears twice`);
    metadata.set(key, r.value(key));
  }
  const alignment = alignmentOf(metadata, path);
  const infos: Omit<GgufTensorInfo, 'offset'>[] = [], relative: number[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = r.string(`tensor name ${i}`);
    const rank = r.u32();
    if (rank < 1 || rank > 4) throw new GrpoError('GRPO_DATA_FORMAT', `${path}: tensor "${name}" has ${rank} dimensions (1 to 4)`);
    const dims = Array.from({ length: rank }, (_, d) => r.count(`tensor "${name}" dimension ${d}`));
    const code = r.u32();
    const type = TENSOR_NAMES.get(code);
    if (type === undefined) throw new GrpoError('GRPO_UNSUPPORTED', `${path}: tensor "${name}" has ggml type ${code}; read here: F32, F16, BF16`);
    infos.push({ name, dims, type });
    relative.push(r.count(`tensor "${name}" offset`));
  }
  const dataStart = r.at + padding(r.at, alignment);
  const tensors = infos.map((t, i) => {
    const end = dataStart + relative[i] + t.dims.reduce((a, d) => a * d, 1) * TENSOR_BYTES[t.type];
    if (relative[i] % alignment !== 0 || end > fileSize) {
      throw new GrpoError('GRPO_DATA_FORMAT', `${path}: tensor "${t.name}" at offset ${relative[i]} is unaligned (${alignment}) or runs past the end of the file`);
    }
    return { ...t, offset: dataStart + relative[i] };
  });
  return { version, alignment, metadata, tensors, dataStart };
}

/** The key-values and tensor infos of a GGUF v3 file. */
export async function readGgufHeader(path: string): Promise<GgufHeader> {
  const file = await open(path, 'r').catch((error: unknown) => {
    throw unreadable(path, 'a GGUF file', error);
  });
  try {
    const { size } = await file.stat();
    for (let length = Math.min(size, 1 << 20); ; length = Math.min(size, length * 4)) {
      const prefix = Buffer.alloc(length);
      await file.read(prefix, 0, length, 0);
      try {
        return parse(prefix, length === size, path, size);
      } catch (error) {
        if (!(error instanceof NeedMore)) throw error;
      }
    }
  } finally {
    await file.close();
  }
}

/** One tensor of `header`'s file widened to float32. */
export async function readGgufTensor(path: string, header: GgufHeader, name: string): Promise<Float32Array> {
  const info = header.tensors.find((t) => t.name === name);
  if (!info) throw new GrpoError('GRPO_DATA_FORMAT', `${path}: no tensor "${name}"`);
  const count = info.dims.reduce((a, d) => a * d, 1);
  const bytes = Buffer.alloc(count * TENSOR_BYTES[info.type]);
  const file = await open(path, 'r');
  try {
    await file.read(bytes, 0, bytes.length, info.offset);
  } finally {
    await file.close();
  }
  return toFloat32(bytes, info.type, count);
}
