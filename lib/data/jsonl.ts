import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { GrpoError } from '../errors.js';
import { readUserTextSync, unreadable } from '../user-files.js';

/** What a JSONL file holds, for the error when it cannot be read (callers name their own records). */
const JSONL_FILE = 'a JSONL file: one JSON record a line';

/** Where a record came from: file (or label) and 1-based line number. */
export interface JsonlLocation {
  source: string;
  line: number;
}

/**
 * Turns one parsed JSON value into a typed record, or throws (ideally with {@link dataError}).
 * Errors that are not GrpoErrors are wrapped with the location.
 */
export type RecordParser<T> = (value: unknown, at: JsonlLocation) => T;

/** A `GRPO_DATA_FORMAT` error that names the file, the line and (optionally) the field. */
export function dataError(at: JsonlLocation, message: string, field?: string): GrpoError {
  const where = field === undefined ? '' : `field "${field}": `;
  return new GrpoError('GRPO_DATA_FORMAT', `${at.source}:${at.line}: ${where}${message}`);
}

function parseLine<T>(text: string, at: JsonlLocation, parseRecord: RecordParser<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw dataError(at, `invalid JSON (${(error as Error).message})`);
  }
  try {
    return parseRecord(value, at);
  } catch (error) {
    if (error instanceof GrpoError) throw error;
    throw new GrpoError('GRPO_DATA_FORMAT', `${at.source}:${at.line}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Streams a JSONL file record by record (one line in memory at a time, so a 1 GB file does not need
 * 1 GB of heap). Blank lines are skipped; any other line must be JSON that `parseRecord` accepts,
 * else a `GRPO_DATA_FORMAT` error names the file and line.
 */
export async function* readJsonl<T>(path: string, parseRecord: RecordParser<T>, expected = JSONL_FILE): AsyncGenerator<T> {
  const file = await open(path, 'r').catch((error: unknown) => {
    throw unreadable(path, expected, error);
  });
  const input = file.createReadStream({ encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of lines) {
      line++;
      if (text.trim() !== '') yield parseLine(text, { source: path, line }, parseRecord);
    }
  } finally {
    lines.close();
    input.destroy(); // a consumer that stops early must not leave the file open
  }
}

/** Parses JSONL text held in memory; `source` labels errors. */
export function parseJsonl<T>(text: string, parseRecord: RecordParser<T>, source = '<jsonl>'): T[] {
  const records: T[] = [];
  text.split('\n').forEach((raw, i) => {
    const lineText = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (lineText.trim() !== '') records.push(parseLine(lineText, { source, line: i + 1 }, parseRecord));
  });
  return records;
}

/** Reads a small JSONL file at once (see {@link readJsonl} for large files); `expected` describes it in errors. */
export function readJsonlSync<T>(path: string, parseRecord: RecordParser<T>, expected = JSONL_FILE): T[] {
  return parseJsonl(readUserTextSync(path, expected), parseRecord, path);
}
