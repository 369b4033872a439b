import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderItems } from '../lib/rewards/index.js';
import { Catalog } from '../lib/text/index.js';
import { evaluateRecommendations, rankMetrics, type RecEvalRequest } from '../lib/eval/metrics.js';
import { popularityIndex } from '../lib/eval/popularity.js';
import { GrpoError } from '../lib/errors.js';
import { loadMoviesMulti, loadMoviesMultiFilms } from '../lib/data/movies-multi-files.js';

const d = (i: number) => 1 / Math.log2(i + 2); // DCG discount of 0-based rank i

function film(title: string, year: number) {
  return { title, year };
}

function rowAt(text: string, request: RecEvalRequest, ks: number[], options = {}) {
  return evaluateRecommendations([text], [request], { ks, ...options }).map((m) => [m.values.rowRecall, m.values.rowNdcg]);
}

describe('rankMetrics', () => {
  it('hand-computed recall and NDCG, K larger than the list', () => {
    // hits at ranks 2 and 4 of a 4-item list, 3 relevant; K = 10 > list length
    const { recall, ndcg } = rankMetrics([0, 1, 0, 1], 3, 10);
    expect(recall).toBeCloseTo(2 / 3, 12);
    expect(ndcg).toBeCloseTo((d(1) + d(3)) / (1 + d(1) + d(2)), 12);
  });

  it('empty list gives 0, empty ground truth gives NaN', () => {
    expect(rankMetrics([], 2, 5)).toEqual({ recall: 0, ndcg: 0 });
    const undefinedRow = rankMetrics([1], 0, 5);
    expect(Number.isNaN(undefinedRow.recall) && Number.isNaN(undefinedRow.ndcg)).toBe(true);
  });

  it('recall and NDCG lie in [0, 1]; NDCG is 1 when the first min(K, |truth|) ranks all hit (property)', () => {
    const cases = fc.record({ hits: fc.array(fc.constantFrom(0, 1), { maxLength: 30 }), extra: fc.nat(10), k: fc.integer({ min: 1, max: 40 }) });
    fc.assert(
      fc.property(cases, ({ hits, extra, k }) => {
        const truthSize = hits.reduce((a, b) => a + b, 0) + extra;
        if (truthSize === 0) return true;
        const { recall, ndcg } = rankMetrics(hits, truthSize, k);
        const front = Math.min(k, truthSize);
        const perfect = hits.length >= front && hits.slice(0, front).every((h) => h === 1);
        return recall >= 0 && recall <= 1 && ndcg >= 0 && ndcg <= 1 + 1e-12 && (Math.abs(ndcg - 1) < 1e-12) === perfect;
      }),
      { seed: 25, numRuns: 500 },
    );
  });

  it('idealCap truncates the ideal list (upstream short-list quirk)', () => {
    expect(rankMetrics([1], 2, 5, 1)).toEqual({ recall: 0.5, ndcg: 1 });
    expect(rankMetrics([1], 2, 5).ndcg).toBeCloseTo(1 / (1 + d(1)), 12);
  });
});

