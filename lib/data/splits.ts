// Train, validation and test splits of a user's files: each split from its own file, or held out of the
// training file by a seeded permutation (the same file, seed and count give the same splits).
import { GrpoError } from '../errors.js';
import { mulberry32, shuffleInPlace } from './rng.js';

export interface Splits<T> {
  train: T[];
  validation: T[];
  test: T[];
}

export interface HoldOutOptions<T> {
  /** The validation records when they have their own file (nothing is held out for them). */
  validation?: T[];
  /** The test records when they have their own file. */
  test?: T[];
  /** Records held out for each missing split; 0 = 10% of the file (at least 1). */
  heldOut: number;
  seed: number;
  /** The training file, for the error when too little of it is left. */
  source: string;
}

/**
 * The splits of `records` (the training file): a split without its own file takes `heldOut` records of a
 * permutation of the file seeded by `seed`, validation the first ones, then test; training keeps the rest, in
 * file order.
 * @example holdOut(problems, { heldOut: 0, seed: 0, source: 'train.jsonl' }) // 10% validation, 10% test, 80% train
 */
export function holdOut<T>(records: readonly T[], options: HoldOutOptions<T>): Splits<T> {
  const { validation, test, seed, source } = options;
  const missing = Number(validation === undefined) + Number(test === undefined);
  const count = options.heldOut > 0 ? options.heldOut : Math.max(1, Math.round(records.length / 10));
  if (records.length - missing * count < 1) {
    throw new GrpoError('GRPO_VALUE_RANGE', `${source}: ${records.length} records cannot give ${missing} held-out split(s) of ${count} and keep one to train on; `
      + 'lower data.heldOut or give the validation and test files');
  }
  const order = shuffleInPlace(Array.from(records.keys()), mulberry32(seed >>> 0));
  const taken = new Set(order.slice(0, missing * count));
  const pick = (from: number) => order.slice(from * count, (from + 1) * count).sort((a, b) => a - b).map((i) => records[i]);
  return {
    train: records.filter((_, i) => !taken.has(i)),
    validation: validation ?? pick(0),
    test: test ?? pick(validation === undefined ? 1 : 0),
  };
}
