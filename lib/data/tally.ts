import type { Distribution } from './movies-multi-stats.js';

/**
 * A running summary of counts, for files read a line at a time: memory grows with the number of distinct
 * values, not of values. The median is the upper one (element ⌊n/2⌋ of the sorted values), as in
 * `moviesMultiStats`.
 */
export class Tally {
  readonly #histogram = new Map<number, number>();
  #count = 0;
  #sum = 0;

  add(value: number): void {
    this.#histogram.set(value, (this.#histogram.get(value) ?? 0) + 1);
    this.#count++;
    this.#sum += value;
  }

  get count(): number {
    return this.#count;
  }

  /** min / median / mean / max (all 0 when nothing was added). */
  summary(): Distribution {
    const values = [...this.#histogram.keys()].sort((a, b) => a - b);
    let seen = 0;
    const median = values.find((v) => (seen += this.#histogram.get(v)!) > Math.floor(this.#count / 2)) ?? 0;
    return { min: values[0] ?? 0, median, mean: this.#sum / Math.max(this.#count, 1), max: values[values.length - 1] ?? 0 };
  }
}

/** Counts of labels (splits, sources, key kinds). */
export class Counts {
  readonly #counts = new Map<string, number>();

  add(label: string, by = 1): void {
    this.#counts.set(label, (this.#counts.get(label) ?? 0) + by);
  }

  summary(): Record<string, number> {
    return Object.fromEntries(this.#counts);
  }
}
