// The recommendation task on a user's files: real ReDial dialogues converted to recommend/1 with a catalog/1 made
// from ReDial's movie list (the catalog check, the ±2-year rule and title normalisation as options), a tiny
// creator-keyed book dataset ("Title (Author)" lines), and a tiny `remark` run on the ReDial folder end to end.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../lib/cli/main.js';
import { convertRedial } from '../lib/data/convert.js';
import { readRecommendFiles } from '../lib/data/recommend-files.js';
import { BuiltinPolicy } from '../lib/policy/builtin.js';
import { parseItems } from '../lib/rewards/items.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import { createTask } from '../lib/trainer/tasks.js';
import { train } from '../lib/trainer/train.js';
import { capture } from './helpers/capture.js';
import { realDataText, unpackRealData } from './helpers/real-data.js';
import { rolloutOf, tempRunRoot, tinyConfig, tinyPolicy, tinyTokenizer } from './helpers/trainer.js';

afterEach(() => vi.restoreAllMocks());

const jsonl = (rows: readonly object[]) => rows.map((r) => `${JSON.stringify(r)}\n`).join('');

/** A folder of the converted ReDial test dialogues (train.jsonl) and a catalog of ReDial's dated movies. */
function redialFolder(): { dir: string; requests: ReturnType<typeof convertRedial>['requests'] } {
  const source = unpackRealData(['redial-test.jsonl']);
  const { requests } = convertRedial(join(source, 'redial-test.jsonl'));
  const dir = mkdtempSync(join(tmpdir(), 'grpo-redial-'));
  writeFileSync(join(dir, 'train.jsonl'), jsonl(requests.map((r) => ({ schema: 'recommend/1', ...r }))));
  const movies = realDataText('redial-movies.jsonl').trim().split('\n').map((l) => JSON.parse(l) as { title: string; year: number | null });
  writeFileSync(join(dir, 'catalog.jsonl'), jsonl(movies.filter((m) => m.year !== null).map((m) => ({ schema: 'catalog/1', title: m.title, year: m.year }))));
  return { dir, requests };
}

const redial = redialFolder();

/** The first request of step 0 and the rank rewards of `texts` (one group of their count) under `options`. */
function scored(options: object, texts: (request: { respondents: { items: { title: string; year: number }[] }[] }) => string[]) {
  const config = resolveConfig({ recipe: 'remark', groups: 1, candidates: 2, rewards: { ranks: 5, lengthWeight: 0 }, validation: { metric: 'unionRecall' }, ...options });
  const task = createTask(config, tinyTokenizer());
  const prompts = task.prompts(0) as { texts: string[]; draws: { request: number }[] };
  const files = config.data;
  const request = readRecommendFiles({
    path: files.recommend, validation: '', test: '', catalog: files.catalog, key: files.itemKey, heldOut: 0, splitSeed: 0,
  }).train[prompts.draws[0].request];
  const lists = texts(request);
  const { rewards, stats } = task.rewards(prompts, rolloutOf(lists, lists.map(() => 0))) as { rewards: { rewards: Float32Array }; stats: Record<string, number> };
  return { request, prompt: prompts.texts[0], rewards: rewards.rewards, stats };
}

