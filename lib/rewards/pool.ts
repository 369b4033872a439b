// Rewards of a large batch off the event loop: a pool of worker_threads (pool-worker.ts) that runs rankRewardsBatch
// and ccrRewardBatch on contiguous slices of the batch's groups, one slice per thread, and joins the slices in order,
// so the result equals the inline call's (same arrays, same per-completion results, their reward and hit rows views of
// the joined arrays). A catalog is sent to each thread once (Catalog.toData) and kept there. When a slice fails, the
// inline call is run to throw exactly the error it throws (the same message and indices); a thread that dies rejects
// what it had in flight with GRPO_INTERNAL. The worker file is the compiled pool-worker.js beside this file (dist/).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { GrpoError, type GrpoErrorCode } from '../errors.js';
import { integer } from '../validate.js';
import type { Catalog } from '../text/catalog.js';
import { ccrRewardBatch, type CcrBatchRewards, type CcrRewardOptions } from './ccr.js';
import type { PoolTask } from './pool-worker.js';
import { rankRewardsBatch, type RankRewardBatch, type RankRewardBatchOptions, type RewardRequest } from './recommend.js';

type Pending = { resolve: (value: unknown) => void; reject: (error: unknown) => void };
type Answer = { id: number; result?: unknown; error?: { code: GrpoErrorCode; message: string } };
type Slice = { start: number; end: number };
type Posted = PoolTask extends infer T ? (T extends unknown ? Omit<T, 'id'> : never) : never;

/** `count` items as at most `parts` contiguous non-empty slices of near-equal size. */
export function slices(count: number, parts: number): Slice[] {
  const n = Math.min(parts, count), out: Slice[] = [];
  for (let i = 0; i < n; i++) out.push({ start: Math.floor((i * count) / n), end: Math.floor(((i + 1) * count) / n) });
  return out;
}

function concat<T extends Float32Array | Int32Array | Uint8Array>(parts: readonly T[], make: (n: number) => T): T {
  const out = make(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) (out.set(p, at), (at += p.length));
  return out;
}

export class RewardPool {
  private readonly workers: Worker[];
  private readonly pending = new Map<number, Pending>();
  private readonly catalogKeys = new WeakMap<Catalog, number>();
  /** per thread, the catalog keys it holds */
  private readonly sent: Set<number>[];
  private nextId = 0;
  private nextCatalog = 0;
  private closed = false;

  /** `threads` worker threads (>= 1); they do not keep the process alive, and {@link close} ends them. */
  constructor(threads: number) {
    integer('RewardPool threads', threads, 1);
    const file = new URL('./pool-worker.js', import.meta.url);
    if (!existsSync(fileURLToPath(file))) {
      throw new GrpoError('GRPO_UNSUPPORTED', `RewardPool: ${fileURLToPath(file)} is missing: the pool runs from the compiled package (npm run build:ts writes dist/)`);
    }
    this.workers = Array.from({ length: threads }, () => this.start(file));
    this.sent = this.workers.map(() => new Set());
  }

  get threads(): number {
    return this.workers.length;
  }

  private start(file: URL): Worker {
    const worker = new Worker(file);
    worker.unref();
    worker.on('message', ({ id, result, error }: Answer) => {
      const pending = this.pending.get(id);
      this.pending.delete(id);
      if (error) pending?.reject(new GrpoError(error.code, error.message));
      else pending?.resolve(result);
    });
    worker.on('error', (error) => this.failAll(`a reward worker thread failed: ${error.message}`));
    worker.on('exit', (code) => code !== 0 && this.failAll(`a reward worker thread exited with code ${code}`));
    return worker;
  }

  private failAll(message: string): void {
    for (const pending of this.pending.values()) pending.reject(new GrpoError('GRPO_INTERNAL', message));
    this.pending.clear();
  }

