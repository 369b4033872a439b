// The worker threads of a run's rewards (config.rewards.threads, lib/rewards/pool.ts): none at 0, else one
// RewardPool made on the first step that needs it and ended with the task (Task.close).
import { RewardPool } from '../rewards/pool.js';

export interface RewardThreads {
  /** The pool, or undefined when rewards run on the main thread. */
  pool(): RewardPool | undefined;
  close(): Promise<void>;
}

export function rewardThreads(threads: number): RewardThreads {
  let pool: RewardPool | undefined;
  return {
    pool: () => (threads === 0 ? undefined : (pool ??= new RewardPool(threads))),
    close: async () => {
      await pool?.close();
      pool = undefined;
    },
  };
}

/** `f` of a value computed inline or on the threads: at once, or when the promise settles. */
export function afterRewards<T, U>(value: T | Promise<T>, f: (value: T) => U): U | Promise<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}
