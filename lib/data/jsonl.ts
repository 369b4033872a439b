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

/** What is wrong with one line: where, which field, and (for a value of the wrong kind) what was expected and received. */
export interface DataFault extends JsonlLocation {
  field?: string;
  expected?: string;
  received?: string;
  /** The whole message, as the error's (`file:line: field "x": expected … but received …`). */
  message: string;
}

/** A `GRPO_DATA_FORMAT` error carrying its {@link DataFault} (for reports that list every bad line). */
export class DataFormatError extends GrpoError {
  readonly fault: DataFault;

  constructor(fault: DataFault, options?: { cause?: unknown }) {
    super('GRPO_DATA_FORMAT', fault.message, options);
    this.fault = fault;
  }
}

/** A `GRPO_DATA_FORMAT` error that names the file, the line and (optionally) the field, expected and received. */
export function dataError(at: JsonlLocation, message: string, field?: string, detail: { expected?: string; received?: string } = {}): DataFormatError {
  const where = field === undefined ? '' : `field "${field}": `;
  return new DataFormatError({ source: at.source, line: at.line, field, ...detail, message: `${at.source}:${at.line}: ${where}${message}` });
}

/** A BOM at the start of a file (Windows editors write one) is not part of the first record. */
const stripBom = (text: string, line: number) => (line === 1 && text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

/** JSON.parse's message, cut so that a very long line does not flood the report. */
function jsonFault(error: unknown): string {
  const message = (error as Error).message;
  return message.length > 200 ? `${message.slice(0, 200)}…` : message;
}

/** One line of JSONL text → its typed record; every fault is a {@link DataFormatError} located at `at`. */
export function parseJsonlLine<T>(text: string, at: JsonlLocation, parseRecord: RecordParser<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw dataError(at, `invalid JSON (${jsonFault(error)})`, undefined, { expected: 'a JSON value', received: 'text that is not JSON' });
  }
  try {
    return parseRecord(value, at);
  } catch (error) {
    if (error instanceof GrpoError) throw error;
    throw new DataFormatError({ source: at.source, line: at.line, message: `${at.source}:${at.line}: ${(error as Error).message}` }, { cause: error });
  }
}

/** One line of a file: its text (a leading BOM removed), number and how many bytes of the file have been read so far. */
export interface JsonlLine {
  text: string;
  line: number;
  bytesRead: number;
}

/**
 * Streams the lines of a file (one line in memory at a time, so a 1 GB file does not need 1 GB of heap);
 * `\n` and `\r\n` both end a line. Blank lines are yielded too (the caller decides what they mean).
 */
export async function* readLines(path: string, expected = JSONL_FILE): AsyncGenerator<JsonlLine> {
  const file = await open(path, 'r').catch((error: unknown) => {
    throw unreadable(path, expected, error);
  });
  const input = file.createReadStream({ encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of lines) {
      line++;
      yield { text: stripBom(text, line), line, bytesRead: input.bytesRead };
    }
  } finally {
    lines.close();
    input.destroy(); // a consumer that stops early must not leave the file open
  }
}

/**
 * Streams a JSONL file record by record (see {@link readLines}). Blank lines are skipped; any other line
 * must be JSON that `parseRecord` accepts, else a `GRPO_DATA_FORMAT` error names the file and line.
 */
export async function* readJsonl<T>(path: string, parseRecord: RecordParser<T>, expected = JSONL_FILE): AsyncGenerator<T> {
  for await (const { text, line } of readLines(path, expected)) {
    if (text.trim() !== '') yield parseJsonlLine(text, { source: path, line }, parseRecord);
  }
}

/** Parses JSONL text held in memory; `source` labels errors. */
export function parseJsonl<T>(text: string, parseRecord: RecordParser<T>, source = '<jsonl>'): T[] {
  const records: T[] = [];
  text.split('\n').forEach((raw, i) => {
    const lineText = stripBom(raw.endsWith('\r') ? raw.slice(0, -1) : raw, i + 1);
    if (lineText.trim() !== '') records.push(parseJsonlLine(lineText, { source, line: i + 1 }, parseRecord));
  });
  return records;
}

/** Reads a small JSONL file at once (see {@link readJsonl} for large files); `expected` describes it in errors. */
export function readJsonlSync<T>(path: string, parseRecord: RecordParser<T>, expected = JSONL_FILE): T[] {
  return parseJsonl(readUserTextSync(path, expected), parseRecord, path);
}