describe('TV25: upstream evaluate_direct_match semantics', () => {
  const catalog = Catalog.fromEntries([film('Heat', 1995), film('Heat', 1996), film('heat', 1995), film('Inception', 2011), film('Zzz', 2000), film('Alien', 1979)]);
  const recs = renderItems([film('Alien', 1979), film('Heat', 1995), film('Zzz', 2000), film('Inception', 2011), film('Heat', 1995)]);
  const request = { seen: ['Alien'], respondents: [{ items: [film('Heat', 1995), film('Inception', 2010), film('The Matrix', 1999)] }] };

  it('cleaned hits [1,0,1,0]: k = 1, 2, 5', () => {
    const got = rowAt(recs, request, [1, 2, 5], { semantics: 'upstream', catalog });
    const want = [[0.3333333, 1.0], [0.3333333, 0.6131472], [0.6666667, 0.7039181]];
    got.forEach((pair, i) => pair.forEach((v, j) => expect(v).toBeCloseTo(want[i][j], 6)));
  });

  it('truncate-before-clean variant: k = 2 gives NDCG 1.0', () => {
    const got = rowAt(recs, request, [2, 5], { semantics: 'upstreamTruncateFirst', catalog });
    const want = [[0.3333333, 1.0], [0.6666667, 0.7039181]];
    got.forEach((pair, i) => pair.forEach((v, j) => expect(v).toBeCloseTo(want[i][j], 6)));
  });

  it('short list: NDCG 1.0 with recall 0.5', () => {
    const short = { respondents: [{ items: [film('Heat', 1995), film('Inception', 2010)] }] };
    expect(rowAt(renderItems([film('Heat', 1995)]), short, [1, 5], { semantics: 'upstream', catalog })).toEqual([[0.5, 1], [0.5, 1]]);
  });

  it('case-sensitive titles: "heat" does not match "Heat"', () => {
    const gt = { respondents: [{ items: [film('Heat', 1995)] }] };
    expect(rowAt(renderItems([film('heat', 1995)]), gt, [5], { semantics: 'upstream', catalog })).toEqual([[0, 0]]);
  });

  it('several ground-truth entries on one item; the training matcher gives [1,1]', () => {
    const gt = { respondents: [{ items: [film('Heat', 1995), film('Heat', 1996)] }] };
    const text = renderItems([film('Heat', 1995), film('Heat', 1996)]);
    const [[recall, ndcg]] = rowAt(text, gt, [5], { semantics: 'upstream', catalog });
    expect(recall).toBeCloseTo(0.5, 7);
    expect(ndcg).toBeCloseTo(0.6131472, 6);
    expect(rowAt(text, gt, [5], { catalog })).toEqual([[1, 1]]);
  });

  it('default semantics keeps positions: seen and duplicate items keep their ranks and earn 0', () => {
    // hits [0, 1, 0, 1, 0]: Alien seen, Heat hit, Zzz miss, Inception hit (year ±1), Heat duplicate
    const [[r1, n1], [r2, n2], [r5, n5]] = rowAt(recs, request, [1, 2, 5], { catalog });
    expect([r1, n1]).toEqual([0, 0]);
    expect(r2).toBeCloseTo(1 / 3, 12);
    expect(n2).toBeCloseTo(d(1) / (1 + d(1)), 12);
    expect(r5).toBeCloseTo(2 / 3, 12);
    expect(n5).toBeCloseTo((d(1) + d(3)) / (1 + d(1) + d(2)), 12);
  });
});