describe('recommend on converted ReDial dialogues', () => {
  it('a folder splits by the held-out rule and finds its catalog; a file with its own splits holds nothing out', () => {
    const folder = readRecommendFiles({ path: redial.dir, validation: '', test: '', catalog: '', key: 'year', heldOut: 0, splitSeed: 0 });
    expect([folder.train.length, folder.validation.length, folder.test.length]).toEqual([1052, 132, 132]);
    expect(folder.catalog!.has('Toy Story 2', 1999)).toBe(true);
    const file = readRecommendFiles({ path: join(redial.dir, 'train.jsonl'), validation: join(redial.dir, 'train.jsonl'), test: join(redial.dir, 'train.jsonl'), catalog: '', key: 'year', heldOut: 0, splitSeed: 0 });
    expect([file.train.length, file.catalog]).toEqual([1316, undefined]);
  });

  it('the recommender\'s films hit, within ±2 years unless the tolerance is 0; a film outside the catalog earns nothing', () => {
    const data = { recommend: redial.dir };
    const film = (request: { respondents: { items: { title: string; year: number }[] }[] }) => request.respondents[0].items[0];
    const lists = (r: Parameters<typeof film>[0]) => [`1. ${film(r).title} (${film(r).year + 1})`, `1. Not A Real Film Xyzzy (1999)\n2. ${film(r).title} (${film(r).year})`];
    const checked = scored({ data }, lists);
    expect(checked.prompt).toContain('Recommend 5 films, one per line as "rank. Title (Year)".');
    expect(checked.prompt).toContain(checked.request.request.trim());
    expect(Array.from(checked.rewards.subarray(5, 7))).toEqual([0, 1]);
    // the catalog holds the exact year only: the invented film and the year + 1 are both notInCatalog
    expect(checked.stats.invalidItemFraction).toBeCloseTo(2 / 3, 6);
    const loose = scored({ data, rewards: { ranks: 5, lengthWeight: 0, catalog: 'none' } }, lists);
    expect([loose.rewards[0], loose.stats.invalidItemFraction]).toEqual([1, 0]); // year + 1 matches under ±2
    const exact = scored({ data, rewards: { ranks: 5, lengthWeight: 0, catalog: 'none', yearTolerance: 0 } }, lists);
    expect(exact.rewards[0]).toBe(0);
  });

  it('a selection on relevantRecall is refused when no validation request has relevant items', () => {
    expect(() => createTask(resolveConfig({ recipe: 'remark', data: { recommend: redial.dir } }), tinyTokenizer()))
      .toThrow(/"relevantRecall" needs validation requests with "relevant" items and none of the 132 has them; select on "unionRecall"/);
  });

  it('title normalisation is an option: upper case matches by default, not under "none"', () => {
    const data = { recommend: redial.dir };
    const upper = (r: { respondents: { items: { title: string; year: number }[] }[] }) => {
      const { title, year } = r.respondents[0].items[0];
      return [`1. ${title.toUpperCase()} (${year})`, '1. Nothing (1900)'];
    };
    expect(scored({ data }, upper).rewards[0]).toBe(1);
    expect(scored({ data, rewards: { ranks: 5, lengthWeight: 0, normalization: 'none', catalog: 'none' } }, upper).rewards[0]).toBe(0);
  });
});

