import { GrpoError } from '../errors.js';
import * as opt from '../options/schema.js';
import { checkOptions } from '../options/schema.js';
import { integer } from '../validate.js';
import { mixSeed, mulberry32, randomInt, shuffleInPlace } from './rng.js';

/**
 * What one draw is.
 * - `"rows"` (Rank-GRPO): every (request, respondent) pair is one unit, so a request with r respondents
 *   is drawn r times per epoch; train with `target: "respondent"` and the drawn respondent.
 * - `"requests"` (ReMaRk): every request is one unit, drawn once per epoch; train with `"union"`/`"mean"`.
 * - `"requestRespondent"` (the ablation that isolates the sampling change): requests as `"requests"`, each draw
 *   with one of the request's respondents chosen uniformly (seeded by (seed, epoch, request)); train with `"respondent"`.
 */
export type SamplerUnit = 'rows' | 'requests' | 'requestRespondent';

export const SAMPLER_OPTIONS = {
  unit: opt.choice(['rows', 'requests', 'requestRespondent'] as const, 'requests', 'What one draw is: `"rows"` (Rank-GRPO: every (request, respondent) pair, '
    + 'so a request with r respondents is drawn r times per epoch), `"requests"` (ReMaRk: every request once per epoch) or `"requestRespondent"` '
    + '(every request once per epoch with one of its respondents drawn uniformly).'),
  batchSize: opt.integer(48, 'Prompts per batch, G.', 1),
  seed: opt.integer(0, 'Seed of the epoch permutations.', 0, 2 ** 53 - 1),
};

/** Options of {@link PromptSampler}. */
export type SamplerOptions = opt.OptionsOf<typeof SAMPLER_OPTIONS>;

export const SAMPLER_DEFAULTS = opt.defaultsOf(SAMPLER_OPTIONS);

/** One prompt of a batch. */
export interface SampledPrompt {
  /** index of the request */
  request: number;
  /** index of the respondent for `"rows"` and `"requestRespondent"`, −1 for `"requests"` */
  respondent: number;
  /** epoch the draw belongs to */
  epoch: number;
}

/**
 * Seeded, deterministic, epoch-based sampling without replacement. Epoch e is a fixed permutation of
 * all units (keyed by (seed, e)); the stream of draws is epoch 0, then epoch 1, … and batch b is draws
 * [b·G, (b+1)·G) of that stream, so any batch can be recomputed on its own (resuming needs only b).
 * A batch that crosses an epoch boundary finishes one epoch and starts the next.
 */
export class PromptSampler {
  readonly unit: SamplerUnit;
  readonly batchSize: number;
  readonly seed: number;
  // units [unitsPerEpoch]: request index and respondent index (−1 for "requests") of each unit
  readonly #requestOf: Int32Array;
  readonly #respondentOf: Int32Array;
  // respondents [requests]: of each request, for the uniform draw of "requestRespondent"
  readonly #respondentCounts: Int32Array;
  #epoch = -1;
  #order = new Int32Array(0);

  /** `respondentCounts[i]` = number of respondents of request i (each ≥ 1). */
  constructor(respondentCounts: ArrayLike<number>, options: SamplerOptions = {}) {
    const o = checkOptions(SAMPLER_OPTIONS, opt.plainNaming('sampler options'), options, SAMPLER_DEFAULTS);
    this.unit = o.unit;
    this.batchSize = o.batchSize;
    this.seed = o.seed;
    if (respondentCounts.length === 0) throw new GrpoError('GRPO_INVALID_ARGUMENT', 'Expected at least one request but received none');
    const requestOf: number[] = [];
    const respondentOf: number[] = [];
    for (let request = 0; request < respondentCounts.length; request++) {
      const count = integer(`respondentCounts[${request}]`, respondentCounts[request], 1);
      const units = this.unit === 'rows' ? count : 1;
      for (let r = 0; r < units; r++) {
        requestOf.push(request);
        respondentOf.push(this.unit === 'rows' ? r : -1);
      }
    }
    this.#respondentCounts = Int32Array.from(respondentCounts);
    this.#requestOf = Int32Array.from(requestOf);
    this.#respondentOf = Int32Array.from(respondentOf);
  }

  /** Units per epoch: Σ respondents for `"rows"`, the number of requests for `"requests"`. */
  get unitsPerEpoch(): number {
    return this.#requestOf.length;
  }

  /** The unit permutation of `epoch` (cached for the latest epoch used). */
  #permutation(epoch: number): Int32Array {
    if (epoch !== this.#epoch) {
      const order = Int32Array.from({ length: this.unitsPerEpoch }, (_, i) => i);
      this.#order = shuffleInPlace(order, mulberry32(mixSeed(this.seed, epoch)));
      this.#epoch = epoch;
    }
    return this.#order;
  }

  /** The unit's respondent; for `"requestRespondent"` a uniform draw keyed by (seed, epoch, request), so any batch recomputes alone. */
  #respondentOfDraw(unit: number, request: number, epoch: number): number {
    if (this.unit !== 'requestRespondent') return this.#respondentOf[unit];
    return randomInt(mulberry32(mixSeed(this.seed, epoch, request, 1)), this.#respondentCounts[request]);
  }

  /** Batch number `step` (0-based): G prompts. */
  batch(step: number): SampledPrompt[] {
    integer('step', step, 0);
    const prompts: SampledPrompt[] = [];
    for (let draw = step * this.batchSize; draw < (step + 1) * this.batchSize; draw++) {
      const epoch = Math.floor(draw / this.unitsPerEpoch);
      const unit = this.#permutation(epoch)[draw % this.unitsPerEpoch];
      const request = this.#requestOf[unit];
      prompts.push({ request, respondent: this.#respondentOfDraw(unit, request, epoch), epoch });
    }
    return prompts;
  }
}

/** A sampler over `requests` (anything with a `respondents` array). */
export function createSampler(requests: ReadonlyArray<{ respondents: readonly unknown[] }>, options?: SamplerOptions): PromptSampler {
  return new PromptSampler(requests.map((r) => r.respondents.length), options);
}
