// Option schemas: every option of an option object declared once (kind, range, default, one description).
// The TS type, the DEFAULTS object, the key list, the validation (lib/validate.ts checkOptions) and the
// option tables of docs/*.md (lib/option-tables.ts) are all derived from these declarations.
import type { Device } from '../devices.js';
import { GrpoError } from '../errors.js';
import * as check from '../validate.js';

/** How the names of an option object and its fields read in error messages. */
export interface Naming {
  /** `policyLoss epsilonLow`, `config "generation.topK"`. */
  field(path: string): string;
  /** `policyLoss`, `policyLoss vespo`, `the config`, `config "rewards"`. */
  object(path: string): string;
}

/** One option: its checker (value → checked value, merged over `base` for nested objects) and its documentation. */
export interface Field<T> {
  /** The documented type, e.g. `number (finite and >= 0)` or `"zero" | "nan"`. */
  readonly type: string;
  /** One description: the docs table reads it, as should any reader of the code. */
  readonly doc: string;
  /** Filled in when the option is not given; undefined = none (the kernel decides, or the option is required). */
  readonly default: T | undefined;
  /** The documented default where it is not a plain value (e.g. "the recipe's preset"). */
  readonly defaultDoc?: string;
  /** Checked even when absent (a required option without a default). */
  readonly required?: boolean;
  /** Nested options (an object of its own). */
  readonly schema?: Schema;
  readonly read: (value: unknown, path: string, naming: Naming, base: T | undefined) => T;
}

// any: a field's checker takes and returns its own value type, so no narrower type admits every field.
export type Schema = { readonly [key: string]: Field<any> };

export type TypeOf<F> = F extends Field<infer T> ? T : never;
/** Every option present (a resolved option object, a complete config section). */
export type ValuesOf<S extends Schema> = { -readonly [K in keyof S]: TypeOf<S[K]> };
/** What a caller writes: every option optional. */
export type OptionsOf<S extends Schema> = { -readonly [K in keyof S]?: TypeOf<S[K]> };

/** A numeric range with the wording of its error ("to be finite and >= 0", "in (0, 1]"). */
export interface Range {
  readonly ok: (value: number) => boolean;
  readonly expectation: string;
}

export const FINITE: Range = { ok: Number.isFinite, expectation: 'to be finite' };
export const NON_NEGATIVE: Range = { ok: (v) => v >= 0 && Number.isFinite(v), expectation: 'to be finite and >= 0' };
export const POSITIVE: Range = { ok: (v) => v > 0 && Number.isFinite(v), expectation: 'to be finite and > 0' };
export const AT_LEAST_ONE: Range = { ok: (v) => v >= 1 && Number.isFinite(v), expectation: 'to be finite and >= 1' };
export const ABOVE_ONE: Range = { ok: (v) => v > 1 && Number.isFinite(v), expectation: 'to be finite and > 1' };
export const UNIT_OPEN_CLOSED: Range = { ok: (v) => v > 0 && v <= 1, expectation: 'in (0, 1]' };
export const UNIT: Range = { ok: (v) => v >= 0 && v <= 1, expectation: 'in [0, 1]' };

type Extra = { defaultDoc?: string };

export function number(def: number | undefined, doc: string, range: Range = NON_NEGATIVE, extra: Extra = {}): Field<number> {
  return {
    type: `number (${range.expectation.replace(/^to be /, '')})`, doc, default: def, ...extra,
    read: (v, path, n) => check.number(n.field(path), v, range.ok, range.expectation),
  };
}

/** 2^31 − 1 rather than 2147483647 in the docs. */
function bound(n: number): string {
  const sign = n < 0 ? '-' : '';
  const a = Math.abs(n);
  const k = Math.round(Math.log2(a));
  if (a < 2 ** 16) return String(n);
  if (2 ** k === a) return `${sign}2^${k}`;
  return 2 ** k - 1 === a ? `${sign}2^${k} − 1` : String(n);
}

export function integer(def: number | undefined, doc: string, min: number, max?: number, extra: Extra & { required?: boolean } = {}): Field<number> {
  const range = max === undefined ? `>= ${bound(min)}` : `in [${bound(min)}, ${bound(max)}]`;
  return {
    type: `integer ${range}`, doc, default: def, ...extra,
    read: (v, path, n) => check.integer(n.field(path), v, min, max),
  };
}

export function boolean(def: boolean, doc: string): Field<boolean> {
  return { type: 'boolean', doc, default: def, read: (v, path, n) => check.boolean(n.field(path), v) };
}

