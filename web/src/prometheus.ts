// The serving figures of an endpoint from the server's `GET /metrics` (Prometheus text format
// 0.0.4; docs/console.md#prometheus-metrics): replicas, healthy replicas, predictions in flight,
// predictions, failures and their summed seconds per deployed model. No DOM: unit-tested in
// web/test/console_unit_test.mjs.

export interface Sample { name: string; labels: Record<string, string>; value: number }

// One sample line: `name{label="value",...} value [timestamp]`; null for anything else.
function parseLine(line: string): Sample | null {
  const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(\s+\S+)?$/);
  if (!m) return null;
  const labels: Record<string, string> = {};
  if (m[2]) {
    // label="value" pairs; values escape \\, \" and \n.
    const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/g;
    const body = m[2].slice(1, -1);
    let consumed = 0;
    for (let p = re.exec(body); p; p = re.exec(body)) {
      if (p.index !== consumed) return null;
      labels[p[1]] = p[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
      consumed = re.lastIndex;
    }
    if (consumed !== body.trim().length) return null;
  }
  const value = m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]);
  return { name: m[1], labels, value };
}

// Every sample of a text exposition; comments, blank and malformed lines are skipped.
export function parsePrometheus(text: string): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const s = parseLine(line);
    if (s) out.push(s);
  }
  return out;
}

export interface ServingFigures {
  replicas: number; healthyReplicas: number; inFlight: number;
  predictions: number; failures: number; seconds: number;
  meanLatencySeconds: number | null;  // seconds / predictions; null before the first prediction
}

const FAMILIES: Record<string, keyof ServingFigures> = {
  trainyard_serving_replicas: 'replicas',
  trainyard_serving_healthy_replicas: 'healthyReplicas',
  trainyard_serving_in_flight: 'inFlight',
  trainyard_predictions_total: 'predictions',
  trainyard_prediction_failures_total: 'failures',
  trainyard_prediction_seconds_total: 'seconds',
};

const empty = (): ServingFigures =>
  ({ replicas: 0, healthyReplicas: 0, inFlight: 0, predictions: 0, failures: 0, seconds: 0, meanLatencySeconds: null });

// The figures of `endpoint` (its full name; a label holding only its id matches too), by deployed
// model id. Deployed models without samples are absent.
export function servingFigures(samples: Sample[], endpoint: string): Map<string, ServingFigures> {
  const id = endpoint.slice(endpoint.lastIndexOf('/') + 1);
  const out = new Map<string, ServingFigures>();
  for (const s of samples) {
    const field = FAMILIES[s.name];
    const e = s.labels.endpoint;
    if (!field || (e !== endpoint && e !== id) || s.labels.deployed_model === undefined) continue;
    const f = out.get(s.labels.deployed_model) ?? empty();
    (f[field] as number) += s.value;
    out.set(s.labels.deployed_model, f);
  }
  for (const f of out.values()) f.meanLatencySeconds = f.predictions > 0 ? f.seconds / f.predictions : null;
  return out;
}

// The figures of every deployed model of an endpoint added up (the endpoints list).
export function totalOf(figures: Map<string, ServingFigures>): ServingFigures {
  const t = empty();
  for (const f of figures.values()) {
    for (const k of Object.values(FAMILIES)) (t[k] as number) += f[k] as number;
  }
  t.meanLatencySeconds = t.predictions > 0 ? t.seconds / t.predictions : null;
  return t;
}
