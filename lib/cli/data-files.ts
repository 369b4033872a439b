// The file commands of `grpo data`: validate a data file of a record kind, convert a public dataset's file.
import { statSync } from 'node:fs';
import { CONVERTERS, convertFile, type SourceFormat } from '../data/convert-file.js';
import type { DataFault } from '../data/jsonl.js';
import type { Distribution } from '../data/movies-multi-stats.js';
import { RECORD_KINDS, type RecordKind } from '../data/schemas.js';
import { validateFile, type ValidationSummary } from '../data/validate-file.js';
import type { StatValue } from '../data/validate-stats.js';
import { GrpoError } from '../errors.js';
import type { Reporter } from './progress.js';

/** A flag value that must be one of `choices`. */
function choiceFlag<T extends string>(flag: string, value: string | undefined, choices: readonly T[]): T {
  if (value !== undefined && (choices as readonly string[]).includes(value)) return value as T;
  throw new GrpoError('GRPO_INVALID_ARGUMENT', `--${flag}: expected one of ${choices.join(', ')} but received ${value === undefined ? 'nothing' : `"${value}"`}`);
}

export const SOURCE_FORMATS = Object.keys(CONVERTERS) as SourceFormat[];

interface BytesProgress {
  at(bytes: number, status?: string): void;
  done(summary: string): void;
}

/**
 * A phase over the bytes of `file`, in KiB (its size is known, its line count is not). None for a file that
 * cannot be read: the reader then fails with what the file should hold, and no bar is left half drawn.
 */
function bytesPhase(reporter: Reporter, name: string, file: string): BytesProgress {
  let kib: number;
  try {
    kib = Math.max(1, Math.ceil(statSync(file).size / 1024));
  } catch {
    return { at: () => undefined, done: () => undefined };
  }
  const phase = reporter.phase(name, kib, 'KiB');
  return { at: (bytes, status) => phase.update(Math.min(Math.ceil(bytes / 1024), kib), status), done: (summary) => phase.done(summary) };
}

/** "respondentsPerRequest" → "respondents per request" */
const label = (key: string) => key.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);

function formatStat(value: StatValue): string {
  if (typeof value === 'number') return String(value);
  if ('median' in value && 'mean' in value) {
    const d = value as Distribution;
    return `min ${d.min}, median ${d.median}, mean ${d.mean.toFixed(2)}, max ${d.max}`;
  }
  const counts = Object.entries(value as Record<string, number>);
  return counts.length === 0 ? '—' : counts.map(([name, count]) => `${name} ${count}`).join(', ');
}

/** The summary lines of a validation. */
export function formatValidation(summary: ValidationSummary): string[] {
  const { file, schema, records, badLines, blankLines, lines, stats } = summary;
  return [
    `${file}: ${schema}, ${records} good records, ${badLines} bad lines, ${blankLines} blank lines (${lines} lines)`,
    ...Object.entries(stats).map(([key, value]) => `  ${label(key)}: ${formatStat(value)}`),
  ];
}

/** `grpo data validate <file> --kind …`: every bad line, then the summary; a GRPO_DATA_FORMAT error (exit code 2) when a line is bad. */
export async function runValidate(file: string, kindFlag: string | undefined, json: boolean, reporter: Reporter): Promise<void> {
  const kind = choiceFlag<RecordKind>('kind', kindFlag, RECORD_KINDS);
  const progress = bytesPhase(reporter, `validate ${kind}`, file);
  let bad = 0;
  const onBad = (fault: DataFault) => {
    bad++;
    reporter.line(fault.message);
  };
  const summary = await validateFile(file, kind, { onBad, onProgress: (bytes, lines) => progress.at(bytes, `${lines} lines, ${bad} bad`) });
  progress.done(`${summary.records} good records, ${summary.badLines} bad lines`);
  for (const line of json ? [JSON.stringify(summary, null, 2)] : formatValidation(summary)) reporter.line(line);
  if (summary.badLines > 0) {
    throw new GrpoError('GRPO_DATA_FORMAT', `${summary.badLines} of ${summary.lines} lines of ${file} are not valid ${summary.schema} records (listed above)`);
  }
}

/** `grpo data convert <file> --from … --out …` (and the older `grpo data redial|protoqa <file> --out …`). */
export async function runConvert(input: string, fromFlag: string | undefined, out: string, reporter: Reporter): Promise<void> {
  const from = choiceFlag<SourceFormat>('from', fromFlag, SOURCE_FORMATS);
  const progress = bytesPhase(reporter, `convert ${from}`, input);
  const summary = await convertFile(input, out, from, (bytes) => progress.at(bytes));
  const dropped = summary.dropped > 0 ? `, ${summary.dropped} dropped (nothing to convert)` : '';
  progress.done(`${summary.written} records`);
  reporter.line(`${summary.written} ${summary.kind} records written from ${summary.read} ${from} records${dropped}`);
  reporter.line(`Wrote ${out}`);
}
