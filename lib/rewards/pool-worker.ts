// One worker thread of the reward pool (pool.ts): runs rankRewardsBatch or ccrRewardBatch on the slice of a batch it
// is sent and posts the result back. Catalogs arrive once per pool catalog (Catalog.toData) and are kept by key.
import { parentPort } from 'node:worker_threads';
import { GrpoError } from '../errors.js';
import { Catalog, type CatalogData } from '../text/catalog.js';
import { ccrRewardBatch, type CcrRewardOptions } from './ccr.js';
import { rankRewardsBatch, type RankRewardBatchOptions, type RewardRequest } from './recommend.js';

/** A slice of a batch, as the pool posts it. */
export type PoolTask =
  | { id: number; kind: 'rank'; completions: string[][]; requests: RewardRequest[]; options: Omit<RankRewardBatchOptions, 'catalog'>;
    catalog?: { key: number; data?: CatalogData } }
  | { id: number; kind: 'ccr'; completions: string[]; truths: string[][]; candidates: number; options?: CcrRewardOptions };

const catalogs = new Map<number, Catalog>();

function catalogOf(ref: { key: number; data?: CatalogData }): Catalog {
  if (ref.data) catalogs.set(ref.key, Catalog.fromData(ref.data));
  const catalog = catalogs.get(ref.key);
  if (!catalog) throw new GrpoError('GRPO_INTERNAL', `reward worker: catalog ${ref.key} was never sent`);
  return catalog;
}

function run(task: PoolTask) {
  if (task.kind === 'ccr') return ccrRewardBatch(task.completions, task.truths, task.candidates, task.options);
  return rankRewardsBatch(task.completions, task.requests, { ...task.options, ...(task.catalog && { catalog: catalogOf(task.catalog) }) });
}

parentPort!.on('message', (task: PoolTask) => {
  try {
    parentPort!.postMessage({ id: task.id, result: run(task) });
  } catch (error) {
    const code = error instanceof GrpoError ? error.code : 'GRPO_INTERNAL';
    parentPort!.postMessage({ id: task.id, error: { code, message: error instanceof Error ? error.message : String(error) } });
  }
});
