/**
 * JSONL records with line-numbered errors, for the math loaders. Stand-in until the shared streaming
 * reader lib/data/jsonl.ts lands; math.ts only uses `jsonlObjects` and `stringField`.
 */
import { GrpoError } from '../errors.js';

/** One parsed line: the record and its 1-based line number. */
export interface NumberedRecord {
  readonly line: number;
  readonly record: Readonly<Record<string, unknown>>;
}

/** Parses JSONL text (blank lines skipped); throws GRPO_DATA_FORMAT naming `source:line`. */
export function jsonlObjects(text: string, source: string): NumberedRecord[] {
  if (typeof text !== 'string') throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected JSONL text for ${source} but received ${typeof text}`);
  const records: NumberedRecord[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const body = lines[i].trim();
    if (body === '') continue;
    let record: unknown;
    try {
      record = JSON.parse(body);
    } catch (error) {
      throw new GrpoError('GRPO_DATA_FORMAT', `${source}:${i + 1}: invalid JSON (${(error as Error).message})`, { cause: error });
    }
    if (record === null || typeof record !== 'object' || Array.isArray(record)) {
      throw new GrpoError('GRPO_DATA_FORMAT', `${source}:${i + 1}: expected a JSON object but received ${Array.isArray(record) ? 'an array' : typeof record}`);
    }
    records.push({ line: i + 1, record: record as Record<string, unknown> });
  }
  return records;
}

/** The string field `name` of a record (numbers are turned into strings), or a GRPO_DATA_FORMAT error. */
export function stringField(entry: NumberedRecord, name: string, source: string, optional = false): string | undefined {
  const value = entry.record[name];
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (value === undefined && optional) return undefined;
  throw new GrpoError('GRPO_DATA_FORMAT', `${source}:${entry.line}: expected field "${name}" to be a string but received ${value === undefined ? 'nothing' : typeof value}`);
}
