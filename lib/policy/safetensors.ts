// safetensors files: an 8-byte little-endian header length, a JSON header
// { name: { dtype, shape, data_offsets: [begin, end] } } padded with spaces to 8 bytes, then the data.
// Tensors are read one at a time at their offsets (files larger than one Buffer are fine).
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GrpoError } from '../errors.js';
import { unreadable } from '../user-files.js';

/** A float32 tensor by name. */
export interface NamedTensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

interface HeaderEntry {
  dtype: WeightDtype;
  shape: number[];
  data_offsets: [number, number];
}

/** The element types read and written: widened to float32 on read, rounded to nearest even on write. */
export type WeightDtype = 'F32' | 'BF16' | 'F16';

const BYTES: Record<WeightDtype, number> = { F32: 4, BF16: 2, F16: 2 };

function badFile(path: string, what: string): GrpoError {
  return new GrpoError('GRPO_DATA_FORMAT', `${path}: ${what}`);
}

function float16ToFloat32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1, exponent = (h >> 10) & 0x1f, fraction = h & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

/** float32 bits → float16 bits, rounded to nearest even (NaN stays NaN, overflow → ±Infinity). */
function float32ToFloat16(bits: number): number {
  const sign = (bits >>> 16) & 0x8000, exponent = (bits >>> 23) & 0xff, mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  const e = exponent - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  // normal halves keep 10 of the 23 mantissa bits; subnormal ones shift the implicit 1 in as well
  const shift = e > 0 ? 13 : 14 - e;
  if (shift > 24) return sign;
  const full = e > 0 ? mantissa : mantissa | 0x800000;
  const halfway = 1 << (shift - 1), rest = full & ((1 << shift) - 1);
  let half = (e > 0 ? e << 10 : 0) + (full >>> shift);
  if (rest > halfway || (rest === halfway && half & 1)) half += 1; // a carry into the exponent is still right
  return sign | half;
}

/** float32 values as F32, BF16 or F16 bytes (little-endian), rounded to nearest even. */
export function fromFloat32(data: Float32Array, dtype: WeightDtype): Buffer {
  if (dtype === 'F32') return Buffer.from(new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice());
  const bits = new Uint32Array(data.buffer, data.byteOffset, data.length), out = Buffer.alloc(2 * data.length);
  for (let i = 0; i < data.length; i++) {
    const b = bits[i];
    const isNan = (b & 0x7f800000) === 0x7f800000 && (b & 0x7fffff) !== 0;
    const half = dtype === 'F16' ? float32ToFloat16(b) : isNan ? (b >>> 16) | 0x40 : (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
    out.writeUInt16LE(half & 0xffff, 2 * i);
  }
  return out;
}

/** Widens F32, BF16 or F16 bytes to float32. */
export function toFloat32(bytes: Buffer, dtype: WeightDtype, count: number): Float32Array {
  const out = new Float32Array(count);
  if (dtype === 'F32') {
    new Uint8Array(out.buffer).set(bytes);
  } else if (dtype === 'BF16') {
    const bits = new Uint32Array(out.buffer);
    for (let i = 0; i < count; i++) bits[i] = bytes.readUInt16LE(2 * i) << 16;
  } else {
    for (let i = 0; i < count; i++) out[i] = float16ToFloat32(bytes.readUInt16LE(2 * i));
  }
  return out;
}

/** Parses and checks the header (dtypes, shapes, offsets inside the file). */
async function readHeader(path: string): Promise<{ entries: Map<string, HeaderEntry>; dataStart: number; fileSize: number }> {
  const file = await open(path, 'r').catch((error: unknown) => {
    throw unreadable(path, 'model weights in the safetensors format', error);
  });
  try {
    const { size } = await file.stat();
    const prefix = Buffer.alloc(8);
    await file.read(prefix, 0, 8, 0);
    const length = Number(prefix.readBigUInt64LE(0));
    if (size < 8 || length > size - 8) throw badFile(path, `header length ${length} exceeds the file size ${size}`);
    const text = Buffer.alloc(length);
    await file.read(text, 0, length, 8);
    const json = parseHeader(path, text);
    const entries = new Map<string, HeaderEntry>();
    for (const [name, value] of Object.entries(json)) {
      if (name === '__metadata__') continue;
      entries.set(name, checkEntry(path, name, value, size - 8 - length));
    }
    return { entries, dataStart: 8 + length, fileSize: size };
  } finally {
    await file.close();
  }
}

function parseHeader(path: string, text: Buffer): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(text.toString('utf8'));
  } catch {
    throw badFile(path, 'header is not valid JSON');
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw badFile(path, `header: expected a JSON object of tensors but received ${received(json)}`);
  }
  return json as Record<string, unknown>;
}

