// Charts drawn by uPlot: line charts of scalars (one per tag), metric per trial, and a
// parallel-coordinates plot (each trial one series over the axes param1..paramN, metric).
import uPlot from 'uplot';

const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777'];
export const colour = (i: number) => PALETTE[i % PALETTE.length];

function widthOf(el: HTMLElement) {
  return Math.max(280, Math.min(el.clientWidth || 600, 900) - 8);
}

// A line chart whose data grows: call set() with the full arrays on every update.
export class LineChart {
  private plot: uPlot;
  constructor(el: HTMLElement, title: string, seriesLabels: string[], xLabel = 'step') {
    const opts: uPlot.Options = {
      title, width: widthOf(el), height: 220,
      scales: { x: { time: false } },
      axes: [{ label: xLabel }, {}],
      series: [{ label: xLabel }, ...seriesLabels.map((l, i) => ({
        label: l, stroke: colour(i), width: 2, points: { show: true, size: 4 }, spanGaps: true,
      }))],
    };
    this.plot = new uPlot(opts, [[], ...seriesLabels.map(() => [])], el);
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
  const fmt = (v: number) => (Math.abs(v) >= 1000 || (Math.abs(v) < 0.01 && v !== 0) ? v.toExponential(2) : +v.toFixed(3));
  return new uPlot({
    title: 'Parameters → metric (each line a trial; axes scaled to their range)',
    width: widthOf(el), height: 260,
    scales: { x: { time: false, range: [-0.1, axes.length - 0.9] }, y: { range: [-0.05, 1.05] } },
    legend: { show: false },
    axes: [
      { values: (_u, splits) => splits.map((s) => (Number.isInteger(s) && axes[s] !== undefined
        ? `${axes[s]} [${fmt(mins[s])}…${fmt(maxs[s])}]` : '')), splits: () => x, size: 40 },
      { show: false },
    ],
    series: [{}, ...rows.map((_, i) => ({
      stroke: i === best ? '#dc2626' : 'rgba(37, 99, 235, 0.45)', width: i === best ? 3 : 1.5,
      points: { show: true, size: 5 },
    }))],
  }, data, el);
}