describe('recommend on creator-keyed items (books)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'grpo-books-'));
  const book = (title: string, creator: string) => ({ title, creator });
  const hobbit = book('The Hobbit', 'J. R. R. Tolkien');
  const dune = book('Dune', 'Frank Herbert');
  const emma = book('Emma', 'Jane Austen');
  const persuasion = book('Persuasion', 'Jane Austen');
  const requests = [
    { id: 'b1', request: 'A fantasy adventure for a long trip?', seen: [book('The Lord of the Rings', 'J. R. R. Tolkien')], respondents: [{ id: 'u1', items: [hobbit] }, { id: 'u2', items: [dune, hobbit] }] },
    { id: 'b2', request: 'Something witty and romantic, set in England.', respondents: [{ id: 'u3', items: [emma, persuasion] }] },
    { id: 'b3', request: 'Classic science fiction please.', respondents: [{ id: 'u4', items: [dune] }] },
  ];
  const catalog = jsonl([hobbit, dune, emma, persuasion, { ...book('The Lord of the Rings', 'J. R. R. Tolkien'), aliases: ['LOTR'] }]);
  /** A books folder whose train split holds `train`. */
  const folder = (train: readonly object[]) => {
    const dir = mkdtempSync(join(tmpdir(), 'grpo-books-'));
    writeFileSync(join(dir, 'train.jsonl'), jsonl(train));
    writeFileSync(join(dir, 'validation.jsonl'), jsonl(requests.slice(0, 1)));
    writeFileSync(join(dir, 'test.jsonl'), jsonl(requests.slice(1, 2)));
    writeFileSync(join(dir, 'catalog.jsonl'), catalog);
    return dir;
  };
  const booksOf = (dir: string) => ({ data: { recommend: dir, itemKey: 'creator', itemNoun: 'books', creatorLabel: 'Author' }, seed: 1 });

  it('parses "Title (Creator)" lines; a line without its creator keeps its rank as a format item', () => {
    const { items } = parseItems('Here you go:\n1. **The Hobbit** (J. R. R. Tolkien)\n2. Dune\n3. Emma (Jane Austen)', 'creator');
    expect(items.map((i) => [i.title, i.year])).toEqual([['The Hobbit / J. R. R. Tolkien', 0], ['Dune', null], ['Emma / Jane Austen', 0]]);
  });

  it('the right author hits, another author or a seen book does not; the prompt asks for "Title (Author)"', () => {
    const lists = () => ['1. The Hobbit (J. R. R. Tolkien)\n2. Dune (Frank Herbert)\n3. Emma (Someone Else)', '1. LOTR (J. R. R. Tolkien)\n2. the hobbit (j. r. r. tolkien)'];
    const { prompt, rewards, stats } = scored(booksOf(folder(requests.slice(0, 1))), lists);
    expect(prompt).toContain('Recommend 5 books, one per line as "rank. Title (Author)".');
    expect(Array.from(rewards.subarray(0, 3))).toEqual([1, 1, 0]); // the union of b1 holds The Hobbit and Dune
    expect(Array.from(rewards.subarray(5, 7))).toEqual([0, 1]); // LOTR is in the catalog (an alias) but not a hit; the hobbit after normalisation
    expect(stats.invalidItemFraction).toBeCloseTo(1 / 5, 6); // Emma by someone else is not in the catalog
    const seen = scored(booksOf(folder(requests.slice(0, 1))), () => ['1. The Lord of the Rings (J. R. R. Tolkien)', '1. Dune (Frank Herbert)']);
    expect([seen.rewards[0], seen.rewards[5]]).toEqual([0, 1]);
    expect(seen.stats.invalidItemFraction).toBeCloseTo(1 / 2, 6); // the seen book
  });

  it('every item needs its creator: a missing one is refused with its line and field', () => {
    const bad = mkdtempSync(join(tmpdir(), 'grpo-books-bad-'));
    mkdirSync(bad, { recursive: true });
    writeFileSync(join(bad, 'train.jsonl'), jsonl([requests[0], { ...requests[2], respondents: [{ id: 'u9', items: [{ title: 'Dune', year: 1965 }] }] }]));
    expect(() => readRecommendFiles({ path: bad, validation: '', test: '', catalog: '', key: 'creator', heldOut: 0, splitSeed: 0 }))
      .toThrow(/train.jsonl:2: field "respondents\[0\].items\[0\].creator": missing \(expected a string \(data.itemKey is "creator"\)\)/);
  });

  it('a remark run on the books folder evaluates on its own validation and test files', async () => {
    const config = resolveConfig({ ...booksOf(folder(requests)), recipe: 'remark', steps: 2, groups: 2, candidates: 2, generation: { maxNewTokens: 16 }, validation: { every: 2, metric: 'unionRecall' }, checkpointEvery: 2, rewards: { ranks: 3 } });
    const runDir = join(tempRunRoot(), 'books');
    const result = await train({ config, policy: await tinyPolicy(5), runDir, loadPolicy: (d) => BuiltinPolicy.load(d) });
    expect(JSON.parse(readFileSync(join(runDir, 'test.json'), 'utf8')).completions).toHaveLength(1);
    expect(Number.isFinite(result.test!.unionRecall)).toBe(true);
  }, 60_000);
});

describe('remark on the ReDial folder end to end', () => {
  it('a few steps: finite step metrics, validation and test recall, a report', async () => {
    const config = resolveConfig({
      recipe: 'remark', steps: 3, groups: 2, candidates: 3, learningRate: 1e-2, generation: { maxNewTokens: 24 },
      rewards: { ranks: 5 }, validation: { every: 2, prompts: 3, metric: 'unionRecall' }, testPrompts: 4, checkpointEvery: 3,
      data: { recommend: redial.dir },
    });
    const runDir = join(tempRunRoot(), 'remark-redial');
    const tokenizer = tinyTokenizer();
    const policy = await BuiltinPolicy.create({ ...tinyConfig(tokenizer.vocabSize), maxPositions: 1024 }, { seed: 4, tokenizer });
    const result = await train({ config, policy, runDir, loadPolicy: (d) => BuiltinPolicy.load(d) });
    expect(result.steps).toBe(3);
    const rows = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    for (const row of rows) for (const key of ['rewardMean', 'zeroRewardGroups', 'itemsPerList', 'invalidItemFraction']) expect(Number.isFinite(row.stats[key]), key).toBe(true);
    for (const metric of ['rowRecall', 'unionRecall', 'requestRecall']) expect(Number.isFinite(result.test![metric]), metric).toBe(true);
    expect(existsSync(join(runDir, 'report', 'report.md'))).toBe(true);
  }, 120_000);
});

it('grpo train --help names the recommendation options for your own files', async () => {
  const io = capture();
  expect(await main(['train', '--help'])).toBe(0);
  for (const flag of ['--data.recommend', '--data.catalog', '--data.itemKey creator', '--rewards.normalization']) expect(io.out()).toContain(flag);
});