describe('evaluateRecommendations', () => {
  it('duplicate ground truth: deduplicated by default, counted upstream', () => {
    const gt = { respondents: [{ items: [film('Heat', 1995), film('Heat', 1995), film('Up', 2009)] }] };
    const text = renderItems([film('Heat', 1995)]);
    expect(rowAt(text, gt, [5])[0][0]).toBeCloseTo(1 / 2, 12);
    expect(rowAt(text, gt, [5], { semantics: 'upstream' })[0][0]).toBeCloseTo(1 / 3, 12);
  });

  it('empty completion: every recall and NDCG is 0', () => {
    const [m] = evaluateRecommendations([''], [{ respondents: [{ items: [film('Up', 2009)] }], relevant: [film('Up', 2009)] }], { ks: [3] });
    for (const name of ['rowRecall', 'rowNdcg', 'requestRecall', 'unionNdcg', 'relevantRecall'] as const) expect(m.values[name]).toBe(0);
  });

  it('rows vs requests: averaging over rows weighs requests by their respondents', () => {
    const requests = [
      // 3 respondents: the list hits respondents 0 and 1 only (recall 1, 1, 0)
      { respondents: [{ items: [film('Heat', 1995)] }, { items: [film('Heat', 1995)] }, { items: [film('Up', 2009)] }] },
      // 1 respondent, missed
      { respondents: [{ items: [film('Alien', 1979)] }] },
    ];
    const text = renderItems([film('Heat', 1995)]);
    const [m] = evaluateRecommendations([text, text], requests, { ks: [1] });
    expect(m.values.rowRecall).toBeCloseTo(2 / 4, 12);
    expect(m.values.requestRecall).toBeCloseTo((2 / 3 + 0) / 2, 12);
    expect(m.values.unionRecall).toBeCloseTo((1 / 2 + 0) / 2, 12);
    expect(Array.from(m.series.rowRecall.count)).toEqual([3, 1]);
    expect(Number.isNaN(m.values.relevantRecall)).toBe(true); // no request keeps a relevant set
  });

  it('relevant set and popularity of hits vs relevant set', () => {
    const popularity = popularityIndex([
      { title: 'Heat', year: 1995, popularity: Math.E - 1 }, // ln(1 + p) = 1
      { title: 'Up', year: 2009, popularity: Math.E ** 3 - 1 }, // 3
      { title: 'Alien', year: 1979, popularity: 0 }, // 0
    ]);
    const request = { respondents: [{ items: [film('Up', 2009)] }], relevant: [film('Up', 2009), film('Heat', 1995), film('Alien', 1979)] };
    // "Up (2010)" hits within the year tolerance; its popularity is looked up at the nearest year
    const [m] = evaluateRecommendations([renderItems([film('Up', 2010), film('Zodiac', 2007)])], [request], { ks: [2], popularity });
    expect(m.values.relevantRecall).toBeCloseTo(1 / 3, 12);
    expect(m.values.relevantNdcg).toBeCloseTo(1 / (1 + d(1)), 12);
    expect(m.values.hitLogPopularity).toBeCloseTo(3, 12);
    expect(m.values.truthLogPopularity).toBeCloseTo((3 + 1 + 0) / 3, 12);
    expect(m.values.recommendedLogPopularity).toBeCloseTo(3, 12); // Zodiac's popularity is unknown: left out
  });

  it('rejects bad input with GrpoError', () => {
    const request = { respondents: [{ items: [film('Up', 2009)] }] };
    expect(() => evaluateRecommendations(['x'], [request], { ks: [0] })).toThrow(GrpoError);
    expect(() => evaluateRecommendations(['x', 'y'], [request])).toThrow(/shape/);
    expect(() => evaluateRecommendations([3 as unknown as string], [request])).toThrow(GrpoError);
    expect(() => evaluateRecommendations(['x'], [{ respondents: [] }])).toThrow(/respondents/);
    expect(() => evaluateRecommendations(['x'], [request], { semantic: 'upstream' } as object)).toThrow(/did you mean "semantics"/);
  });
});

describe('on the bundled movies-multi benchmark', () => {
  const requests = loadMoviesMulti('validation');
  const films = loadMoviesMultiFilms();
  const popularity = films.map((f) => ({ title: f.title, year: f.year, popularity: f.mentions }));
  // each request answered with respondent 0's own list
  const lists = requests.map((r) => renderItems(r.respondents[0].items));
  const [m] = evaluateRecommendations(lists, requests, { ks: [20], popularity, catalog: Catalog.fromEntries(films) });

  it("a respondent's own list: recall 1 against that row, |list| / |relevant| against the relevant set", () => {
    requests.forEach((request, g) => {
      const own = request.respondents[0].items.length;
      expect(m.series.relevantRecall.sum[g]).toBeCloseTo(Math.min(own, 20) / request.relevant!.length, 12);
      // rows: respondent 0 scores 1 (lists hold at most 10 films)
      expect(m.series.rowRecall.sum[g]).toBeGreaterThanOrEqual(1);
      expect(m.series.rowRecall.count[g]).toBe(request.respondents.length);
    });
    expect(m.values.rowRecall).toBeGreaterThan(m.values.relevantRecall);
  });

  it('respondents favour popular films: hits are more popular than the relevant set', () => {
    // README: relevant films average 17.3 ReDial mentions, the films respondents pick 31.4
    expect(m.values.hitLogPopularity).toBeGreaterThan(m.values.truthLogPopularity + 0.3);
    expect(m.series.hitLogPopularity.count.reduce((a, b) => a + b, 0)).toBe(requests.reduce((n, r) => n + r.respondents[0].items.length, 0));
  });
});
