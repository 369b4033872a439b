// What `grpo demo` and `grpo reproduce` share: both embedded studies at one scale into <out>/recommend and
// <out>/ccr, then summary.json (docs/summary-json.md) and summary.md at <out>, and the summary printed.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Device } from '../binding/index.js';
import { GrpoError } from '../errors.js';
import { getThreads } from '../runtime.js';
import { runCcrStudy } from '../studies/ccr-study.js';
import { runRecommendStudy } from '../studies/recommend-study.js';
import type { StudyContext, StudyResult, StudyScale } from '../studies/study.js';
import { writeSummary, type CcrSummaryFields } from '../studies/summary.js';
import type { ConfigInput } from '../trainer/config.js';
import type { ParsedArgs } from './args.js';
import type { Reporter } from './progress.js';

export interface StudiesRun {
  out: string;
  scale: StudyScale;
  seeds: number[];
  device: Device;
  overrides: ConfigInput;
  /** the command line, recorded in summary.json */
  command: string;
  /** the studies to run (default both); the others are read from their saved part.json under `out` */
  studies?: readonly StudyName[];
}

/** `--seeds 0,1,2` → [0, 1, 2]: distinct non-negative integers. */
export function seedsFlag(args: ParsedArgs, fallback: readonly number[]): number[] {
  const text = args.flags.get('seeds');
  if (text === undefined) return [...fallback];
  const seeds = text.split(',').map((part) => Number(part.trim()));
  if (seeds.length === 0 || seeds.some((s) => !Number.isInteger(s) || s < 0) || new Set(seeds).size !== seeds.length) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Flag --seeds: expected distinct non-negative integers separated by commas (e.g. 0,1,2) but received "${text}"`);
  }
  return seeds;
}

/** The embedded studies, in the order they run. */
export const STUDY_NAMES = ['recommend', 'ccr'] as const;
export type StudyName = (typeof STUDY_NAMES)[number];

/** `--studies recommend,ccr` → the studies to run now (default both); the others' saved parts are reused. */
export function studiesFlag(args: ParsedArgs): StudyName[] {
  const text = args.flags.get('studies');
  if (text === undefined) return [...STUDY_NAMES];
  const names = text.split(',').map((part) => part.trim());
  const unknown = names.find((n) => !(STUDY_NAMES as readonly string[]).includes(n));
  if (names.length === 0 || unknown !== undefined || new Set(names).size !== names.length) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Flag --studies: expected distinct names from ${STUDY_NAMES.join(', ')} separated by commas but received "${text}"`);
  }
  return names as StudyName[];
}

/** One study's part of the output, saved as <out>/<study>/part.json so a later run can reuse it. */
interface StudyPart extends StudyResult<unknown> {
  command: string;
  scale: StudyScale;
  seeds: number[];
  minutes: number;
  cpuSeconds: number;
}

const partPath = (out: string, name: StudyName) => join(out, name, 'part.json');

/** Runs one study into <out>/<name> (its previous output there replaced) and saves its part. */
async function runPart(name: StudyName, run: StudiesRun, context: StudyContext): Promise<StudyPart> {
  const started = performance.now();
  const before = process.cpuUsage();
  const result: StudyResult<unknown> = name === 'recommend' ? await runRecommendStudy(context) : await runCcrStudy(context);
  const used = process.cpuUsage(before);
  const part: StudyPart = {
    ...result, command: run.command, scale: run.scale, seeds: run.seeds,
    minutes: (performance.now() - started) / 60000, cpuSeconds: (used.user + used.system) / 1e6,
  };
  await writeFile(partPath(run.out, name), `${JSON.stringify(part, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`);
  return part;
}

/** The saved part of a study this run does not repeat (undefined: none yet); it must match the run's scale and seeds. */
async function savedPart(name: StudyName, run: StudiesRun): Promise<StudyPart | undefined> {
  const path = partPath(run.out, name);
  const text = await readFile(path, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const part = JSON.parse(text) as StudyPart;
  if (part.scale !== run.scale || part.seeds.join(',') !== run.seeds.join(',')) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Flag --studies leaves out "${name}", but its saved result in ${path} is of scale ${part.scale}, seeds ${part.seeds.join(',')}; this run is scale ${run.scale}, seeds ${run.seeds.join(',')}`);
  }
  return part;
}

/**
 * Runs the studies named in `run.studies` (default both) and writes the summaries once every study has a result
 * in `out`: a study left out keeps its output from an earlier run into the same `out` (its saved part.json), so
 * the halves of a long run can run apart, or one half be redone.
 */
export async function runStudies(reporter: Reporter, run: StudiesRun): Promise<void> {
  const chosen = run.studies ?? STUDY_NAMES;
  const parts: Partial<Record<StudyName, StudyPart>> = {};
  for (const name of STUDY_NAMES.filter((n) => !chosen.includes(n))) parts[name] = await savedPart(name, run); // before anything is replaced
  for (const part of ['summary.md', 'summary.json', ...chosen]) await rm(join(run.out, part), { recursive: true, force: true });
  for (const name of chosen) {
    await mkdir(join(run.out, name), { recursive: true });
    parts[name] = await runPart(name, run, { reporter, out: join(run.out, name), device: run.device, scale: run.scale, seeds: run.seeds, overrides: run.overrides });
  }
  const { recommend, ccr } = parts;
  if (!recommend || !ccr) {
    const missing = recommend ? 'ccr' : 'recommend';
    reporter.line(`\n${run.out} holds no result of the ${missing} study yet: summary.json and summary.md are written once it has one (--studies ${missing}).`);
    return;
  }
  await writeSummaries(reporter, run, recommend, ccr);
}

/** summary.json and summary.md from both studies' parts, and the summary printed. */
async function writeSummaries(reporter: Reporter, run: StudiesRun, recommend: StudyPart, ccr: StudyPart): Promise<void> {
  const minutes = recommend.minutes + ccr.minutes;
  const commands = recommend.command === ccr.command ? recommend.command : `${recommend.command} (recommendation), ${ccr.command} (ccr)`;
  await writeSummary(run.out, {
    version: 1, command: commands, scale: run.scale, seeds: run.seeds, minutes, threads: getThreads(),
    studyMinutes: { recommend: recommend.minutes, ccr: ccr.minutes },
    cpuSeconds: { recommend: recommend.cpuSeconds, ccr: ccr.cpuSeconds }, recommend: recommend.summary, ccr: ccr.summary as CcrSummaryFields, // as runCcrStudy returns it (a saved one: as it wrote it)
  });
  const cpu = `CPU seconds: recommendation ${recommend.cpuSeconds.toFixed(0)}, ccr ${ccr.cpuSeconds.toFixed(0)}`;
  const text = [`## ${commands}: summary (${minutes.toFixed(1)} min, ${getThreads()} threads, seeds ${run.seeds.join(', ')}; ${cpu})`, '',
    recommend.markdown, ccr.markdown, `Reports: ${recommend.reportPath}, ${ccr.reportPath}; machine-readable: ${join(run.out, 'summary.json')}`].join('\n');
  await writeFile(join(run.out, 'summary.md'), `${text}\n`);
  reporter.line(`\n${text}\n`);
}
