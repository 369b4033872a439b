import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { convertProtoqa, convertRedial } from '../lib/data/convert.js';
import { parseRequestRecord } from '../lib/data/schemas.js';
import { qaRewards } from '../lib/rewards/qa.js';
import { rankRewards } from '../lib/rewards/recommend.js';
import { renderItems } from '../lib/rewards/items.js';
import { unpackRealData } from './helpers/real-data.js';

const dataDir = unpackRealData(['redial-test.jsonl', 'protoqa-dev.jsonl', 'protoqa-dev-scraped.jsonl']);
const dataFile = (name: string) => join(dataDir, name);

describe('convertRedial', () => {
  const { requests, dropped } = convertRedial(dataFile('redial-test.jsonl'));

  it('turns the 1,342 ReDial test dialogues into single-respondent requests', () => {
    expect(requests.length + dropped).toBe(1342);
    expect(dropped).toBeGreaterThanOrEqual(18); // 18 dialogues recommend nothing
    expect(requests.every((r) => r.respondents.length === 1 && r.respondents[0].items.length > 0)).toBe(true);
    const first = requests.find((r) => r.id === '20001');
    expect(first?.request).toBe('Hi I am looking for a movie like Super Troopers (2001)');
    expect(first?.respondents[0].items).toContainEqual({ title: 'Police Academy', year: 1984 });
    expect(first?.seen).toContainEqual({ title: 'Super Troopers', year: 2001 });
  });

  it('produces records the request schema accepts, and every valid item of the recommender\'s own list hits', () => {
    let hitTotal = 0;
    for (const request of requests) {
      expect(parseRequestRecord(JSON.parse(JSON.stringify(request)), { source: 'x', line: 1 })).toEqual(request);
      const items = request.respondents[0].items;
      const { hits, reasons } = rankRewards(renderItems(items), request, { k: items.length, target: 'respondent' });
      const sum = hits.reduce((a, b) => a + b, 0);
      expect(sum).toBe(reasons.filter((r) => r === null).length);
      hitTotal += sum;
    }
    expect(hitTotal).toBeGreaterThan(3000);
  });
});

describe('convertProtoqa', () => {
  it('makes one answer per cluster with respondent counts and the cluster strings as aliases', () => {
    const records = convertProtoqa(dataFile('protoqa-dev.jsonl'));
    expect(records).toHaveLength(52);
    const first = records[0];
    expect(first.id).toBe('r1q1');
    expect(first.answers[0].aliases).toContain('age');
    expect(first.answers[0].text).toBe('age'); // the most frequent raw answer of the cluster (22 of 35)
    expect(qaRewards('age', first).hits[0]).toBeCloseTo(first.answers[0].count / first.answers.reduce((s, a) => s + a.count, 0), 6);
    expect(convertProtoqa(dataFile('protoqa-dev-scraped.jsonl'))).toHaveLength(980);
  });
});
