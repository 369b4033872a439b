// A run directory: the resolved config, metrics.jsonl, validation.jsonl, atomic checkpoints (policy +
// trainer state, written to a temporary folder and renamed), the best checkpoint (one folder swapped
// in by one rename), and the final evaluation. A crash at any point leaves the last good checkpoint,
// `latest.json` and the last complete best intact.
import { existsSync } from 'node:fs';
import { appendFile, lstat, mkdir, readdir, readFile, readlink, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { GrpoError } from '../errors.js';
import type { Policy } from '../policy/policy.js';
import { mergeConfig, TRAINER_DEFAULTS, type TrainerConfig } from './config.js';
import type { StopReason, ValidationState } from './validation.js';

/** Everything besides the policy that a resumed run needs to continue exactly. */
export interface TrainerState {
  version: 1;
  /** Steps completed. */
  step: number;
  /** Training seconds so far. */
  elapsed: number;
  /** Prompt + completion tokens so far (TRL `num_tokens`; absent in checkpoints written before it was logged). */
  numTokens?: number;
  validation: ValidationState;
  stopReason: StopReason | null;
  /** The sampler is a pure function of (unit, seed, batch size, position): the data cursor. */
  sampler: { unit: string; seed: number; batchSize: number; position: number };
  /** Generation draws are keyed by (seed, step): the counter-based RNG state. */
  rng: { seed: number; counter: number };
}

export const RUN_FILES = Object.freeze({
  config: 'config.json',
  metrics: 'metrics.jsonl',
  validation: 'validation.jsonl',
  latest: 'latest.json',
  checkpoints: 'checkpoints',
  best: 'best',
  bestVersions: 'best-versions',
  test: 'test.json',
  report: 'report',
});

/** Writes JSON to a temporary file and renames it into place. */
export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  const temp = `${path}.tmp-${process.pid}`;
  await writeFile(temp, `${JSON.stringify(value, null, 2)}\n`);
  await rename(temp, path);
}

