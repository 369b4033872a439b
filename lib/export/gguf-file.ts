// GGUF v3 files, as ggml's spec lays them out (ggml-org/ggml docs/gguf.md; the constants of llama.cpp's
// gguf-py/gguf/constants.py): "GGUF", version 3, the tensor and key-value counts (u64), the key-values
// (a u64-length string key, a u32 value type, the value), the tensor infos (name, u32 rank, u64 dims with ne[0]
// the fastest-varying, u32 ggml type, u64 offset into the data section), zero padding to general.alignment
// (32 by default), then each tensor's bytes at its offset, every offset a multiple of the alignment. Everything is
// little-endian. This file writes it; gguf-read.ts reads it back.
import { open } from 'node:fs/promises';
import { GrpoError } from '../errors.js';
import { fromFloat32 } from '../policy/safetensors.js';

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
export const GGUF_VERSION = 3;
export const GGUF_DEFAULT_ALIGNMENT = 32;

/** gguf_type: the value types of a key-value pair. */
export const VALUE_TYPES = {
  uint8: 0, int8: 1, uint16: 2, int16: 3, uint32: 4, int32: 5, float32: 6, bool: 7, string: 8, array: 9, uint64: 10, int64: 11, float64: 12,
} as const;
export type GgufScalarType = Exclude<keyof typeof VALUE_TYPES, 'array'>;
export type GgufScalar = number | bigint | boolean | string;

/** A metadata value: one scalar of `type`, or an array of `itemType` scalars. */
export type GgufValue = { type: GgufScalarType; value: GgufScalar } | { type: 'array'; itemType: GgufScalarType; values: GgufScalar[] };

/** The ggml tensor types written (GGMLQuantizationType F32, F16, BF16). */
export const TENSOR_TYPES = { F32: 0, F16: 1, BF16: 30 } as const;
export type GgufTensorType = keyof typeof TENSOR_TYPES;
export const TENSOR_BYTES: Record<GgufTensorType, number> = { F32: 4, F16: 2, BF16: 2 };

/** A tensor to write: `dims` in GGUF's order (ne[0] first: [columns, rows] of a row-major [rows, columns] matrix). */
export interface GgufTensor {
  name: string;
  dims: number[];
  type: GgufTensorType;
  data: Float32Array;
}

export interface GgufContents {
  /** Written in this order; general.alignment, when present, must be a uint32 power of two. */
  metadata: ReadonlyMap<string, GgufValue>;
  tensors: readonly GgufTensor[];
}

