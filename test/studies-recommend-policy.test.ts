// The recommendation study's starting policy: the catalog-fact curriculum, the smaller benchmark variant,
// the prerequisite checks on fixed lists, and a quick-scale SFT + checks end to end.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMoviesMultiFilms, loadMoviesMultiCatalogs } from '../lib/data/movies-multi-files.js';
import type { RecRequest } from '../lib/data/schemas.js';
import { parseItems, renderItems } from '../lib/rewards/items.js';
import { checkLists, drawRespondents } from '../lib/studies/recommend-checks.js';
import { catalogFactExamples, describeFilm } from '../lib/studies/recommend-curriculum.js';
import { recommendPolicySettings, trainRecommendPolicy } from '../lib/studies/recommend-policy.js';
import { generateVariant, variantFolder } from '../lib/studies/recommend-variant.js';
import { loadMoviesData } from '../lib/trainer/task-recommend.js';

const films = loadMoviesMultiFilms().slice(0, 300);
const key = (f: { title: string; year: number }) => `${f.title} (${f.year})`;
const silent = { phase: () => ({ update() {}, status() {}, startAt() {}, done() {} }), line() {}, note() {} };

describe('catalog-fact curriculum', () => {
  const examples = catalogFactExamples(films, 5);
  const byKey = new Map(films.map((f) => [key(f), f]));
  const targetFilms = (target: string) => parseItems(target).items.map((i) => byKey.get(`${i.title} (${i.year})`));

  it('asks one question per film, answered by that film', () => {
    films.forEach((film, i) => {
      expect(examples[i].prompt.startsWith(describeFilm(film))).toBe(true);
      expect(examples[i].target).toBe(renderItems([film]));
    });
  });

  it('every listed film meets its question (cast member, or genre and decade), at most K per list', () => {
    const lists = examples.slice(films.length);
    expect(lists.length).toBeGreaterThan(0);
    for (const e of lists) {
      const listed = targetFilms(e.target);
      expect(listed.length).toBeGreaterThanOrEqual(2);
      expect(listed.length).toBeLessThanOrEqual(5);
      const cast = /^Films starring (.+)\?\n/.exec(e.prompt);
      const genre = /^(.+) films from the (\d+)s\?\n/.exec(e.prompt);
      for (const film of listed) {
        expect(film).toBeDefined();
        if (cast) expect(film!.cast).toContain(cast[1]);
        else {
          expect(film!.genres).toContain(genre![1]);
          expect(Math.floor(film!.year / 10) * 10).toBe(Number(genre![2]));
        }
      }
    }
  });

  it('asks only the kinds of question it is given', () => {
    expect(catalogFactExamples(films, 5, { films: true, cast: false, genreDecades: false })).toHaveLength(films.length);
    expect(catalogFactExamples(films, 5, { films: false, cast: false, genreDecades: false })).toEqual([]);
  });
});

describe('benchmark variant', () => {
  const options = { films: 200, seed: 7, requests: 120 };

  it('is deterministic, keeps the most-mentioned films and lists only them', () => {
    const variant = generateVariant(options);
    expect(generateVariant(options)).toEqual(variant);
    expect(variant.films.map(key)).toEqual(loadMoviesMultiFilms().slice(0, 200).map(key));
    const inVariant = new Set(variant.films.map(key));
    for (const r of variant.requests) {
      for (const x of r.respondents) for (const item of x.items) expect(inVariant.has(key(item))).toBe(true);
      for (const item of r.relevant ?? []) expect(inVariant.has(key(item))).toBe(true);
    }
    expect(new Set(variant.requests.map((r) => r.split))).toEqual(new Set(['train', 'validation', 'test']));
  });

  it('writes a folder the trainer reads, whose notInCatalog check is the shipped full catalog', () => {
    const dir = variantFolder(options, mkdtempSync(join(tmpdir(), 'rec-variant-')));
    const data = loadMoviesData(dir);
    expect(data.train.length + data.validation.length + data.test.length).toBe(120);
    const outside = loadMoviesMultiFilms()[1000];
    expect(data.catalogs.benchmark.has(outside.title, outside.year)).toBe(false);
    expect(data.catalogs.full.has(outside.title, outside.year)).toBe(loadMoviesMultiCatalogs().full.has(outside.title, outside.year));
    expect(variantFolder({ ...options, films: 'all' }, dir)).toBe('');
  });
});

