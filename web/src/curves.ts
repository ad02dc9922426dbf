// Training curves of a job (:scalars, polled with its cursor), drawn so they are read at a glance:
// the train and validation series of one metric share a chart ("epoch/train_loss" and
// "epoch/valid_loss", or Keras' runs "train" and "validation" of "epoch_loss"), x ticks are whole
// steps or epochs, small values keep their digits, and step curves can be smoothed (TensorBoard's
// debiased exponential moving average; the raw curve stays faint behind).
import { api, ScalarSeries } from './api';
import { colour, LineChart, SeriesStyle } from './charts';
import { chartOf, ROLES, smooth } from './curve_model';
import { h, isTerminal, message } from './util';

interface Series { x: number[]; y: (number | null)[] }
interface Chart { chart: LineChart; labels: string[]; el: HTMLElement; isStep: boolean }

// Every chart's series on one x axis: the union of their steps (a series without a point there is
// null, and lines span the gap); step charts also carry each series smoothed with `weight`.
function aligned(byLabel: Map<string, Series>, labels: string[], isStep: boolean, weight: number) {
  const xs = [...new Set(labels.flatMap((l) => byLabel.get(l)!.x))].sort((a, b) => a - b);
  const ys = labels.flatMap((l) => {
    const s = byLabel.get(l)!;
    const at = new Map(s.x.map((x, i) => [x, s.y[i]]));
    const raw = xs.map((x) => (at.has(x) ? at.get(x)! : null));
    return isStep ? [raw, smooth(raw, weight)] : [raw];
  });
  return { xs, ys };
}

// The curves card of a job page: polls :scalars until the job ends; destroy() when the page is left.
export class CurvesCard {
  private series = new Map<string, Map<string, Series>>();  // chart -> label -> points
  private charts = new Map<string, Chart>();
  private cursor = '';
  private weight = 0.6;
  private tools: HTMLElement;

  constructor(private card: HTMLElement, private name: string,
    private later: (fn: () => void, ms: number) => void, private stopped: () => boolean) {
    const slider = h('input', { type: 'range', id: 'smoothing', min: 0, max: 0.99, step: 0.01, value: this.weight }) as HTMLInputElement;
    const shown = h('output', { for: 'smoothing', text: this.weight.toFixed(2) });
    this.tools = h('div.curve-tools', {}, h('label', { for: 'smoothing', text: 'Smoothing (step curves)' }), slider, shown);
    slider.addEventListener('input', () => {
      this.weight = Number(slider.value);
      shown.textContent = this.weight.toFixed(2);
      this.draw();
    });
    card.replaceChildren(this.title(), message('loading', 'Reading TensorBoard event files…'));
    this.poll();
  }

  resize() { this.charts.forEach((c) => c.chart.resize(c.el)); }
  destroy() { this.charts.forEach((c) => c.chart.destroy()); }

  private title() { return h('h2', { text: 'Training curves' }); }

  private add(s: ScalarSeries) {
    const { chart, label } = chartOf(s.run, s.tag);
    const byLabel = this.series.get(chart) ?? new Map<string, Series>();
    const cur = byLabel.get(label) ?? { x: [], y: [] };
    for (const [step, , value] of s.points) { cur.x.push(step); cur.y.push(value); }
    byLabel.set(label, cur);
    this.series.set(chart, byLabel);
  }

  // The chart of `key`, made again when a series joined it.
  private chartFor(key: string, labels: string[]): Chart {
    let c = this.charts.get(key);
    if (c && c.labels.join() === labels.join()) return c;
    c?.chart.destroy();
    c?.el.remove();
    const isStep = !key.startsWith('epoch') && !/(^|\/)epoch_/.test(key);
    const el = h('div.chart', { 'data-tag': key, 'data-series': labels.join(',') });
    this.card.append(el);
    const styles: SeriesStyle[] = isStep
      ? labels.flatMap((l, i) => [{ label: `${l} (raw)`, colour: colour(i), width: 1, faint: true }, { label: l, colour: colour(i) }])
      : labels.map((l, i) => ({ label: l, colour: colour(i) }));
    c = { chart: new LineChart(el, key, styles, isStep ? 'step' : 'epoch'), labels, el, isStep };
    this.charts.set(key, c);
    return c;
  }

  private draw() {
    for (const key of [...this.series.keys()].sort()) {
      const byLabel = this.series.get(key)!;
      const labels = [...byLabel.keys()].sort((a, b) => ROLES.indexOf(a) - ROLES.indexOf(b) || a.localeCompare(b));
      const c = this.chartFor(key, labels);
      const { xs, ys } = aligned(byLabel, labels, c.isStep, this.weight);
      c.chart.set(xs, ys);
    }
    this.tools.hidden = ![...this.charts.values()].some((c) => c.isStep);
  }

  private render(logDir: string | null, warnings: string[]) {
    if (this.series.size === 0) {
      this.card.replaceChildren(this.title(), message('empty', logDir
        ? `No scalars in ${logDir} yet; they appear as the job writes TensorBoard events.`
        : 'This job has no TensorBoard log dir (set baseOutputDirectory, or pass --tensorboard-dir).'));
      return;
    }
    if (this.card.querySelector('.state')) this.card.replaceChildren(this.title(), this.tools);
    this.draw();
    this.card.querySelector('.warnings')?.remove();
    if (warnings.length) this.card.append(h('div.warnings', { text: warnings.join('; ') }));
  }

  private async poll() {
    if (this.stopped()) return;
    try {
      const page = await api.scalars(this.name, this.cursor);
      if (this.stopped()) return;
      this.cursor = page.nextCursor;
      for (const s of page.series) this.add(s);
      this.render(page.logDir, page.warnings);
      if (page.more) this.later(() => this.poll(), 0);
      else if (!isTerminal(page.jobState)) this.later(() => this.poll(), 2000);
    } catch (e) {
      this.card.replaceChildren(this.title(), message('error', `Could not read scalars: ${(e as Error).message}`));
      this.later(() => this.poll(), 5000);
    }
  }
}
