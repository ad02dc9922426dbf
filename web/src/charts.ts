// Charts drawn by uPlot: line charts of scalars (several series on one chart, e.g. a metric's
// train and validation curves), metric per trial, and a parallel-coordinates plot (each trial one
// series over the axes param1..paramN, metric). Axes are made to be read at a glance: x ticks are
// whole numbers (steps, epochs, trials), y ticks have as many digits as their spacing needs
// (a learning rate of 5e-4 reads 5e-4, not 0).
import uPlot from 'uplot';
import { fmtTick, fmtValue } from './format';

const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777'];
export const colour = (i: number) => PALETTE[i % PALETTE.length];

function widthOf(el: HTMLElement) {
  return Math.max(240, Math.min(el.clientWidth || 600, 900) - 8);
}

const INTEGER_INCRS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000,
  1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7];

// The x axis of steps, epochs or trials: whole-number ticks only.
export function integerXAxis(label: string): uPlot.Axis {
  return { label, incrs: INTEGER_INCRS, values: (_u, splits) => splits.map((s) => String(Math.round(s))) };
}

// A y axis whose labels show small and large values.
export function valueYAxis(): uPlot.Axis {
  return {
    size: 64,
    values: (_u, splits, _axis, _space, incr) => splits.map((s) => fmtTick(s, incr || (splits[1] - splits[0]) || 1)),
  };
}

export interface SeriesStyle { label: string; colour: string; width?: number; faint?: boolean }

// A line chart whose data grows: call set() with the x values and one array per series.
export class LineChart {
  private plot: uPlot;
  constructor(readonly el: HTMLElement, title: string, series: (string | SeriesStyle)[], xLabel = 'step') {
    const styles = series.map((s, i): SeriesStyle => (typeof s === 'string' ? { label: s, colour: colour(i) } : s));
    const opts: uPlot.Options = {
      title, width: widthOf(el), height: 220,
      scales: { x: { time: false } },
      axes: [integerXAxis(xLabel), valueYAxis()],
      series: [{ label: xLabel }, ...styles.map((s) => ({
        label: s.label, stroke: s.faint ? `${s.colour}40` : s.colour, width: s.width ?? 2,
        points: { show: !s.faint, size: 4 }, spanGaps: true, value: (_u: uPlot, v: number | null) => fmtValue(v),
      }))],
    };
    this.plot = new uPlot(opts, [[], ...styles.map(() => [])], el);
    el.dataset.points = '0';
  }
  set(x: number[], ys: (number | null)[][]) {
    this.plot.setData([x, ...ys] as uPlot.AlignedData);
    const root = this.plot.root.parentElement as HTMLElement;
    root.dataset.points = String(x.length);
  }
  resize(el: HTMLElement) { this.plot.setSize({ width: widthOf(el), height: 220 }); }
  destroy() { this.plot.destroy(); }
}

// Parallel coordinates: x = axis index, y = each axis normalised to [0, 1] (labels show ranges).
export function parallelCoordinates(el: HTMLElement, axes: string[], rows: number[][], best: number) {
  const mins = axes.map((_, a) => Math.min(...rows.map((r) => r[a])));
  const maxs = axes.map((_, a) => Math.max(...rows.map((r) => r[a])));
  const norm = (v: number, a: number) => (maxs[a] === mins[a] ? 0.5 : (v - mins[a]) / (maxs[a] - mins[a]));
  const x = axes.map((_, i) => i);
  const data = [x, ...rows.map((r) => r.map((v, a) => norm(v, a)))] as uPlot.AlignedData;
  return new uPlot({
    title: 'Parameters → metric (each line a trial; axes scaled to their range)',
    width: widthOf(el), height: 260,
    scales: { x: { time: false, range: [-0.1, axes.length - 0.9] }, y: { range: [-0.05, 1.05] } },
    legend: { show: false },
    axes: [
      { values: (_u, splits) => splits.map((s) => (Number.isInteger(s) && axes[s] !== undefined
        ? `${axes[s]} [${fmtValue(mins[s])}…${fmtValue(maxs[s])}]` : '')), splits: () => x, size: 40 },
      { show: false },
    ],
    series: [{}, ...rows.map((_, i) => ({
      stroke: i === best ? '#dc2626' : 'rgba(37, 99, 235, 0.45)', width: i === best ? 3 : 1.5,
      points: { show: true, size: 5 },
    }))],
  }, data, el);
}
