/**
 * SVG figures for reports: vega-lite specs compiled to vega and rendered to an SVG string in Node
 * (renderer "none": no browser, no canvas; text widths are estimated, so labels may sit a little off).
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { trailingMean } from './curves.js';

/** One point of a validation curve with its interval. */
export interface BandPoint {
  run: string;
  step: number;
  value: number;
  low?: number;
  high?: number;
}

const WIDTH = 520;
const HEIGHT = 260;
const CONFIG = Object.freeze({
  font: 'Helvetica, Arial, sans-serif',
  view: { stroke: null },
  axis: { grid: true, gridColor: '#e5e5e5', labelFontSize: 11, titleFontSize: 12 },
  legend: { labelFontSize: 11, titleFontSize: 11, orient: 'bottom', direction: 'horizontal', labelLimit: 320, symbolOpacity: 1, symbolStrokeWidth: 2 },
  title: { fontSize: 14, anchor: 'start' },
});

/** Renders a vega-lite spec to an SVG string. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

const runColor = { field: 'run', type: 'nominal', title: 'run' } as const;
const stepAxis = { field: 'step', type: 'quantitative', title: 'step' } as const;
/** Training steps count from 1: the axis spans the logged steps, neither padded to 0 nor rounded out. */
const traceStepAxis = { ...stepAxis, scale: { zero: false, nice: false } } as const;

/** What every figure shares: schema, title, size, look. */
function frame(title: string, width: number | { step: number } = WIDTH) {
  return { $schema: 'https://vega.github.io/schema/vega-lite/v6.json', title, width, height: HEIGHT, config: CONFIG };
}

/** Validation curves of several runs: a line per run and its interval as a shaded band. */
export function validationSpec(title: string, metric: string, points: readonly BandPoint[]): TopLevelSpec {
  const banded = points.filter((p) => Number.isFinite(p.low) && Number.isFinite(p.high));
  return {
    ...frame(title),
    layer: [
      {
        data: { values: banded },
        mark: { type: 'area', opacity: 0.2 },
        encoding: { x: stepAxis, y: { field: 'low', type: 'quantitative', title: metric, scale: { zero: false } }, y2: { field: 'high' }, color: runColor },
      },
      {
        data: { values: points },
        mark: { type: 'line', point: true, strokeWidth: 2 },
        encoding: { x: stepAxis, y: { field: 'value', type: 'quantitative', title: metric, scale: { zero: false } }, color: runColor },
      },
    ],
  } as TopLevelSpec;
}

/** A logged series per run (value i at step i + 1): the raw values faint, their trailing mean (window `window`) bold. */
export function traceSpec(title: string, series: string, runs: ReadonlyArray<{ run: string; values: ArrayLike<number> }>, window: number): TopLevelSpec {
  const values = runs.flatMap(({ run, values: raw }) => {
    const smooth = trailingMean(raw, window);
    return Array.from(raw, (value, i) => ({ run, step: i + 1, value, mean: smooth[i] })); // value i is step i + 1
  });
  return {
    ...frame(title),
    data: { values },
    layer: [
      {
        mark: { type: 'line', opacity: 0.25, strokeWidth: 1 },
        encoding: { x: traceStepAxis, y: { field: 'value', type: 'quantitative', title: series }, color: runColor },
      },
      { mark: { type: 'line', strokeWidth: 2.5 }, encoding: { x: traceStepAxis, y: { field: 'mean', type: 'quantitative' }, color: runColor } },
    ],
  } as TopLevelSpec;
}

/** Zero-reward fractions as grouped bars: one group per reward target, one bar per measure. */
export function zeroRewardSpec(title: string, rows: ReadonlyArray<{ target: string; measure: string; fraction: number }>): TopLevelSpec {
  return {
    ...frame(title, { step: 48 }),
    data: { values: rows },
    mark: 'bar',
    encoding: {
      x: { field: 'target', type: 'nominal', title: null, axis: { labelAngle: 0 } },
      xOffset: { field: 'measure' },
      y: { field: 'fraction', type: 'quantitative', title: 'all S candidates earn 0', axis: { format: '%' }, scale: { domain: [0, 1] } },
      color: { field: 'measure', type: 'nominal', title: null },
    },
  } as TopLevelSpec;
}
