import { GrpoError } from './errors.js';

/** One wording for every argument error: what, expected, received (sharp's `is.mjs` style). */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (ArrayBuffer.isView(value)) return `${value.constructor.name}(${(value as Float32Array).length})`;
  if (Array.isArray(value)) return `Array(${value.length})`;
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return typeof value;
}

function assertAttached(name: string, view: ArrayBufferView): void {
  try {
    // Constructing a view on a detached ArrayBuffer throws; Node 20 has no `buffer.detached`.
    new Uint8Array(view.buffer, 0, 0);
  } catch {
    throw new GrpoError('GRPO_DETACHED_BUFFER', `${name}: its ArrayBuffer is detached (was it transferred to a worker?)`);
  }
}

export function float32Array(name: string, value: unknown): Float32Array {
  if (!(value instanceof Float32Array)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected Float32Array for ${name} but received ${describe(value)}`);
  }
  assertAttached(name, value);
  return value;
}

export function int32Array(name: string, value: unknown): Int32Array {
  if (!(value instanceof Int32Array)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected Int32Array for ${name} but received ${describe(value)}`);
  }
  assertAttached(name, value);
  return value;
}

export function uint8Array(name: string, value: unknown): Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected Uint8Array for ${name} but received ${describe(value)}`);
  }
  assertAttached(name, value);
  return value;
}

export function length(name: string, view: ArrayLike<unknown>, expected: number, shape: string): void {
  if (view.length !== expected) {
    throw new GrpoError(
      'GRPO_SHAPE_MISMATCH',
      `Expected ${name} of shape ${shape} = ${expected} elements but received ${view.length}`,
    );
  }
}

/** Rejects NaN and +Infinity; -Infinity is allowed where it means "masked" (allowNegInf). */
export function finite(name: string, view: Float32Array, allowNegInf = false): void {
  for (let i = 0; i < view.length; i++) {
    const v = view[i];
    if (v - v !== 0 && !(allowNegInf && v === -Infinity)) {
      throw new GrpoError('GRPO_NON_FINITE', `Expected finite float32 for ${name}[${i}] but received ${v}`);
    }
  }
}

export function integer(name: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected an integer for ${name} but received ${describe(value)}`);
  }
  if (value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in [${min}, ${max}]`;
    throw new GrpoError('GRPO_VALUE_RANGE', `Expected ${name} ${range} but received ${value}`);
  }
  return value;
}

export function number(name: string, value: unknown, check: (v: number) => boolean, expectation: string): number {
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected a number for ${name} but received ${describe(value)}`);
  }
  if (!check(value)) {
    throw new GrpoError('GRPO_VALUE_RANGE', `Expected ${name} ${expectation} but received ${value}`);
  }
  return value;
}

export function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new GrpoError(
      'GRPO_VALUE_RANGE',
      `Expected ${name} to be one of ${allowed.map((a) => `"${a}"`).join(', ')} but received ${describe(value)}`,
    );
  }
  return value as T;
}

export function string(name: string, value: unknown): string {
  if (typeof value !== 'string') {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected a string for ${name} but received ${describe(value)}`);
  }
  return value;
}

/** A plain object (not null, not an array). */
export function object(name: string, value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected an object for ${name} but received ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

export function boolean(name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected a boolean for ${name} but received ${describe(value)}`);
  }
  return value;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}

/** Rejects keys that are not options, suggesting the closest known key. */
export function knownKeys(name: string, options: object | undefined, known: readonly string[]): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object') {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected an options object for ${name} but received ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const closest = [...known].sort((x, y) => editDistance(key, x) - editDistance(key, y))[0];
    const hint = closest !== undefined && editDistance(key, closest) <= 3 ? `; did you mean "${closest}"?` : '';
    throw new GrpoError('GRPO_UNKNOWN_OPTION', `Option "${key}" of ${name} is unknown${hint}`);
  }
}

export function uint16Array(name: string, value: unknown): Uint16Array {
  if (!(value instanceof Uint16Array)) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected Uint16Array for ${name} but received ${describe(value)}`);
  }
  assertAttached(name, value);
  return value;
}

/** True when two views share any byte of one ArrayBuffer. */
function overlaps(a: ArrayBufferView, b: ArrayBufferView): boolean {
  return a.buffer === b.buffer && a.byteOffset < b.byteOffset + b.byteLength && b.byteOffset < a.byteOffset + a.byteLength;
}

/**
 * A caller's output buffer: a Float32Array of exactly `expected` elements sharing no memory with any input
 * (the kernel reads its inputs after it starts writing). GRPO_INVALID_ARGUMENT / GRPO_SHAPE_MISMATCH name `name`.
 */
export function outputBuffer(name: string, value: unknown, expected: number, shape: string,
  inputs: Record<string, ArrayBufferView | null | undefined>): Float32Array {
  const out = float32Array(name, value);
  length(name, out, expected, shape);
  for (const [input, view] of Object.entries(inputs)) {
    if (view && overlaps(out, view)) {
      throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${name} to share no memory with the input ${input}`);
    }
  }
  return out;
}