export async function readJson<T>(path: string): Promise<T> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new GrpoError('GRPO_INVALID_ARGUMENT', `Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new GrpoError('GRPO_DATA_FORMAT', `${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}

/** Rows of a JSONL file ([] when it does not exist). */
export async function readJsonlRows<T>(path: string): Promise<T[]> {
  if (!existsSync(path)) return [];
  const text = await readFile(path, 'utf8');
  return text.split('\n').filter((line) => line.trim() !== '').map((line, i) => {
    try {
      return JSON.parse(line) as T;
    } catch (error) {
      throw new GrpoError('GRPO_DATA_FORMAT', `${path}:${i + 1} is not valid JSON`, { cause: error });
    }
  });
}

export class RunDir {
  constructor(readonly path: string) {}

  file(name: keyof typeof RUN_FILES): string {
    return join(this.path, RUN_FILES[name]);
  }

  /** Creates the folder and writes the resolved config (refuses to overwrite another run's). */
  async create(config: TrainerConfig): Promise<void> {
    if (existsSync(this.file('latest')) || existsSync(this.file('metrics'))) {
      throw new GrpoError('GRPO_INVALID_ARGUMENT', `${this.path} already holds a run; resume it (--resume) or choose another --out`);
    }
    await mkdir(this.path, { recursive: true });
    await writeJsonAtomic(this.file('config'), config);
  }

  /** The saved config over the trainer defaults: an option added since the run began keeps its default (the old behaviour). */
  async config(): Promise<TrainerConfig> {
    return mergeConfig(TRAINER_DEFAULTS, await readJson<TrainerConfig>(this.file('config')));
  }

  append(name: 'metrics' | 'validation', row: unknown): Promise<void> {
    return appendFile(this.file(name), `${JSON.stringify(row)}\n`);
  }

  /** Drops rows logged after `step` (a crash after the last checkpoint) so a resume does not log them twice. */
  async truncateAfter(name: 'metrics' | 'validation', step: number): Promise<void> {
    const rows = await readJsonlRows<{ step: number }>(this.file(name));
    const kept = rows.filter((r) => r.step <= step);
    if (kept.length === rows.length) return;
    const temp = `${this.file(name)}.tmp-${process.pid}`;
    await writeFile(temp, kept.map((r) => `${JSON.stringify(r)}\n`).join(''));
    await rename(temp, this.file(name));
  }

  /**
   * Saves policy and state as `checkpoints/step-N` (temporary folder, then rename), points
   * `latest.json` at it, and removes older checkpoints.
   */
  async checkpoint(policy: Policy, state: TrainerState): Promise<string> {
    const root = this.file('checkpoints');
    await mkdir(root, { recursive: true });
    const name = `step-${state.step}`;
    const temp = join(root, `.${name}.tmp-${process.pid}`);
    await rm(temp, { recursive: true, force: true });
    await mkdir(temp, { recursive: true });
    await policy.save(join(temp, 'policy'));
    await writeJsonAtomic(join(temp, 'trainer-state.json'), state);
    await rm(join(root, name), { recursive: true, force: true });
    await rename(temp, join(root, name));
    await writeJsonAtomic(this.file('latest'), { checkpoint: `${RUN_FILES.checkpoints}/${name}`, step: state.step });
    for (const entry of await readdir(root)) if (entry !== name) await rm(join(root, entry), { recursive: true, force: true });
    return join(root, name);
  }

  /** The latest checkpoint: its policy folder and trainer state, or null when none was written. */
  async latest(): Promise<{ policyDir: string; state: TrainerState } | null> {
    if (!existsSync(this.file('latest'))) return null;
    const { checkpoint } = await readJson<{ checkpoint: string }>(this.file('latest'));
    const dir = join(this.path, checkpoint);
    const state = await readJson<TrainerState>(join(dir, 'trainer-state.json'));
    if (state.version !== 1) throw new GrpoError('GRPO_UNSUPPORTED', `${dir}: trainer state version ${String(state.version)} is not supported`);
    return { policyDir: join(dir, 'policy'), state };
  }

  /**
   * Saves the best policy so far as one unit: `best-versions/<version>/` (policy/ + best.json) is
   * written under a temporary name and renamed, then the `best` link is moved to it by one rename.
   * The previous version stays until the next swap, so a reader that resolved `best` keeps a whole folder.
   */
  async saveBest(policy: Policy, step: number, value: number, metric: string): Promise<void> {
    const root = this.file('bestVersions');
    await mkdir(root, { recursive: true });
    // unique: a resumed run may save the same step again while `best` still points at the first save
    const version = `step-${step}-${process.pid}-${Date.now()}`;
    const temp = join(root, `.${version}.tmp`);
    await mkdir(temp);
    await policy.save(join(temp, 'policy'));
    await writeJsonAtomic(join(temp, 'best.json'), { step, metric, value } satisfies BestInfo);
    await rename(temp, join(root, version));
    const previous = await this.bestVersion();
    await swapLink(this.file('best'), join(RUN_FILES.bestVersions, version));
    for (const entry of await readdir(root)) {
      if (entry !== version && entry !== previous) await rm(join(root, entry), { recursive: true, force: true });
    }
  }

  /** The best checkpoint, read from one version (the link resolved once), or null before the first. */
  async best(): Promise<(BestInfo & { policyDir: string }) | null> {
    let dir: string;
    try {
      dir = await realpath(this.file('best'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    const info = await readJson<BestInfo>(join(dir, 'best.json'));
    return { ...info, policyDir: join(dir, 'policy') };
  }

  /** The version `best` points at; a `best/` folder of the earlier layout is moved into best-versions/ first. */
  private async bestVersion(): Promise<string | null> {
    const link = this.file('best');
    const stats = await lstat(link).catch(() => null);
    if (stats === null) return null;
    if (stats.isSymbolicLink()) return basename(await readlink(link));
    const version = `earlier-layout-${Date.now()}`;
    await rename(link, join(this.file('bestVersions'), version));
    return version;
  }

  /** Whether the run wrote its test evaluation and its report (both written once it stopped). */
  finished(): boolean {
    return existsSync(this.file('test')) && existsSync(this.file('report'));
  }

  /** Removes the test evaluation and report of a run that continues past its earlier end (they describe that end). */
  async clearResults(): Promise<void> {
    await rm(this.file('test'), { force: true });
    await rm(this.file('report'), { recursive: true, force: true });
  }
}

/** What best.json holds: the validation that made this checkpoint the best. */
export interface BestInfo {
  step: number;
  metric: string;
  value: number;
}

/** Points the symbolic link `path` at `target` by one rename (never a moment without the link). */
async function swapLink(path: string, target: string): Promise<void> {
  const temp = `${path}.tmp-${process.pid}`;
  await rm(temp, { force: true });
  await symlink(target, temp); // relative: the run folder stays movable
  await rename(temp, path);
}
