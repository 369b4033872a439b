import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { seriesOf } from '../lib/eval/bootstrap.js';
import { buildReport, writeReport, type ReportRun } from '../lib/eval/report.js';
import { formatInterval, markdownTable } from '../lib/eval/report-markdown.js';
import { renderSvg, traceSpec, validationSpec } from '../lib/eval/report-svg.js';
import { GrpoError } from '../lib/errors.js';

interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  text: string;
}

/** A strict little XML parser: throws on unbalanced or mismatched tags. */
function parseXml(xml: string): XmlNode {
  const root: XmlNode = { name: '#root', attrs: {}, children: [], text: '' };
  const stack = [root];
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"]*")*)\s*(\/?)>|([^<]+)/gy;
  for (let m = tag.exec(xml); m; m = tag.exec(xml)) {
    if (m[5] !== undefined) {
      stack[stack.length - 1].text += m[5];
      continue;
    }
    const [, closing, name, rawAttrs, selfClosing] = m;
    if (closing) {
      const open = stack.pop();
      if (open?.name !== name) throw new Error(`</${name}> closes <${open?.name}>`);
      continue;
    }
    const attrs = Object.fromEntries([...rawAttrs.matchAll(/([\w:-]+)="([^"]*)"/g)].map((a) => [a[1], a[2]]));
    const node = { name, attrs, children: [], text: '' };
    stack[stack.length - 1].children.push(node);
    if (!selfClosing) stack.push(node);
  }
  if (tag.lastIndex !== 0 || stack.length !== 1) throw new Error(`malformed XML near offset ${tag.lastIndex}`);
  return root.children[0];
}

const all = (node: XmlNode): XmlNode[] => [node, ...node.children.flatMap(all)];
const marks = (svg: XmlNode, kind: string) => all(svg).filter((n) => n.attrs.class?.startsWith(`mark-${kind} role-mark`));
const texts = (svg: XmlNode) => all(svg).filter((n) => n.name === 'text').map((n) => n.text);

function curve(run: string, values: number[]) {
  return values.map((value, i) => ({ step: i * 100, time: i * 420, value, low: value - 0.02, high: value + 0.02, run }));
}

const runs: ReportRun[] = [
  {
    name: 'baseline',
    validation: { recall: curve('baseline', [0.1, 0.2, 0.25, 0.3]) },
    traces: { reward: Array.from({ length: 120 }, (_, i) => i / 120) },
    final: { recall: seriesOf([0.2, 0.4, 0.3, 0.5]), length: seriesOf([210, 190, 230, 180]) },
  },
  {
    name: 'candidate',
    validation: { recall: curve('candidate', [0.1, 0.3, 0.35, 0.4]) },
    traces: { reward: Array.from({ length: 120 }, (_, i) => 0.2 + i / 120) },
    final: { recall: seriesOf([0.3, 0.5, 0.3, 0.6]), length: seriesOf([200, 180, 220, 170]) },
  },
];

describe('SVG figures', () => {
  it('renders in Node without a canvas and contains one line and one band per run', async () => {
    const points = runs.flatMap((run) => run.validation!.recall.map((p) => ({ ...p, run: run.name })));
    const svg = parseXml(await renderSvg(validationSpec('Validation recall', 'recall', points)));
    expect(svg.name).toBe('svg');
    const lines = marks(svg, 'line').flatMap((g) => g.children.filter((c) => c.name === 'path'));
    expect(lines).toHaveLength(2);
    for (const [i, run] of ['baseline', 'candidate'].entries()) {
      expect(lines[i].attrs['aria-label']).toContain(`run: ${run}`);
      expect(lines[i].attrs.d.match(/L/g)).toHaveLength(3); // four validation points
    }
    expect(marks(svg, 'area').flatMap((g) => g.children)).toHaveLength(2);
    expect(texts(svg)).toEqual(expect.arrayContaining(['baseline', 'candidate', 'Validation recall', 'step']));
  });
});

