// Plain float64 references of the advantage kernels (native/kernels/advantage/advantage*.cc), written
// for clarity: tests and benches compare the native results with these.

/** Normalisation options, as resolved by lib/kernels/advantage.ts. */
export interface AdvantageReferenceOptions {
  scale: 'group' | 'batch' | 'none';
  stdEpsilon: number;
  singletonGroup: 'zero' | 'raw' | 'nan';
  nanRewards: 'exclude' | 'asZero';
}

function values(rewards: ArrayLike<number>, members: readonly number[], o: AdvantageReferenceOptions): number[] {
  return members.map((i) => (Number.isNaN(rewards[i]) && o.nanRewards === 'asZero' ? 0 : rewards[i]));
}

/** Mean and unbiased std of the non-NaN values (std NaN below two values). */
export function nanMeanStd(xs: readonly number[]): { mean: number; std: number; valid: number } {
  const v = xs.filter((x) => !Number.isNaN(x));
  const mean = v.reduce((s, x) => s + x, 0) / v.length;
  const variance = v.reduce((s, x) => s + (x - mean) ** 2, 0) / (v.length - 1);
  return { mean, std: v.length >= 2 ? Math.sqrt(variance) : NaN, valid: v.length };
}

function advantageOf(v: number, group: { mean: number; valid: number }, std: number, o: AdvantageReferenceOptions): number {
  if (Number.isNaN(v)) return 0;
  if (group.valid < 2) {
    if (o.singletonGroup === 'zero') return 0;
    if (o.singletonGroup === 'nan') return NaN;
    return o.scale === 'none' ? v : v / (1 + o.stdEpsilon);
  }
  const a = o.scale === 'none' ? v - group.mean : (v - group.mean) / (std + o.stdEpsilon);
  return Number.isFinite(a) ? a : 0;
}

/** Advantages of rewards whose groups are given as lists of indices; also TRL's frac_reward_zero_std. */
export function normalizeGroupsReference(
  rewards: ArrayLike<number>, groups: readonly (readonly number[])[], o: AdvantageReferenceOptions,
): { advantages: Float64Array; fracZeroStd: number } {
  const all = Array.from({ length: rewards.length }, (_, i) => i);
  const batchStd = nanMeanStd(values(rewards, all, o)).std;
  const out = new Float64Array(rewards.length);
  let zeroStd = 0;
  for (const members of groups) {
    const vs = values(rewards, members, o);
    const group = nanMeanStd(vs);
    const std = o.scale === 'batch' ? batchStd : group.std;
    // TRL is_std_zero: isclose(std, 0); the std of one row (num_generations_eval = 1) is 0.
    const rows = o.scale === 'batch' ? rewards.length : members.length;
    if (rows === 1 || Math.abs(std) <= 1e-8) zeroStd += members.length;
    members.forEach((i, j) => { out[i] = advantageOf(vs[j], group, std, o); });
  }
  return { advantages: out, fracZeroStd: zeroStd / rewards.length };
}

/** Groups of contiguous rows (groupSize) or by id (groupIds). */
export function groupsOf(n: number, groupSize: number, groupIds?: ArrayLike<number>): number[][] {
  const groups = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const g = groupIds ? groupIds[i] : Math.floor(i / groupSize);
    groups.set(g, [...(groups.get(g) ?? []), i]);
  }
  return [...groups.values()];
}

/** rewards [G, S, K]: one group per (g, k) cell across the S candidates. */
export function rankCellsOf(groups: number, candidates: number, ranks: number): number[][] {
  const cells: number[][] = [];
  for (let g = 0; g < groups; g++) {
    for (let k = 0; k < ranks; k++) {
      cells.push(Array.from({ length: candidates }, (_, s) => (g * candidates + s) * ranks + k));
    }
  }
  return cells;
}

/** Rank-GRPO token advantages (L1825–1851) for one row; segments/mask/out are [T]. */
export function itemTokenRowReference(
  itemAdvantages: ArrayLike<number>, segments: ArrayLike<number>, mask: ArrayLike<number>, eos: number, ranks: number,
  shaping: { enabled: boolean; endOfList: number; extraToken: number; earlyStop: number },
): Float64Array {
  const out = new Float64Array(segments.length);
  let emitted = 0;
  let overflow = false;
  for (let t = 0; t < segments.length; t++) {
    if (!mask[t]) continue;
    emitted = Math.max(emitted, segments[t] + 1);
    overflow ||= segments[t] >= ranks;
    if (segments[t] >= 0 && segments[t] < ranks && t !== eos) out[t] = itemAdvantages[segments[t]];
    if (shaping.enabled && segments[t] >= ranks) out[t] += shaping.extraToken;
  }
  if (shaping.enabled && eos >= 0 && emitted >= ranks && !overflow) out[eos] += shaping.endOfList;
  if (shaping.enabled && eos >= 0 && emitted < ranks) out[eos] += shaping.earlyStop;
  return out;
}