/** Bytes appended to a growing buffer. */
class ByteWriter {
  private buffer = Buffer.alloc(1 << 16);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buffer.length) return;
    const grown = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + n));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }

  u32(v: number): void {
    this.room(4);
    this.length = this.buffer.writeUInt32LE(v, this.length);
  }

  u64(v: number | bigint): void {
    this.room(8);
    this.length = this.buffer.writeBigUInt64LE(BigInt(v), this.length);
  }

  string(s: string): void {
    const bytes = Buffer.from(s, 'utf8');
    this.u64(bytes.length);
    this.room(bytes.length);
    this.length += bytes.copy(this.buffer, this.length);
  }

  scalar(type: GgufScalarType, v: GgufScalar): void {
    if (type === 'string') return this.string(v as string);
    const width = { uint8: 1, int8: 1, bool: 1, uint16: 2, int16: 2, uint32: 4, int32: 4, float32: 4, uint64: 8, int64: 8, float64: 8 }[type];
    this.room(width);
    const b = this.buffer, at = this.length;
    switch (type) {
      case 'uint8': b.writeUInt8(v as number, at); break;
      case 'int8': b.writeInt8(v as number, at); break;
      case 'bool': b.writeUInt8(v ? 1 : 0, at); break;
      case 'uint16': b.writeUInt16LE(v as number, at); break;
      case 'int16': b.writeInt16LE(v as number, at); break;
      case 'uint32': b.writeUInt32LE(v as number, at); break;
      case 'int32': b.writeInt32LE(v as number, at); break;
      case 'float32': b.writeFloatLE(v as number, at); break;
      case 'uint64': b.writeBigUInt64LE(BigInt(v as number), at); break;
      case 'int64': b.writeBigInt64LE(BigInt(v as number), at); break;
      case 'float64': b.writeDoubleLE(v as number, at); break;
    }
    this.length += width;
  }

  value(v: GgufValue): void {
    this.u32(VALUE_TYPES[v.type]);
    if (v.type !== 'array') return this.scalar(v.type, v.value);
    this.u32(VALUE_TYPES[v.itemType]);
    this.u64(v.values.length);
    for (const item of v.values) this.scalar(v.itemType, item);
  }

  pad(alignment: number): void {
    const n = padding(this.length, alignment);
    this.room(n);
    this.buffer.fill(0, this.length, this.length + n);
    this.length += n;
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

/** Zero bytes that bring `offset` to a multiple of `alignment`. */
export function padding(offset: number, alignment: number): number {
  return (alignment - (offset % alignment)) % alignment;
}

/** general.alignment of `metadata` (checked), or the default 32. */
export function alignmentOf(metadata: ReadonlyMap<string, GgufValue>, where: string): number {
  const v = metadata.get('general.alignment');
  if (v === undefined) return GGUF_DEFAULT_ALIGNMENT;
  const n = v.type === 'uint32' ? Number(v.value) : NaN;
  if (!(n > 0 && (n & (n - 1)) === 0)) {
    throw new GrpoError('GRPO_DATA_FORMAT', `${where}: general.alignment must be a uint32 power of two but is ${JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? String(x) : x))}`);
  }
  return n;
}

const elements = (dims: readonly number[]) => dims.reduce((a, b) => a * b, 1);

/** The header (through the padding before the data section) and each tensor's offset in the data section. */
function header(c: GgufContents, alignment: number): { bytes: Buffer; offsets: number[]; dataBytes: number } {
  const w = new ByteWriter();
  w.u32(GGUF_MAGIC);
  w.u32(GGUF_VERSION);
  w.u64(c.tensors.length);
  w.u64(c.metadata.size);
  for (const [key, value] of c.metadata) {
    w.string(key);
    w.value(value);
  }
  const offsets: number[] = [];
  let offset = 0;
  for (const t of c.tensors) {
    w.string(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(d);
    w.u32(TENSOR_TYPES[t.type]);
    w.u64(offset);
    offsets.push(offset);
    offset += elements(t.dims) * TENSOR_BYTES[t.type];
    offset += padding(offset, alignment);
  }
  w.pad(alignment);
  return { bytes: w.bytes(), offsets, dataBytes: offset };
}

function checkTensor(t: GgufTensor): void {
  if (t.dims.length < 1 || t.dims.length > 4 || !t.dims.every((d) => Number.isSafeInteger(d) && d > 0)) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH', `GGUF tensor "${t.name}": dims must be 1 to 4 positive integers but are [${t.dims}]`);
  }
  if (elements(t.dims) !== t.data.length) {
    throw new GrpoError('GRPO_SHAPE_MISMATCH', `GGUF tensor "${t.name}": dims [${t.dims}] hold ${elements(t.dims)} values but the data has ${t.data.length}`);
  }
}

/** Writes a GGUF v3 file: header, then each tensor converted to its type (nearest-even rounding) at its aligned offset. */
export async function writeGguf(path: string, c: GgufContents): Promise<void> {
  c.tensors.forEach(checkTensor);
  const alignment = alignmentOf(c.metadata, path);
  const { bytes, offsets, dataBytes } = header(c, alignment);
  const file = await open(path, 'w');
  try {
    await file.write(bytes, 0, bytes.length, 0);
    for (let i = 0; i < c.tensors.length; i++) {
      const t = c.tensors[i];
      const data = fromFloat32(t.data, t.type);
      await file.write(data, 0, data.length, bytes.length + offsets[i]);
    }
    // the last tensor is padded too (as gguf-py's writer does): the data section is a whole number of alignments
    await file.truncate(bytes.length + dataBytes);
    await file.sync();
  } finally {
    await file.close();
  }
}