describe('prerequisite checks on fixed lists', () => {
  const [heat, up, alien] = [{ title: 'Heat', year: 1995 }, { title: 'Up', year: 2009 }, { title: 'Alien', year: 1979 }];
  const request: RecRequest = { id: 'a', request: 'Films?', seen: [alien], respondents: [{ id: 'r1', items: [heat] }, { id: 'r2', items: [up] }] };

  it('counts items that pass every check, and scores the same lists against one respondent and the union', () => {
    // list 1: Up (valid, respondent 2's) and Alien (seen); list 2: a format line and Up again (valid), Up duplicate
    const texts = [['1. Up (2009)\n2. Alien (1979)', '1. no year\n2. Up (2009)\n3. Up (2009)']];
    const check = checkLists(texts, [request], [0], { ranks: 3, catalog: undefined, yearTolerance: 2 });
    expect(check.validItemFraction).toBeCloseTo(2 / 5, 12);
    expect(check.itemsPerList).toBe(2.5);
    expect(check.invalid).toEqual({ format: 1 / 5, seen: 1 / 5, notInCatalog: 0, duplicate: 1 / 5 });
    expect(check.zeroRewardGroups).toEqual({ respondent: 1, union: 0 });
    expect(check.multiRespondentGroups).toEqual({ requests: 1, respondent: 1, union: 0 });
    expect(checkLists(texts, [request], [1], { ranks: 3, catalog: undefined, yearTolerance: 2 }).zeroRewardGroups).toEqual({ respondent: 0, union: 0 });
  });

  it('draws each request\'s respondent in range, the same for the same seed', () => {
    const requests = Array.from({ length: 50 }, () => request);
    const drawn = drawRespondents(requests, 3);
    expect(drawRespondents(requests, 3)).toEqual(drawn);
    expect(new Set(drawn)).toEqual(new Set([0, 1]));
  });
});

describe('trainRecommendPolicy (quick scale)', () => {
  it('trains, saves the policy and returns fractions of the sampled lists', async () => {
    const out = mkdtempSync(join(tmpdir(), 'rec-policy-'));
    const settings = recommendPolicySettings('quick');
    settings.sft.steps = 10;
    settings.curriculum = { films: true, cast: false, genreDecades: false };
    const result = await trainRecommendPolicy({ reporter: silent, out, device: 'cpu', scale: 'quick', seeds: [0], overrides: {} }, settings);
    expect(existsSync(join(result.policyDir, 'config.json'))).toBe(true);
    expect(result.moviesDir).toBe(join(out, 'data'));
    expect(result.taskOptions.data).toEqual({ moviesDir: result.moviesDir });
    const { validItemFraction, zeroRewardGroups } = result.checks;
    for (const f of [validItemFraction, zeroRewardGroups.respondent, zeroRewardGroups.union]) expect(f).toBeGreaterThanOrEqual(0);
    for (const f of [validItemFraction, zeroRewardGroups.respondent, zeroRewardGroups.union]) expect(f).toBeLessThanOrEqual(1);
    // the union holds the drawn respondent's items: a list that earns against one earns against the union
    expect(zeroRewardGroups.union).toBeLessThanOrEqual(zeroRewardGroups.respondent);
    expect(result.checksByCandidates.map((c) => c.candidates)).toEqual(settings.checks.candidates);
    // the request rows of the variant's train split plus one fact question per variant film
    const data = loadMoviesData(result.moviesDir);
    expect(result.sftExamples).toBe(data.train.reduce((n, r) => n + r.respondents.length, 0) + 300);
  });
});
