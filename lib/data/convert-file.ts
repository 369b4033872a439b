// `grpo data convert`: a public dataset's JSONL → the record schema of its kind, a line at a time.
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { PROTOQA_FILE, protoqaToQa, REDIAL_FILE, redialToRequest } from './convert.js';
import { parseJsonlLine, readLines, type RecordParser } from './jsonl.js';
import { GSM8K_FILE, MATH_FILE } from './math.js';
import { deepmathToMath, gsm8kToMath, mathToMath, parseMathRecord } from './math-record.js';
import { parseCatalogEntry, parseQaRecord, parseRecommendRecord, SCHEMA_VERSIONS, type RecordKind } from './schemas.js';

interface Converter {
  /** The kind of record written. */
  kind: RecordKind;
  /** One source line → its record, or null when the line has nothing to convert (it is counted as dropped). */
  convert: RecordParser<object | null>;
  /** What a source file holds, for the error when it cannot be read. */
  expected: string;
}

/** The source formats `grpo data convert --from` reads. */
export const CONVERTERS = Object.freeze({
  gsm8k: { kind: 'math', convert: gsm8kToMath, expected: GSM8K_FILE },
  math: { kind: 'math', convert: mathToMath, expected: MATH_FILE },
  deepmath: { kind: 'math', convert: deepmathToMath, expected: 'DeepMath-style JSONL: one {"question", "final_answer"} record a line' },
  redial: { kind: 'recommend', convert: redialToRequest, expected: REDIAL_FILE },
  protoqa: { kind: 'qa', convert: protoqaToQa, expected: PROTOQA_FILE },
} satisfies Record<string, Converter>);

export type SourceFormat = keyof typeof CONVERTERS;

/** The checks of the written records: the parser of their kind, so a converter cannot write a record that `validate` refuses. */
const TARGETS: Record<RecordKind, RecordParser<unknown>> = { recommend: parseRecommendRecord, catalog: parseCatalogEntry, qa: parseQaRecord, math: parseMathRecord };

/** What a conversion did. */
export interface ConvertSummary {
  from: SourceFormat;
  kind: RecordKind;
  /** Source records read (blank lines not counted). */
  read: number;
  written: number;
  /** Source records with nothing to convert (a ReDial dialogue that recommends no film with a year). */
  dropped: number;
}

/**
 * Converts the JSONL file `input` of format `from` into `out` (folders made as needed), one line in memory at a
 * time; each written line starts with its `schema`. The first bad source line stops the conversion with a
 * `GRPO_DATA_FORMAT` error naming it, and `out` is left as it was (the records go to `out.partial`, renamed at the end).
 */
export async function convertFile(input: string, out: string, from: SourceFormat, onProgress?: (bytesRead: number) => void): Promise<ConvertSummary> {
  const { kind, convert, expected } = CONVERTERS[from] as Converter;
  const summary: ConvertSummary = { from, kind, read: 0, written: 0, dropped: 0 };
  async function* convertedLines() {
    for await (const { text, line, bytesRead } of readLines(input, expected)) {
      if (text.trim() === '') continue;
      if (++summary.read % 256 === 0) onProgress?.(bytesRead);
      const record = parseJsonlLine(text, { source: input, line }, convert);
      if (record === null) {
        summary.dropped++;
        continue;
      }
      const written = { schema: SCHEMA_VERSIONS[kind], ...record };
      TARGETS[kind](written, { source: `${input} (converted)`, line });
      summary.written++;
      yield `${JSON.stringify(written)}\n`;
    }
  }
  const partial = `${out}.partial`;
  await mkdir(dirname(out), { recursive: true });
  try {
    await pipeline(convertedLines, createWriteStream(partial)); // backpressure, and the file closed on any error
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  await rename(partial, out);
  return summary;
}
