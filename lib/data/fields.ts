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

/** A plain object, or a data error naming `path` ("record" for the top level). */
export function objectAt(value: unknown, at: JsonlLocation, path: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw dataError(at, `expected an object but received ${describe(value)}`, path);
  }
  return value as Record<string, unknown>;
}

function join(path: string, key: string): string {
  return path === 'record' ? key : `${path}.${key}`;
}

/** The value of a required key. */
export function required(record: Record<string, unknown>, key: string, at: JsonlLocation, path = 'record'): unknown {
  if (!(key in record) || record[key] === undefined) throw dataError(at, 'missing', join(path, key));
  return record[key];
}

/** A required string field. */
export function stringAt(record: Record<string, unknown>, key: string, at: JsonlLocation, path = 'record'): string {
  const value = required(record, key, at, path);
  if (typeof value !== 'string') throw dataError(at, `expected a string but received ${describe(value)}`, join(path, key));
  return value;
}

/** A required integer field. */
export function integerAt(record: Record<string, unknown>, key: string, at: JsonlLocation, path = 'record'): number {
  const value = required(record, key, at, path);
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw dataError(at, `expected an integer but received ${describe(value)}`, join(path, key));
  }
  return value;
}

/** A required finite number ≥ 0. */
export function countAt(record: Record<string, unknown>, key: string, at: JsonlLocation, path = 'record'): number {
  const value = required(record, key, at, path);
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw dataError(at, `expected a finite number ≥ 0 but received ${describe(value)}`, join(path, key));
  }
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
  const value = required(record, key, at, options.path);
  if (!Array.isArray(value)) throw dataError(at, `expected an array but received ${describe(value)}`, path);
  if (options.nonEmpty && value.length === 0) throw dataError(at, 'expected at least one element but received an empty array', path);
  return value.map((element, i) => item(element, `${path}[${i}]`));
}

/** A string element of an array (`path` already indexed). */
export function stringElement(value: unknown, at: JsonlLocation, path: string): string {
  if (typeof value !== 'string') throw dataError(at, `expected a string but received ${describe(value)}`, path);
  return value;
}
