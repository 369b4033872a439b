import { dataError, type JsonlLocation } from './jsonl.js';

/**
 * Field readers for record parsers: each names the full field path in its error
 * ("respondents[2].items[0].year: expected an integer but received \"1999\"").
 */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

/** The error for a value of the wrong kind at `path`: "expected <expected> but received <value described>". */
export function mismatch(at: JsonlLocation, path: string, expected: string, value: unknown) {
  const received = describe(value);
  return dataError(at, `expected ${expected} but received ${received}`, path, { expected, received });
}

/** A plain object, or a data error naming `path` ("record" for the top level). */
export function objectAt(value: unknown, at: JsonlLocation, path: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw mismatch(at, path, 'an object', value);
  return value as Record<string, unknown>;
}

/** The path of `key` inside `path` ("record" is the top level: its keys stand alone). */
export function join(path: string, key: string): string {
  return path === 'record' ? key : `${path}.${key}`;
}

/** The value of a required key; `expected` names what it should hold, for the error when it is missing. */
export function required(record: Record<string, unknown>, key: string, at: JsonlLocation, path = 'record', expected = 'a value'): unknown {
  if (!(key in record) || record[key] === undefined) {
    throw dataError(at, `missing (expected ${expected})`, join(path, key), { expected, received: 'nothing' });
  }
  return record[key];
}

/** A required string field. */
export function stringAt(record: Record<string, unknown>, key: string, at: JsonlLocation, path = 'record'): string {
  const value = required(record, key, at, path, 'a string');
  if (typeof value !== 'string') throw mismatch(at, join(path, key), 'a string', value);
  return value;
}

/** A required integer field. */
export function integerAt(record: Record<string, unknown>, key: string, at: JsonlLocation, path = 'record'): number {
  const value = required(record, key, at, path, 'an integer');
  if (typeof value !== 'number' || !Number.isInteger(value)) throw mismatch(at, join(path, key), 'an integer', value);
  return value;
}

/** A required finite number ≥ 0. */
export function countAt(record: Record<string, unknown>, key: string, at: JsonlLocation, path = 'record'): number {
  const value = required(record, key, at, path, 'a finite number ≥ 0');
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw mismatch(at, join(path, key), 'a finite number ≥ 0', value);
  return value;
}

/** A required array field, each element read by `item` with its indexed path. */
export function arrayAt<T>(
  record: Record<string, unknown>,
  key: string,
  at: JsonlLocation,
  item: (value: unknown, path: string) => T,
  options: { path?: string; nonEmpty?: boolean } = {},
): T[] {
  const path = join(options.path ?? 'record', key);
  const value = required(record, key, at, options.path, 'an array');
  if (!Array.isArray(value)) throw mismatch(at, path, 'an array', value);
  if (options.nonEmpty && value.length === 0) throw dataError(at, 'expected at least one element but received an empty array', path, { expected: 'at least one element', received: 'an empty array' });
  return value.map((element, i) => item(element, `${path}[${i}]`));
}

/** A string element of an array (`path` already indexed). */
export function stringElement(value: unknown, at: JsonlLocation, path: string): string {
  if (typeof value !== 'string') throw mismatch(at, path, 'a string', value);
  return value;
}

/** An optional field: absent (or undefined) → undefined, else read by `read`. */
export function optional<T>(record: Record<string, unknown>, key: string, read: (record: Record<string, unknown>, key: string) => T): T | undefined {
  return record[key] === undefined ? undefined : read(record, key);
}
