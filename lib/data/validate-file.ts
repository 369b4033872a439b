// `grpo data validate`: reads a data file a line at a time, reports every bad line (with its field, what was
// expected and what was received) and summarises the good records.
import { GrpoError } from '../errors.js';
import { DataFormatError, parseJsonlLine, readLines, type DataFault, type RecordParser } from './jsonl.js';
import { parseMathRecord } from './math-record.js';
import { parseCatalogEntry, parseQaRecord, parseRecommendRecord, SCHEMA_VERSIONS, type RecordKind } from './schemas.js';
import { catalogStats, mathStats, qaStats, recommendStats, type StatsCollector, type StatValue } from './validate-stats.js';

interface KindSpec<T> {
  parse: RecordParser<T>;
  stats: () => StatsCollector<T>;
  /** Whether records carry an `id` that must be unique in the file. */
  ids: boolean;
  /** What the file holds, for the error when it cannot be read. */
  expected: string;
}

const KINDS: { [K in RecordKind]: KindSpec<unknown> } = {
  recommend: { parse: parseRecommendRecord, stats: recommendStats, ids: true, expected: 'recommend/1 JSONL: one request with its respondents a line' },
  catalog: { parse: parseCatalogEntry, stats: catalogStats, ids: false, expected: 'catalog/1 JSONL: one { title, year or creator } a line' },
  qa: { parse: parseQaRecord, stats: qaStats, ids: true, expected: 'qa/1 JSONL: one question with its answer clusters a line' },
  math: { parse: parseMathRecord, stats: mathStats, ids: true, expected: 'math/1 JSONL: one { id, problem, answer } a line' },
};

/** What a validation found: line counts and the statistics of the good records. */
export interface ValidationSummary {
  file: string;
  kind: RecordKind;
  schema: string;
  lines: number;
  blankLines: number;
  /** good records */
  records: number;
  badLines: number;
  stats: Record<string, StatValue>;
}

export interface ValidateOptions {
  /** Called once for each bad line, in file order (the first fault of that line). */
  onBad?: (fault: DataFault) => void;
  /** Called every few hundred lines and at the end: bytes of the file read so far, lines so far. */
  onProgress?: (bytesRead: number, lines: number) => void;
}

const PROGRESS_EVERY = 256;

/** The fault of a line that failed to parse; errors that are not data errors pass through. */
function faultOf(error: unknown): DataFault {
  if (error instanceof DataFormatError) return error.fault;
  throw error;
}

/** Checks that an id was not used by an earlier line of the file. */
function checkUnique(id: string, line: number, firstLine: Map<string, number>, source: string): DataFault | undefined {
  const first = firstLine.get(id);
  if (first === undefined) {
    firstLine.set(id, line);
    return undefined;
  }
  const received = JSON.stringify(id);
  return { source, line, field: 'id', expected: 'an id not used by another line', received, message: `${source}:${line}: field "id": expected an id not used by another line but received ${received} (line ${first} has it)` };
}

/**
 * Validates a JSONL file of `kind` line by line (one line in memory at a time): every bad line is reported to
 * `onBad`, blank lines are counted and skipped, ids must be unique, and the good records are summarised.
 */
export async function validateFile(path: string, kind: RecordKind, options: ValidateOptions = {}): Promise<ValidationSummary> {
  const spec = KINDS[kind];
  if (!spec) throw new GrpoError('GRPO_INVALID_ARGUMENT', `Expected a record kind (${Object.keys(KINDS).join(', ')}) but received ${JSON.stringify(kind)}`);
  const stats = spec.stats(), ids = new Map<string, number>();
  const summary: ValidationSummary = { file: path, kind, schema: SCHEMA_VERSIONS[kind], lines: 0, blankLines: 0, records: 0, badLines: 0, stats: {} };
  let bytes = 0;
  for await (const { text, line, bytesRead } of readLines(path, spec.expected)) {
    summary.lines = line;
    bytes = bytesRead;
    if (line % PROGRESS_EVERY === 0) options.onProgress?.(bytesRead, line);
    if (text.trim() === '') {
      summary.blankLines++;
      continue;
    }
    let fault: DataFault | undefined;
    try {
      const record = parseJsonlLine(text, { source: path, line }, spec.parse);
      fault = spec.ids ? checkUnique((record as { id: string }).id, line, ids, path) : undefined;
      if (!fault) stats.add(record);
    } catch (error) {
      fault = faultOf(error);
    }
    if (fault) {
      summary.badLines++;
      options.onBad?.(fault);
    } else summary.records++;
  }
  options.onProgress?.(bytes, summary.lines);
  return { ...summary, stats: stats.summary() };
}