export function string(def: string, doc: string, extra: Extra = {}): Field<string> {
  return { type: 'string', doc, default: def, ...extra, read: (v, path, n) => check.string(n.field(path), v) };
}

export function choice<const T extends string>(values: readonly T[], def: T, doc: string, extra: Extra = {}): Field<T> {
  return {
    type: values.map((v) => `"${v}"`).join(' | '), doc, default: def, ...extra,
    read: (v, path, n) => check.oneOf(n.field(path), v, values),
  };
}

/** `field` or null (off / decided by the call); the default is null. */
export function nullable<T>(field: Field<T>, extra: Extra = {}): Field<T | null> {
  return {
    ...field, type: `${field.type} or null`, default: null, ...extra,
    read: (v, path, n, base) => (v === null ? null : field.read(v, path, n, base ?? undefined)),
  };
}

/** A value this schema documents but whose checks belong to the call that reads it (arrays, devices). */
export function opaque<T>(type: string, doc: string, defaultDoc = 'none'): Field<T | undefined> {
  return { type, doc, default: undefined, defaultDoc, read: (v) => v as T };
}

/** A function option (a prompt builder); `type` is its signature, named in the error. */
export function callback<T>(def: T, type: string, doc: string, defaultDoc: string): Field<T> {
  return {
    type, doc, default: def, defaultDoc,
    read: (v, path, n) => {
      if (typeof v !== 'function') throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected ${n.field(path)} to be a function ${type}`);
      return v as T;
    },
  };
}

/** Where a kernel runs (checked by the binding that picks the backend); `detail` adds to the description. */
export function device(detail = ''): Field<Device | undefined> {
  return opaque<Device>('"cpu" | "cuda" | "auto"',
    `Where to run: "cpu", "cuda" (GRPO_CUDA_UNAVAILABLE without a usable GPU${detail}) or "auto" (CUDA when available).`, '`"cpu"`');
}

/** An object of options, merged field by field over its base (the defaults, or an earlier config layer). */
export function nested<const S extends Schema>(schema: S, doc: string): Field<ValuesOf<S>> {
  return {
    type: 'object', doc, default: defaultsOf(schema) as ValuesOf<S>, schema,
    read: (v, path, n, base) => {
      check.object(n.object(path), v);
      return checkOptions(schema, n, v as object, base as Partial<ValuesOf<S>>, path);
    },
  };
}

/** A copy of the plain objects and arrays in `value` (functions and class instances are shared). */
function copyPlain<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copyPlain) as T;
  if (value && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, copyPlain(v)])) as T;
  }
  return value;
}

function deepFreeze<T>(value: T): T {
  if (!value || typeof value !== 'object') return value;
  Object.values(value).forEach(deepFreeze);
  return Object.freeze(value);
}

const DEFAULTS = new WeakMap<Schema, object>();

/** The frozen defaults of a schema (fields without a default are left out), built once per schema. */
export function defaultsOf<S extends Schema>(schema: S): Readonly<ValuesOf<S>> {
  if (!DEFAULTS.has(schema)) {
    const entries = Object.entries(schema).filter(([, f]) => f.default !== undefined).map(([k, f]) => [k, f.default]);
    DEFAULTS.set(schema, deepFreeze(copyPlain(Object.fromEntries(entries))));
  }
  return DEFAULTS.get(schema) as ValuesOf<S>;
}

/** Error names of an options object named as a whole (`sampler options`) whose fields are named bare (`batchSize`). */
export function plainNaming(object: string): Naming {
  return { field: (path) => path, object: (path) => (path ? `${object} ${path}` : object) };
}

/** Error names of a kernel's options: `fn`, `fn key`, `fn vespo.kPos`. */
export function kernelNaming(fn: string): Naming {
  return { field: (path) => `${fn} ${path}`, object: (path) => (path ? `${fn} ${path}` : fn) };
}

/**
 * The one validator of option objects: unknown keys (with a suggestion), then every given (or required) value
 * by its schema field; returns the options merged over `base` (the schema's defaults, or an earlier layer of a config).
 */
export function checkOptions<S extends Schema>(schema: S, naming: Naming, input: object | undefined,
  base: Partial<ValuesOf<S>>, prefix = ''): ValuesOf<S> {
  check.knownKeys(naming.object(prefix), input, Object.keys(schema));
  const given = (input ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = { ...base };
  for (const [key, field] of Object.entries(schema)) {
    const value = given[key];
    const path = prefix ? `${prefix}.${key}` : key;
    if (value !== undefined || field.required) out[key] = field.read(value, path, naming, out[key]);
  }
  return out as ValuesOf<S>;
}
