// A model version's metrics.json on its page (metrics_model.ts decides what is what): a training
// history as charts — the train and validation series of one metric on one chart, as on the job
// page — and as a table; per-class figures and a confusion matrix as tables; the rest as dotted
// rows. Wide tables scroll inside their box: nothing makes the page wider than the screen.
import { LineChart } from './charts';
import { chartOf, ROLES } from './curve_model';
import { MetricHistory, MetricTable, metricsViewOf } from './metrics_model';
import { h, message } from './util';

// A dotted key that may break after each dot on a narrow screen.
const keyParts = (key: string) => key.split('.').flatMap((part, i) => (i ? [h('wbr'), `.${part}`] : [part]));

function table(t: MetricTable): HTMLElement {
  return h('div.table-wrap', {}, h('table.metric-table', { 'data-metric-table': t.key },
    h('thead', {}, h('tr', {}, ...t.columns.map((c) => h('th', { text: c })))),
    h('tbody', {}, ...t.rows.map((r) => h('tr', {}, ...r.map((c, i) => h(i === 0 ? 'th' : 'td', { text: c })))))));
}

// One chart per metric of a history: "train_loss" and "valid_loss" are the train and valid lines
// of "loss".
function chartsOf(box: HTMLElement, hist: MetricHistory): LineChart[] {
  const groups = new Map<string, [string, (number | null)[]][]>();
  for (const [name, ys] of hist.series) {
    const { chart, label } = chartOf('.', name);
    groups.set(chart, [...(groups.get(chart) ?? []), [label, ys]]);
  }
  const rank = (l: string) => (ROLES.includes(l) ? ROLES.indexOf(l) : ROLES.length);
  return [...groups.entries()].map(([key, series]) => {
    series.sort((a, b) => rank(a[0]) - rank(b[0]));
    const el = h('div.chart', { 'data-history': key, 'data-series': series.map(([l]) => l).join(',') });
    box.append(el);  // in the page first: the chart takes its box's width
    const chart = new LineChart(el, key, series.map(([l]) => l), hist.x);
    chart.set(hist.xs, series.map(([, ys]) => ys));
    return chart;
  });
}

// Draws metrics.json (`text`, null: there is none) into `box`; returns its charts (to resize on
// a window resize and destroy when the page is left).
export function renderMetrics(box: HTMLElement, text: string | null): LineChart[] {
  if (text === null) {
    box.replaceChildren(message('empty', 'This version has no metrics.json (write one into AIP_MODEL_DIR).'));
    return [];
  }
  let parsed: unknown;
  try { parsed = JSON.parse(text); } catch {
    box.replaceChildren(message('error', 'metrics.json is not JSON.'), h('pre.json', { text }));
    return [];
  }
  const view = metricsViewOf(parsed);
  box.replaceChildren(h('table.metrics', {}, ...view.rows.map(([k, v]) =>
    h('tr', { 'data-metric': k }, h('th', {}, ...keyParts(k)), h('td', { text: v })))));
  const charts: LineChart[] = [];
  for (const hist of view.histories) {
    const section = h('div.history', { 'data-history-of': hist.key });
    box.append(h('h4', { text: `${hist.key} (per ${hist.x})` }), section);
    charts.push(...chartsOf(section, hist));
  }
  for (const t of view.tables) box.append(h('h4', { text: t.key }), table(t));
  return charts;
}