  private post(thread: number, task: Posted): Promise<unknown> {
    const id = this.nextId++;
    if (this.closed) return Promise.reject(new GrpoError('GRPO_INVALID_ARGUMENT', 'RewardPool: the pool was closed'));
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      try {
        this.workers[thread].postMessage({ ...task, id });
      } catch (error) {
        this.pending.delete(id);
        reject(new GrpoError('GRPO_INVALID_ARGUMENT', `RewardPool: the batch or its options cannot be sent to a worker thread (${(error as Error).message})`));
      }
    });
  }

  /** Each slice on its own thread; on a failed slice, the inline call's own error. */
  private async map<T>(count: number, task: (slice: Slice, thread: number) => Posted, inline: () => unknown): Promise<T[]> {
    const parts = slices(count, this.workers.length);
    const settled = await Promise.allSettled(parts.map((slice, thread) => this.post(thread, task(slice, thread))));
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) {
      inline(); // throws the inline error when the inputs are at fault
      throw (failed as PromiseRejectedResult).reason;
    }
    return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
  }

  /** The catalog reference for `thread`: its data the first time that thread sees it. */
  private catalogRef(catalog: Catalog | undefined, thread: number) {
    if (!catalog) return undefined;
    let key = this.catalogKeys.get(catalog);
    if (key === undefined) this.catalogKeys.set(catalog, (key = this.nextCatalog++));
    const known = this.sent[thread].has(key);
    this.sent[thread].add(key);
    return known ? { key } : { key, data: catalog.toData() };
  }

  /** {@link rankRewardsBatch} over the threads: the same result. */
  async rankRewardsBatch(completions: ReadonlyArray<readonly string[]>, requests: readonly RewardRequest[], options: RankRewardBatchOptions = {}): Promise<RankRewardBatch> {
    const { catalog, respondents, ...rest } = options;
    const inline = () => rankRewardsBatch(completions, requests, options);
    if (!Array.isArray(completions) || !Array.isArray(requests) || completions.length !== requests.length || requests.length === 0) return inline();
    const parts = await this.map<RankRewardBatch>(requests.length, ({ start, end }, thread) => ({
      kind: 'rank', completions: completions.slice(start, end) as string[][], requests: requests.slice(start, end),
      options: { ...rest, ...(respondents && { respondents: Array.from(respondents).slice(start, end) }) }, catalog: this.catalogRef(catalog, thread),
    }), inline);
    const rewards = concat(parts.map((p) => p.rewards), (n) => new Float32Array(n));
    const hits = concat(parts.map((p) => p.hits), (n) => new Float32Array(n));
    const k = parts[0].results.length === 0 ? 0 : parts[0].results[0].rewards.length;
    const results = parts.flatMap((p) => p.results).map((r, row) => ({
      ...r, rewards: rewards.subarray(row * k, (row + 1) * k), hits: hits.subarray(row * k, (row + 1) * k),
    }));
    return { rewards, hits, length: concat(parts.map((p) => p.length), (n) => new Float32Array(n)), results };
  }

  /** {@link ccrRewardBatch} over the threads (slices of whole prompts): the same result. */
  async ccrRewardBatch(completions: readonly string[], truths: readonly (readonly string[])[], candidates: number, options?: CcrRewardOptions): Promise<CcrBatchRewards> {
    const inline = () => ccrRewardBatch(completions, truths, candidates, options);
    if (!Array.isArray(truths) || !Array.isArray(completions) || truths.length === 0 || !Number.isInteger(candidates)
      || completions.length !== truths.length * candidates) return inline();
    const parts = await this.map<CcrBatchRewards>(truths.length, ({ start, end }) => ({
      kind: 'ccr', completions: completions.slice(start * candidates, end * candidates), truths: truths.slice(start, end) as string[][], candidates, options,
    }), inline);
    const f32 = (n: number) => new Float32Array(n), i32 = (n: number) => new Int32Array(n);
    return {
      rewards: concat(parts.map((p) => p.rewards), f32),
      accuracy: concat(parts.map((p) => p.accuracy), f32),
      format: concat(parts.map((p) => p.format), f32),
      correctCounts: concat(parts.map((p) => p.correctCounts), i32),
      rewardPrefixEnd: concat(parts.map((p) => p.rewardPrefixEnd), i32),
      informative: concat(parts.map((p) => p.informative), (n) => new Uint8Array(n)),
      unparsable: parts.reduce((n, p) => n + p.unparsable, 0),
    };
  }

  /** Ends the threads; calls in flight reject, and so do later ones. */
  async close(): Promise<void> {
    this.closed = true;
    this.failAll('the reward pool was closed');
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
