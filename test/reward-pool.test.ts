// Rewards on worker threads (lib/rewards/pool.ts, run from the compiled dist/ as `npm test` builds it) equal the
// inline batch functions' on a recommendation batch (movies-multi requests, both catalogs, the respondent and union
// targets) and on a CCR batch, split unevenly over the threads; a bad batch fails with the inline error, a closed pool
// rejects.
import { afterAll, describe, expect, it } from 'vitest';
import { RewardPool } from '../dist/rewards/pool.js';
import { loadMoviesMulti, loadMoviesMultiCatalogs, loadMoviesMultiFilms } from '../lib/data/movies-multi-files.js';
import { ccrRewardBatch } from '../lib/rewards/ccr.js';
import { renderItems } from '../lib/rewards/items.js';
import { rankRewardsBatch } from '../lib/rewards/recommend.js';
import { Catalog } from '../lib/text/catalog.js';

const S = 4;
const requests = loadMoviesMulti('train').slice(0, 23); // 23 groups over 3 threads: slices of 7, 8, 8
const films = loadMoviesMultiFilms();
/** Candidate s of request g: some of a respondent's films, a seen one, catalog films, a film in no catalog and a line that is no item. */
const completions = requests.map((r, g) => Array.from({ length: S }, (_, s) => {
  const own = r.respondents[s % r.respondents.length].items.slice(s, s + 3);
  const seen = (r.seen ?? []).slice(0, s % 2);
  const other = films.slice((g * 7 + s * 3) % 500, ((g * 7 + s * 3) % 500) + 2);
  const imagined = s === 3 ? [{ title: 'Zzyzx, an Imagined Film', year: 1999 }] : []; // in no catalog
  const list = renderItems([...imagined, ...other.slice(0, 1), ...own, ...seen.map((x) => ({ title: x.title, year: x.year ?? 2000 })), ...other.slice(1)]);
  return s === 3 ? `${list}Hope you enjoy these!\n` : list;
}));

describe('RewardPool', () => {
  const pool = new RewardPool(3);
  afterAll(() => pool.close());
  const catalogs = loadMoviesMultiCatalogs();

  it.each([
    ['respondent target, the full catalog (an index)', { target: 'respondent' as const, catalog: catalogs.full, respondents: requests.map((r, g) => g % r.respondents.length) }],
    ['union target, the benchmark catalog (entries)', { target: 'union' as const, catalog: catalogs.benchmark }],
    ['mean target, dcgTail, no catalog', { target: 'mean' as const, shape: 'dcgTail' as const }],
  ])('recommendation: %s — the inline result', async (_name, options) => {
    const inline = rankRewardsBatch(completions, requests, { k: 5, ...options });
    const pooled = await pool.rankRewardsBatch(completions, requests, { k: 5, ...options });
    expect(inline.rewards.some((x) => x > 0)).toBe(true);
    expect(inline.results.some((r) => Object.values(r.invalid).some((n) => n > 0))).toBe(true);
    if (options.catalog) expect(inline.results.some((r) => r.invalid.notInCatalog > 0)).toBe(true);
    expect(pooled).toEqual(inline);
    // the per-completion rows are views of the joined arrays, as inline
    expect(pooled.results[30].rewards.buffer).toBe(pooled.rewards.buffer);
    expect(Array.from(pooled.results[30].rewards)).toEqual(Array.from(pooled.rewards.subarray(30 * 5, 31 * 5)));
  });

  it('CCR: the inline result', async () => {
    const answer = (k: number, value: string) => `Working on problem ${k}…\nAnswer ${k}: \\boxed{${value}}\n`;
    const truths = Array.from({ length: 10 }, (_, p) => [String(p), String(2 * p + 1), '\\frac{1}{2}']);
    const completions = truths.flatMap((t, p) => Array.from({ length: S }, (_, s) =>
      [answer(1, s % 2 ? t[0] : '99'), answer(2, s > 1 ? t[1] : 'x'), s === 3 ? answer(3, '0.5') : answer(3, '4\\sqrt(2)')].join('')));
    const inline = ccrRewardBatch(completions, truths, S);
    const pooled = await pool.ccrRewardBatch(completions, truths, S);
    expect(inline.unparsable).toBeGreaterThan(0);
    expect(new Set(inline.rewards).size).toBeGreaterThan(2);
    expect(pooled).toEqual(inline);
  });

  it('fails as inline does on a bad batch; a catalog is sent to each thread once', async () => {
    const bad = completions.map((c, g) => (g === 17 ? c.slice(0, 3) : c));
    expect(() => rankRewardsBatch(bad, requests, { k: 5 })).toThrow(/completions\[17\]/);
    await expect(pool.rankRewardsBatch(bad, requests, { k: 5 })).rejects.toMatchObject({ code: 'GRPO_SHAPE_MISMATCH', message: expect.stringMatching(/completions\[17\]/) });
    const catalog = Catalog.fromEntries(films.slice(0, 50));
    const toData = catalog.toData.bind(catalog);
    let copies = 0;
    catalog.toData = () => (copies++, toData());
    // sent before any lookup built its index: the threads rebuild it from the entries
    const first = await pool.rankRewardsBatch(completions, requests, { k: 5, catalog });
    const second = await pool.rankRewardsBatch(completions, requests, { k: 5, catalog });
    expect(copies).toBe(3);
    const inline = rankRewardsBatch(completions, requests, { k: 5, catalog });
    expect(inline.results.filter((r) => r.invalid.notInCatalog > 0).length).toBeGreaterThan(10);
    expect(first).toEqual(inline);
    expect(second).toEqual(inline);
  });

  it('fails as inline does on options inline refuses (a function, which could not cross threads anyway), and rejects once closed', async () => {
    const other = new RewardPool(1);
    const options = { verify: { hook: () => 1 } as never };
    const inline = (() => {
      try {
        ccrRewardBatch(['Answer 1: \\boxed{1}\n'], [['1']], 1, options);
      } catch (error) {
        return error as Error & { code: string };
      }
    })();
    expect(inline?.code).toBeDefined();
    await expect(other.ccrRewardBatch(['Answer 1: \\boxed{1}\n'], [['1']], 1, options)).rejects.toMatchObject({ code: inline!.code, message: inline!.message });
    await other.close();
    await expect(other.ccrRewardBatch(['Answer 1: \\boxed{1}\n'], [['1']], 1)).rejects.toMatchObject({ code: 'GRPO_INVALID_ARGUMENT', message: expect.stringContaining('closed') });
  });
});
