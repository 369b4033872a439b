import { integer } from '../validate.js';

/**
 * Length reward for a list that should hold exactly `k` items:
 * `−min(1, |count − k| / k)`, so 0 at exactly `k` items, −1/k per missing or extra item, and −1 for an
 * empty list or one of 2k items or more. `count` is the number of items with a parsable "Title (Year)"
 * (every item except `format` ones). Reported beside the rank rewards so a recipe chooses its weight.
 */
export function lengthReward(count: number, k: number): number {
  integer('count', count, 0);
  integer('k', k, 1);
  return 0 - Math.min(1, Math.abs(count - k) / k); // 0 − x, not −x: exactly K gives +0
}