/** A header value as an error message shows it. */
function received(value: unknown): string {
  if (value === undefined) return 'nothing (the field is missing)';
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

const isCounts = (value: unknown): value is number[] => Array.isArray(value) && value.every((v) => Number.isSafeInteger(v) && v >= 0);

/** Checks one header entry: every field's type, then that its offsets match its shape and lie in the file. */
function checkEntry(path: string, name: string, value: unknown, dataBytes: number): HeaderEntry {
  const fieldError = (field: string, expected: string, got: unknown) =>
    badFile(path, `tensor "${name}" field "${field}": expected ${expected} but received ${received(got)}`);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badFile(path, `tensor "${name}": expected an object { dtype, shape, data_offsets } but received ${received(value)}`);
  }
  const e = value as Record<string, unknown>;
  if (typeof e.dtype !== 'string') throw fieldError('dtype', 'a string', e.dtype);
  if (!Object.hasOwn(BYTES, e.dtype)) throw new GrpoError('GRPO_UNSUPPORTED', `${path}: tensor "${name}" has dtype ${JSON.stringify(e.dtype)}; supported: F32, BF16, F16`);
  if (!isCounts(e.shape)) throw fieldError('shape', 'an array of integers >= 0', e.shape);
  if (!isCounts(e.data_offsets) || e.data_offsets.length !== 2) throw fieldError('data_offsets', 'two integers [begin, end] >= 0', e.data_offsets);
  const count = e.shape.reduce((a, b) => a * b, 1);
  const [begin, end] = e.data_offsets;
  if (end - begin !== count * BYTES[e.dtype as WeightDtype] || end > dataBytes) {
    throw badFile(path, `tensor "${name}" offsets [${begin}, ${end}) do not match shape [${e.shape}] ${e.dtype} inside ${dataBytes} data bytes`);
  }
  return { dtype: e.dtype as WeightDtype, shape: e.shape, data_offsets: [begin, end] };
}

/** Reads every tensor of one .safetensors file (widened to float32), calling `want` to skip some. */
export async function readSafetensors(path: string, want: (name: string) => boolean = () => true): Promise<NamedTensor[]> {
  const { entries, dataStart } = await readHeader(path);
  const file = await open(path, 'r');
  try {
    const out: NamedTensor[] = [];
    for (const [name, e] of entries) {
      if (!want(name)) continue;
      const bytes = Buffer.alloc(e.data_offsets[1] - e.data_offsets[0]);
      await file.read(bytes, 0, bytes.length, dataStart + e.data_offsets[0]);
      out.push({ name, shape: e.shape, data: toFloat32(bytes, e.dtype, bytes.length / BYTES[e.dtype]) });
    }
    return out;
  } finally {
    await file.close();
  }
}

/** Header bytes for tensors of `dtype` laid end to end, padded with spaces to a multiple of 8. */
function headerFor(tensors: readonly NamedTensor[], metadata: Record<string, string>, dtype: WeightDtype): Buffer {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  for (const t of tensors) {
    const bytes = t.data.length * BYTES[dtype];
    header[t.name] = { dtype, shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const padded = Buffer.alloc(Math.ceil(json.length / 8) * 8, 0x20);
  json.copy(padded);
  return padded;
}

/** Writes float32 tensors to one .safetensors file, stored as `dtype`. */
export async function writeSafetensors(
  path: string, tensors: readonly NamedTensor[], metadata: Record<string, string> = { format: 'pt' }, dtype: WeightDtype = 'F32',
): Promise<void> {
  const header = headerFor(tensors, metadata, dtype);
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(header.length), 0);
  const file = await open(path, 'w');
  try {
    await file.write(prefix);
    await file.write(header);
    for (const t of tensors) {
      await file.write(dtype === 'F32' ? new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength) : fromFloat32(t.data, dtype));
    }
    await file.sync();
  } finally {
    await file.close();
  }
}

/** One tensor of a file as {@link rewriteSafetensors} hands it over: its stored dtype and bytes. */
export interface StoredTensor {
  name: string;
  dtype: WeightDtype;
  shape: number[];
  bytes: Buffer;
}

/**
 * Copies a .safetensors file tensor by tensor (one in memory at a time), with the bytes `replace` returns (same
 * dtype and length) in place of a tensor's own; the header is copied as it is.
 */
