// safetensors files: an 8-byte little-endian header length, a JSON header
// { name: { dtype, shape, data_offsets: [begin, end] } } padded with spaces to 8 bytes, then the data.
// Tensors are read one at a time at their offsets (files larger than one Buffer are fine).
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GrpoError } from '../errors.js';

/** A float32 tensor by name. */
export interface NamedTensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

interface HeaderEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

const BYTES: Record<string, number> = { F32: 4, BF16: 2, F16: 2 };

function badFile(path: string, what: string): GrpoError {
  return new GrpoError('GRPO_DATA_FORMAT', `${path}: ${what}`);
}

function float16ToFloat32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1, exponent = (h >> 10) & 0x1f, fraction = h & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

/** Widens F32, BF16 or F16 bytes to float32. */
function toFloat32(bytes: Buffer, dtype: string, count: number): Float32Array {
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
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const prefix = Buffer.alloc(8);
    await file.read(prefix, 0, 8, 0);
    const length = Number(prefix.readBigUInt64LE(0));
    if (size < 8 || length > size - 8) throw badFile(path, `header length ${length} exceeds the file size ${size}`);
    const text = Buffer.alloc(length);
    await file.read(text, 0, length, 8);
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(text.toString('utf8')) as Record<string, unknown>;
    } catch {
      throw badFile(path, 'header is not valid JSON');
    }
    const entries = new Map<string, HeaderEntry>();
    for (const [name, value] of Object.entries(json)) {
      if (name === '__metadata__') continue;
      entries.set(name, checkEntry(path, name, value as HeaderEntry, size - 8 - length));
    }
    return { entries, dataStart: 8 + length, fileSize: size };
  } finally {
    await file.close();
  }
}

function checkEntry(path: string, name: string, e: HeaderEntry, dataBytes: number): HeaderEntry {
  if (!(e?.dtype in BYTES)) throw new GrpoError('GRPO_UNSUPPORTED', `${path}: tensor "${name}" has dtype ${JSON.stringify(e?.dtype)}; supported: F32, BF16, F16`);
  const count = e.shape.reduce((a, b) => a * b, 1);
  const [begin, end] = e.data_offsets;
  if (end - begin !== count * BYTES[e.dtype] || begin < 0 || end > dataBytes) {
    throw badFile(path, `tensor "${name}" offsets [${begin}, ${end}) do not match shape [${e.shape}] ${e.dtype} inside ${dataBytes} data bytes`);
  }
  return e;
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

/** Header bytes for float32 tensors laid end to end, padded with spaces to a multiple of 8. */
function headerFor(tensors: readonly NamedTensor[], metadata: Record<string, string>): Buffer {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + t.data.byteLength] };
    offset += t.data.byteLength;
  }
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const padded = Buffer.alloc(Math.ceil(json.length / 8) * 8, 0x20);
  json.copy(padded);
  return padded;
}

/** Writes float32 tensors to one .safetensors file. */
export async function writeSafetensors(path: string, tensors: readonly NamedTensor[], metadata: Record<string, string> = { format: 'pt' }): Promise<void> {
  const header = headerFor(tensors, metadata);
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(header.length), 0);
  const file = await open(path, 'w');
  try {
    await file.write(prefix);
    await file.write(header);
    for (const t of tensors) await file.write(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    await file.sync();
  } finally {
    await file.close();
  }
}

const INDEX_FILE = 'model.safetensors.index.json';

/** Splits tensors into shards of at most `maxShardBytes` (one tensor never splits). */
function shard(tensors: readonly NamedTensor[], maxShardBytes: number): NamedTensor[][] {
  const shards: NamedTensor[][] = [[]];
  let bytes = 0;
  for (const t of tensors) {
    if (bytes > 0 && bytes + t.data.byteLength > maxShardBytes) {
      shards.push([]);
      bytes = 0;
    }
    shards[shards.length - 1].push(t);
    bytes += t.data.byteLength;
  }
  return shards;
}

/** Writes model.safetensors, or model-0000i-of-0000n.safetensors plus the index when larger than maxShardBytes. */
export async function writeModelWeights(dir: string, tensors: readonly NamedTensor[], maxShardBytes = Infinity): Promise<string[]> {
  const shards = shard(tensors, maxShardBytes);
  if (shards.length === 1) {
    await writeSafetensors(join(dir, 'model.safetensors'), tensors);
    return ['model.safetensors'];
  }
  const pad = (i: number) => String(i).padStart(5, '0');
  const names = shards.map((_, i) => `model-${pad(i + 1)}-of-${pad(shards.length)}.safetensors`);
  const weightMap: Record<string, string> = {};
  for (let i = 0; i < shards.length; i++) {
    await writeSafetensors(join(dir, names[i]), shards[i]);
    for (const t of shards[i]) weightMap[t.name] = names[i];
  }
  const total = tensors.reduce((sum, t) => sum + t.data.byteLength, 0);
  await writeJsonFile(join(dir, INDEX_FILE), { metadata: { total_size: total }, weight_map: weightMap });
  return [...names, INDEX_FILE];
}

/** Reads a model folder's weights: model.safetensors or the shards listed in the index. */
export async function readModelWeights(dir: string, want?: (name: string) => boolean): Promise<NamedTensor[]> {
  let index: { weight_map?: Record<string, string> } | undefined;
  try {
    index = JSON.parse(await readFile(join(dir, INDEX_FILE), 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw badFile(join(dir, INDEX_FILE), String(error));
  }
  const files = index ? [...new Set(Object.values(index.weight_map ?? {}))] : ['model.safetensors'];
  const out: NamedTensor[] = [];
  for (const file of files) out.push(...(await readSafetensors(join(dir, file), want)));
  return out;
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
