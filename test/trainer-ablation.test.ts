// The sampling ablation of the ReMaRk comparison (issue 18): `rank-grpo-requests` draws requests uniformly,
// each with one respondent drawn uniformly, and rewards the lists against that respondent's films only.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecRequest } from '../lib/data/schemas.js';
import { rankRewardsBatch } from '../lib/rewards/recommend.js';
import { resolveConfig } from '../lib/trainer/recipes.js';
import { recommendTarget } from '../lib/trainer/task-recommend.js';
import { createTask } from '../lib/trainer/tasks.js';
import { rolloutOf, tinyMoviesDir, tinyTokenizer } from './helpers/trainer.js';

const K = 3;

describe('rank-grpo-requests (request sampling + one respondent)', () => {
  const moviesDir = tinyMoviesDir([1, 4], 1); // a one-respondent request and a four-respondent one
  const train = readFileSync(join(moviesDir, 'train.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as RecRequest);
  const config = resolveConfig({
    recipe: 'rank-grpo-requests', groups: 1, candidates: 4, rewards: { ranks: K, catalog: 'none' }, data: { moviesDir },
  });
  const task = createTask(config, tinyTokenizer());

  it('draws every request equally often and every respondent of a request uniformly', () => {
    const drawn = train.map((r) => new Array<number>(r.respondents.length).fill(0));
    for (let step = 0; step < 400; step++) {
      for (const d of task.prompts(step).draws) drawn[d.request][d.respondent]++;
    }
    expect(drawn.map((row) => row.reduce((a, b) => a + b, 0))).toEqual([200, 200]); // rows sampling would give 80 / 320
    // 200 draws over 4 respondents: each near 50 (binomial sd 6.1; 25 is more than 4 sd away)
    for (const n of drawn[1]) expect(n).toBeGreaterThan(25);
  });

  it('rewards each list against the drawn respondent alone (not respondent 0, not the union)', () => {
    const many = train.findIndex((r) => r.respondents.length === 4);
    const lists = train[many].respondents.map((x) => recommendTarget(x.items, K)); // candidate s = respondent s's own list
    const seen = new Set<number>();
    for (let step = 0; step < 40; step++) {
      const prompts = task.prompts(step);
      const d = prompts.draws[0];
      if (d.request !== many) continue;
      seen.add(d.respondent);
      const { rewards } = task.rewards(prompts, rolloutOf(lists, [0, 0, 0, 0])).rewards;
      const expected = rankRewardsBatch([lists], [train[many]], { k: K, target: 'respondent', respondents: [d.respondent] }).rewards;
      expect(Array.from(rewards)).toEqual(Array.from(expected));
      expect(rewards[d.respondent * K]).toBe(1); // the drawn respondent's own list hits at rank 1
    }
    expect(seen.size).toBeGreaterThan(1);
  });
});
