// safetensors headers with a missing field or a field of the wrong type: GRPO_DATA_FORMAT naming the
// file, the tensor and the field (a TypeError from `reduce`, before). Layout: an 8-byte little-endian
// header length, the JSON header, then the data (https://github.com/huggingface/safetensors, README "Format").
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GrpoError } from '../lib/errors.js';
import { readModelWeights, readSafetensors } from '../lib/policy/safetensors.js';

const dir = mkdtempSync(join(tmpdir(), 'grpo-safetensors-errors-'));

/** A .safetensors file with `header` (any JSON) and `dataBytes` zero bytes of data. */
function fileWith(header: unknown, dataBytes = 16): string {
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(json.length), 0);
  const path = join(dir, `t${Math.random().toString(36).slice(2)}.safetensors`);
  writeFileSync(path, Buffer.concat([prefix, json, Buffer.alloc(dataBytes)]));
  return path;
}

async function errorOf(path: string): Promise<GrpoError> {
  const error = await readSafetensors(path).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(GrpoError);
  return error as GrpoError;
}

const good = { dtype: 'F32', shape: [2, 2], data_offsets: [0, 16] };

describe('safetensors header entries', () => {
  it('a well-formed entry reads', async () => {
    expect((await readSafetensors(fileWith({ w: good })))[0]).toMatchObject({ name: 'w', shape: [2, 2] });
  });

  const cases: [string, unknown, RegExp][] = [
    ['no shape', { dtype: 'F32', data_offsets: [0, 16] }, /tensor "w" field "shape": expected an array of integers >= 0 but received nothing \(the field is missing\)$/],
    ['shape a string', { ...good, shape: '2x2' }, /tensor "w" field "shape": expected an array of integers >= 0 but received "2x2"$/],
    ['shape with a fraction', { ...good, shape: [2, 1.5] }, /field "shape": expected an array of integers >= 0 but received \[2,1\.5\]$/],
    ['shape with a negative', { ...good, shape: [-2, -2] }, /field "shape": .* received \[-2,-2\]$/],
    ['no data_offsets', { dtype: 'F32', shape: [4] }, /tensor "w" field "data_offsets": expected two integers \[begin, end\] >= 0 but received nothing/],
    ['three offsets', { ...good, data_offsets: [0, 8, 16] }, /field "data_offsets": .* received \[0,8,16\]$/],
    ['offsets as strings', { ...good, data_offsets: ['0', '16'] }, /field "data_offsets": .* received \["0","16"\]$/],
    ['dtype a number', { ...good, dtype: 4 }, /tensor "w" field "dtype": expected a string but received 4$/],
    ['no dtype', { shape: [4], data_offsets: [0, 16] }, /tensor "w" field "dtype": expected a string but received nothing/],
    ['entry not an object', [1, 2], /tensor "w": expected an object \{ dtype, shape, data_offsets \} but received \[1,2\]$/],
    ['entry null', null, /tensor "w": expected an object .* received null$/],
  ];
  it.each(cases)('%s → GRPO_DATA_FORMAT naming the tensor and field', async (_, entry, message) => {
    const path = fileWith({ w: entry });
    const error = await errorOf(path);
    expect(error.code).toBe('GRPO_DATA_FORMAT');
    expect(error.message.startsWith(`${path}: `)).toBe(true);
    expect(error.message).toMatch(message);
  });

  it('a dtype named like an Object.prototype key is unsupported, not a crash', async () => {
    const error = await errorOf(fileWith({ w: { ...good, dtype: 'constructor' } }));
    expect([error.code, error.message]).toEqual(['GRPO_UNSUPPORTED', expect.stringContaining('has dtype "constructor"; supported: F32, BF16, F16')]);
  });

  it('a header that is not an object of tensors', async () => {
    for (const header of [[1], null, 'text', 5]) {
      expect((await errorOf(fileWith(header))).message).toMatch(/header: expected a JSON object of tensors but received/);
    }
  });

  it('a shard index whose weight_map is not an object of file names', async () => {
    for (const index of [{}, { weight_map: 3 }, { weight_map: { w: 7 } }, null]) {
      const folder = mkdtempSync(join(dir, 'index-'));
      writeFileSync(join(folder, 'model.safetensors.index.json'), JSON.stringify(index));
      const error = await readModelWeights(folder).then(() => undefined, (e: unknown) => e);
      expect(error).toMatchObject({ code: 'GRPO_DATA_FORMAT', message: expect.stringContaining('field "weight_map": expected an object of tensor name → shard file') });
    }
  });
});
