// What `grpo demo` and `grpo reproduce` share: both embedded studies at one scale into <out>/recommend and
// <out>/ccr, then summary.json (docs/summary-json.md) and summary.md at <out>, and the summary printed.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Device } from '../binding/index.js';
import { GrpoError } from '../errors.js';
import { getThreads } from '../runtime.js';
// TEMPORARY: d-ccr's lib/studies/ccr-study.ts replaces this import at merge (same export).
import { runCcrStudy } from '../studies/ccr-study.js';
import { runRecommendStudy } from '../studies/recommend-study.js';
import type { StudyContext, StudyScale } from '../studies/study.js';
import { writeSummary } from '../studies/summary.js';
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

/** A study's result with the CPU seconds it took (process.cpuUsage: user + system of every thread). */
async function timed<T>(study: () => Promise<T>): Promise<T & { cpuSeconds: number }> {
  const before = process.cpuUsage();
  const result = await study();
  const used = process.cpuUsage(before);
  return { ...result, cpuSeconds: (used.user + used.system) / 1e6 };
}

/** Runs both studies and writes the summaries; the previous output of the studies in `out` is replaced. */
export async function runStudies(reporter: Reporter, run: StudiesRun): Promise<void> {
  const started = performance.now();
  for (const part of ['recommend', 'ccr', 'summary.md', 'summary.json']) await rm(join(run.out, part), { recursive: true, force: true });
  const context = async (name: string): Promise<StudyContext> => {
    await mkdir(join(run.out, name), { recursive: true });
    return { reporter, out: join(run.out, name), device: run.device, scale: run.scale, seeds: run.seeds, overrides: run.overrides };
  };
  const recommend = await timed(async () => runRecommendStudy(await context('recommend')));
  const ccr = await timed(async () => runCcrStudy(await context('ccr')));
  const minutes = (performance.now() - started) / 60000;
  await writeSummary(run.out, {
    version: 1, command: run.command, scale: run.scale, seeds: run.seeds, minutes, threads: getThreads(),
    cpuSeconds: { recommend: recommend.cpuSeconds, ccr: ccr.cpuSeconds }, recommend: recommend.summary, ccr: ccr.summary,
  });
  const cpu = `CPU seconds: recommendation ${recommend.cpuSeconds.toFixed(0)}, ccr ${ccr.cpuSeconds.toFixed(0)}`;
  const text = [`## ${run.command}: summary (${minutes.toFixed(1)} min, ${getThreads()} threads, seeds ${run.seeds.join(', ')}; ${cpu})`, '',
    recommend.markdown, ccr.markdown, `Reports: ${recommend.reportPath}, ${ccr.reportPath}; machine-readable: ${join(run.out, 'summary.json')}`].join('\n');
  await writeFile(join(run.out, 'summary.md'), `${text}\n`);
  reporter.line(`\n${text}\n`);
}
