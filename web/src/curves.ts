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

// The curves card of a job page; call stop() when the page is left.
export function curvesCard(card: HTMLElement, name: string, later: (fn: () => void, ms: number) => void,
  stopped: () => boolean) {
  const series = new Map<string, Map<string, Series>>();  // chart -> label -> points
  const charts = new Map<string, Chart>();
  let cursor = '';
  let weight = 0.6;
  const slider = h('input', { type: 'range', id: 'smoothing', min: 0, max: 0.99, step: 0.01, value: weight }) as HTMLInputElement;
  const shown = h('output', { for: 'smoothing', text: weight.toFixed(2) });
  const tools = h('div.curve-tools', {}, h('label', { for: 'smoothing', text: 'Smoothing (step curves)' }), slider, shown);
  slider.addEventListener('input', () => { weight = Number(slider.value); shown.textContent = weight.toFixed(2); draw(); });
  const title = () => h('h2', { text: 'Training curves' });

  function add(s: ScalarSeries) {
    const { chart, label } = chartOf(s.run, s.tag);
    const byLabel = series.get(chart) ?? new Map<string, Series>();
    const cur = byLabel.get(label) ?? { x: [], y: [] };
    for (const [step, , value] of s.points) { cur.x.push(step); cur.y.push(value); }
    byLabel.set(label, cur);
    series.set(chart, byLabel);
  }

  function chartFor(key: string, labels: string[]): Chart {
    let c = charts.get(key);
    if (c && c.labels.join() === labels.join()) return c;
    c?.chart.destroy();
    c?.el.remove();
    const isStep = !key.startsWith('epoch') && !/(^|\/)epoch_/.test(key);
    const el = h('div.chart', { 'data-tag': key, 'data-series': labels.join(',') });
    card.append(el);
    const styles: SeriesStyle[] = isStep
      ? labels.flatMap((l, i) => [{ label: `${l} (raw)`, colour: colour(i), width: 1, faint: true }, { label: l, colour: colour(i) }])
      : labels.map((l, i) => ({ label: l, colour: colour(i) }));
    c = { chart: new LineChart(el, key, styles, isStep ? 'step' : 'epoch'), labels, el, isStep };
    charts.set(key, c);
    return c;
  }

  // Every chart's series on one x axis (the union of their steps; a series without a point there
  // is null, and lines span the gap).
  function draw() {
    for (const key of [...series.keys()].sort()) {
      const byLabel = series.get(key)!;
      const labels = [...byLabel.keys()].sort((a, b) => ROLES.indexOf(a) - ROLES.indexOf(b) || a.localeCompare(b));
      const c = chartFor(key, labels);
      const xs = [...new Set(labels.flatMap((l) => byLabel.get(l)!.x))].sort((a, b) => a - b);
      const ys = labels.flatMap((l) => {
        const s = byLabel.get(l)!;
        const at = new Map(s.x.map((x, i) => [x, s.y[i]]));
        const raw = xs.map((x) => (at.has(x) ? at.get(x)! : null));
        return c.isStep ? [raw, smooth(raw, weight)] : [raw];
      });
      c.chart.set(xs, ys);
    }
    tools.hidden = ![...charts.values()].some((c) => c.isStep);
  }

  function render(logDir: string | null, warnings: string[]) {
    if (series.size === 0) {
      card.replaceChildren(title(), message('empty', logDir
        ? `No scalars in ${logDir} yet; they appear as the job writes TensorBoard events.`
        : 'This job has no TensorBoard log dir (set baseOutputDirectory, or pass --tensorboard-dir).'));
      return;
    }
    if (card.querySelector('.state')) card.replaceChildren(title(), tools);
    draw();
    card.querySelector('.warnings')?.remove();
    if (warnings.length) card.append(h('div.warnings', { text: warnings.join('; ') }));
  }

  async function poll() {
    if (stopped()) return;
    try {
      const page = await api.scalars(name, cursor);
      if (stopped()) return;
      cursor = page.nextCursor;
      for (const s of page.series) add(s);
      render(page.logDir, page.warnings);
      if (page.more) later(poll, 0);
      else if (!isTerminal(page.jobState)) later(poll, 2000);
    } catch (e) {
      card.replaceChildren(title(), message('error', `Could not read scalars: ${(e as Error).message}`));
      later(poll, 5000);
    }
  }

  card.replaceChildren(title(), message('loading', 'Reading TensorBoard event files…'));
  poll();
  return {
    resize: () => charts.forEach((c) => c.chart.resize(c.el)),
    destroy: () => charts.forEach((c) => c.chart.destroy()),
  };
}