describe('buildReport', () => {
  it('markdown tables with intervals, paired differences, steps-to-target and figures', async () => {
    const report = await buildReport({ title: 'Test report', runs, diagnostics: { zeroRewards: { 'respondent row': { cells: 0.55, requests: 0.2 }, union: { cells: 0.124, requests: 0.01 } } } }, { bootstrap: { resamples: 300 } });
    const md = report.markdown;
    expect(md).toMatch(/^# Test report/);
    expect(md).toMatch(/\| recall \| 0\.350 \[[0-9.]+, [0-9.]+\] \| 0\.425 \[/);
    // paired: recall in points (+7.5), length in its own units (−10)
    expect(md).toMatch(/\| recall \| candidate \| \+7\.50 \[[0-9.]+, [0-9.]+\] \| points \|/);
    expect(md).toMatch(/\| length \| candidate \| -10\.000 \[-10\.000, -10\.000\] \| metric units \|/);
    // baseline reaches 0.3 at step 300; candidate crosses 0.3 at step 100
    expect(md).toMatch(/\| candidate \| 0\.300 \| 100 \| 0\.33 \| 420 \| 0\.33 \|/);
    expect(md).toContain('| reward | candidate | 120 |');
    expect(md).toContain('| union | 0.124 | 0.010 |');
    const files = report.figures.map((f) => f.file);
    expect(files).toEqual(['validation-recall.svg', 'trace-reward.svg', 'zero-rewards.svg']);
    for (const file of files) expect(md).toContain(`](${file})`);
    for (const f of report.figures) expect(parseXml(f.svg).name).toBe('svg');
    const bars = marks(parseXml(report.figures[2].svg), 'rect').flatMap((g) => g.children);
    expect(bars).toHaveLength(4);
  });

  it('steps to a target of 0 are "not defined", not a speed-up', async () => {
    // the baseline stays at 0 up to step 1000; the other run is at 0 at its first validation, step 200
    const zeroRuns: ReportRun[] = [
      { name: 'stuck', validation: { recall: [{ step: 0, value: 0 }, { step: 1000, value: 0 }] } },
      { name: 'late', validation: { recall: [{ step: 200, value: 0 }, { step: 600, value: 0.1 }] } },
    ];
    const { markdown } = await buildReport({ title: 'Zero', runs: zeroRuns });
    expect(markdown).toContain('| late | 0.000 | not defined | — | — | — |');
    expect(markdown).toContain('Not defined: stuck ended no better than its first validation');
    expect(markdown).not.toMatch(/\| late \| 0\.000 \| 200 \| 0\.20 \|/);
  });

  it('trace figures start their x-axis at step 1: value i is step i + 1', async () => {
    const spec = traceSpec('reward per step', 'reward', [{ run: 'a', values: Array.from({ length: 120 }, (_, i) => i / 120) }], 10);
    expect((spec as { data: { values: Array<{ step: number }> } }).data.values.map((p) => p.step).slice(0, 2)).toEqual([1, 2]);
    const svg = parseXml(await renderSvg(spec));
    const labels = texts(svg);
    expect(labels).toContain('120');
    expect(labels).not.toContain('0'); // no step-0 tick: the axis spans steps 1 to 120
    const path = marks(svg, 'line')[0].children.find((c) => c.name === 'path')!.attrs.d;
    const xs = [...path.matchAll(/[ML](-?[0-9.]+),/g)].map((m) => Number(m[1]));
    expect([xs[0], xs[xs.length - 1]]).toEqual([0, 520]); // step 1 at the left edge, step 120 at the right
  });

  it('writes report.md and the SVG files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'grpo-report-'));
    const report = await buildReport({ title: 'Files', runs: runs.slice(0, 1) });
    const written = await writeReport(report, dir);
    expect(written.map((p) => p.slice(dir.length + 1))).toEqual(['report.md', 'validation-recall.svg', 'trace-reward.svg']);
    expect(readFileSync(join(dir, 'report.md'), 'utf8')).toBe(report.markdown);
  });

  it('rejects bad input with GrpoError', async () => {
    await expect(buildReport({ title: 'x', runs: [] })).rejects.toThrow(GrpoError);
    await expect(buildReport({ title: 'x', runs: [runs[0], runs[0]] })).rejects.toThrow(/distinct/);
    await expect(buildReport({ title: 'x', runs, baseline: 'nope' })).rejects.toThrow(/baseline/);
    await expect(buildReport({ title: 'x', runs }, { windw: 3 } as object)).rejects.toThrow(/did you mean "window"/);
  });

  it('markdown helpers', () => {
    expect(formatInterval({ estimate: 1.234, low: 0.5, high: 2, level: 0.95, resamples: 10 }, 2, true)).toBe('+1.23 [0.50, 2.00]');
    expect(formatInterval({ estimate: NaN, low: NaN, high: NaN, level: 0.95, resamples: 0 })).toBe('— [—, —]');
    expect(markdownTable(['a', 'b'], [['x|y', '1']])).toBe('| a | b |\n|---|---:|\n| x\\|y | 1 |');
  });
});