export async function rewriteSafetensors(from: string, to: string, replace: (t: StoredTensor) => Promise<Buffer | undefined>): Promise<void> {
  const { entries, dataStart } = await readHeader(from);
  const source = await open(from, 'r');
  const target = await open(to, 'w');
  try {
    const header = Buffer.alloc(dataStart);
    await source.read(header, 0, dataStart, 0);
    await target.write(header, 0, dataStart, 0);
    for (const [name, e] of entries) {
      const [begin, end] = e.data_offsets;
      const bytes = Buffer.alloc(end - begin);
      await source.read(bytes, 0, bytes.length, dataStart + begin);
      const replaced = await replace({ name, dtype: e.dtype, shape: e.shape, bytes });
      if (replaced && replaced.length !== bytes.length) {
        throw new GrpoError('GRPO_INTERNAL', `rewriteSafetensors: ${name} replaced by ${replaced.length} bytes instead of ${bytes.length}`);
      }
      await target.write(replaced ?? bytes, 0, bytes.length, dataStart + begin);
    }
    await target.sync();
  } finally {
    await source.close();
    await target.close();
  }
}

export const INDEX_FILE = 'model.safetensors.index.json';

/** Splits tensors into shards of at most `maxShardBytes` stored as `dtype` (one tensor never splits). */
function shard(tensors: readonly NamedTensor[], maxShardBytes: number, dtype: WeightDtype): NamedTensor[][] {
  const shards: NamedTensor[][] = [[]];
  let bytes = 0;
  for (const t of tensors) {
    const size = t.data.length * BYTES[dtype];
    if (bytes > 0 && bytes + size > maxShardBytes) {
      shards.push([]);
      bytes = 0;
    }
    shards[shards.length - 1].push(t);
    bytes += size;
  }
  return shards;
}

/**
 * Writes model.safetensors, or model-0000i-of-0000n.safetensors plus the index when larger than maxShardBytes,
 * stored as `dtype` (shard sizes and the index's total_size count the stored bytes, as transformers' do).
 */
export async function writeModelWeights(dir: string, tensors: readonly NamedTensor[], maxShardBytes = Infinity, dtype: WeightDtype = 'F32'): Promise<string[]> {
  const shards = shard(tensors, maxShardBytes, dtype);
  if (shards.length === 1) {
    await writeSafetensors(join(dir, 'model.safetensors'), tensors, undefined, dtype);
    return ['model.safetensors'];
  }
  const pad = (i: number) => String(i).padStart(5, '0');
  const names = shards.map((_, i) => `model-${pad(i + 1)}-of-${pad(shards.length)}.safetensors`);
  const weightMap: Record<string, string> = {};
  for (let i = 0; i < shards.length; i++) {
    await writeSafetensors(join(dir, names[i]), shards[i], undefined, dtype);
    for (const t of shards[i]) weightMap[t.name] = names[i];
  }
  const total = tensors.reduce((sum, t) => sum + t.data.length * BYTES[dtype], 0);
  await writeJsonFile(join(dir, INDEX_FILE), { metadata: { total_size: total }, weight_map: weightMap });
  return [...names, INDEX_FILE];
}

/** Reads a model folder's weights: model.safetensors or the shards listed in the index. */
export async function readModelWeights(dir: string, want?: (name: string) => boolean): Promise<NamedTensor[]> {
  const files = (await readShardIndex(dir)) ?? ['model.safetensors'];
  const out: NamedTensor[] = [];
  for (const file of files) out.push(...(await readSafetensors(join(dir, file), want)));
  return out;
}

/** The shard files named by model.safetensors.index.json, or undefined when the folder has no index. */
export async function readShardIndex(dir: string): Promise<string[] | undefined> {
  const path = join(dir, INDEX_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unreadable(path, 'the index of the safetensors shards', error);
  }
  let index: unknown;
  try {
    index = JSON.parse(text);
  } catch (error) {
    throw badFile(path, `not valid JSON (${(error as Error).message})`);
  }
  const map = (index as { weight_map?: unknown } | null)?.weight_map;
  const files = map !== null && typeof map === 'object' && !Array.isArray(map) ? Object.values(map) : [];
  if (files.length === 0 || !files.every((f) => typeof f === 'string' && f !== '')) {
    throw badFile(path, `field "weight_map": expected an object of tensor name → shard file but received ${received(map)}`);
  }
  return [...new Set(files as string[])];
}

export async function writeJsonFile(path: string, value: unknown): Promise<void> {
  const file = await open(path, 'w');
  try {
    await file.write(`${JSON.stringify(value, null, 2)}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
}
