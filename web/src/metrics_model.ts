// A model's metrics.json (what a trainer writes next to its model; trainyard-bert's has
// `history`, `hyperparameters`, `train`, `validation` with `per_class` and `confusion_matrix`)
// turned into what the model page shows without ever printing a list of objects as one line of
// JSON: scalars as dotted rows, a list of per-epoch (or per-step) records as a history (charted,
// and a table), any other list of records as a table, a matrix as a table. No DOM: unit-tested in
// web/test/console_unit_test.mjs.

export interface MetricTable { key: string; columns: string[]; rows: string[][] }
export interface MetricHistory {
  key: string;
  x: string;                                // 'epoch' or 'step'
  xs: number[];
  series: [string, (number | null)[]][];    // every other numeric field, in first-seen order
}
export interface MetricsView { rows: [string, string][]; tables: MetricTable[]; histories: MetricHistory[] }

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isScalar = (v: unknown) => v === null || ['number', 'string', 'boolean'].includes(typeof v);

export function fmtMetric(v: unknown): string {
  if (typeof v === 'number') return String(+v.toPrecision(6));
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

function columnsOf(records: Record<string, unknown>[]): string[] {
  return [...new Set(records.flatMap((r) => Object.keys(r)))];
}

// A list of records whose every record has the same numeric x ('epoch' or 'step').
function historyOf(key: string, records: Record<string, unknown>[]): MetricHistory | null {
  const x = ['epoch', 'step'].find((k) => records.every((r) => typeof r[k] === 'number'));
  if (!x) return null;
  const names = columnsOf(records).filter((c) => c !== x && records.some((r) => typeof r[c] === 'number'));
  if (!names.length) return null;
  return {
    key, x, xs: records.map((r) => r[x] as number),
    series: names.map((n): [string, (number | null)[]] =>
      [n, records.map((r) => (typeof r[n] === 'number' && isFinite(r[n] as number) ? r[n] as number : null))]),
  };
}

function recordTable(key: string, records: Record<string, unknown>[]): MetricTable {
  const columns = columnsOf(records);
  // A record's label (e.g. per_class' "label") goes first.
  const first = columns.find((c) => ['label', 'class', 'name'].includes(c));
  const ordered = first ? [first, ...columns.filter((c) => c !== first)] : columns;
  return { key, columns: ordered, rows: records.map((r) => ordered.map((c) => (c in r ? fmtMetric(r[c]) : '—'))) };
}

// A matrix; its rows and columns named by `labels` when there are as many (a confusion matrix:
// rows are the true labels, columns the predicted ones).
function matrixTable(key: string, matrix: unknown[][], labels: string[] | null): MetricTable {
  const n = Math.max(...matrix.map((r) => r.length));
  const names = labels && labels.length === n && matrix.length === n ? labels : null;
  const corner = /confusion/i.test(key) ? 'true \\ predicted' : '';
  return {
    key, columns: [corner, ...Array.from({ length: n }, (_, i) => names?.[i] ?? String(i))],
    rows: matrix.map((r, i) => [names?.[i] ?? String(i), ...r.map(fmtMetric)]),
  };
}

function walk(value: unknown, key: string, labels: string[] | null, view: MetricsView) {
  if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) walk(v, key ? `${key}.${k}` : k, labels, view);
    return;
  }
  if (!Array.isArray(value) || value.every(isScalar)) {
    view.rows.push([key || '(value)', Array.isArray(value) ? value.map(fmtMetric).join(', ') : fmtMetric(value)]);
    return;
  }
  if (value.every(isObject)) {
    const records = value as Record<string, unknown>[];
    const history = historyOf(key, records);
    if (history) view.histories.push(history);
    view.tables.push(recordTable(key, records));
    return;
  }
  if (value.every((r) => Array.isArray(r) && r.every(isScalar))) {
    view.tables.push(matrixTable(key, value as unknown[][], labels));
    return;
  }
  view.rows.push([key, JSON.stringify(value)]);  // a mixed list: rare; the row wraps (CSS)
}

export function metricsViewOf(metrics: unknown): MetricsView {
  const view: MetricsView = { rows: [], tables: [], histories: [] };
  const top = isObject(metrics) && Array.isArray(metrics.labels) && metrics.labels.every(isScalar)
    ? (metrics.labels as unknown[]).map(String) : null;
  walk(metrics, '', top, view);
  return view;
}
