import { describe, expect, it } from 'vitest';
import { qaRewards } from '../lib/rewards/qa.js';
import { realDataText } from './helpers/real-data.js';

const record = {
  answers: [
    { text: 'age', count: 35, aliases: ['their age', 'how old they are'] },
    { text: 'name', count: 10 },
    { text: 'job', count: 5 },
  ],
};

describe('qaRewards', () => {
  it('count-weights clusters by respondents and counts each cluster once', () => {
    const text = '1. Their AGE\n2. favourite color\n3. **Name**\n4. age';
    const result = qaRewards(text, record, { k: 5 });
    const hits = [35 / 50, 0, 10 / 50, 0, 0];
    result.rewards.forEach((v, i) => expect(v).toBeCloseTo(hits[i], 6));
    expect(result.answers.map((a) => [a.cluster, a.duplicate])).toEqual([[0, false], [-1, false], [1, false], [0, true]]);
  });

  it('union form gives 1 per new cluster; dcgTail sums the tail', () => {
    expect([...qaRewards('job\nname', record, { k: 3, target: 'union' }).rewards]).toEqual([1, 1, 0]);
    const tail = qaRewards('job\nname', record, { k: 3, target: 'union', shape: 'dcgTail' }).rewards;
    expect(tail[0]).toBeCloseTo(1 + 1 / Math.log2(3), 6);
  });

  it('scores the human baseline of a real ProtoQA question above an off-topic list', () => {
    const line = realDataText('protoqa-dev.jsonl').split('\n')[0];
    const raw = JSON.parse(line) as { clusters: { count: number; answers: string[] }[]; human_baseline: string[] };
    const converted = { answers: raw.clusters.map((c) => ({ text: c.answers[0], count: c.count, aliases: c.answers })) };
    const sum = (r: Float32Array) => r.reduce((a, b) => a + b, 0);
    const human = sum(qaRewards(raw.human_baseline.join('\n'), converted).rewards);
    expect(human).toBeGreaterThan(0.3);
    expect(sum(qaRewards('banana\nthe moon\nsaxophone', converted).rewards)).toBe(0);
  });

  it('rejects unknown options', () => {
    expect(() => qaRewards('x', record, { traget: 'union' } as never)).toThrow(/did you mean "target"/);
  });
});
