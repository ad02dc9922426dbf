// Number formats of the charts' axes and legends, and a resource's creator (no DOM: unit-tested in
// web/test/console_unit_test.mjs).

// A tick label for `v` among ticks `incr` apart: plain decimals with as many places as the spacing
// needs, or exponent form when the ticks are less than 1e-3 apart or reach 1e6 (a learning-rate
// axis reads 0, 2.5e-4, 5e-4, 7.5e-4, 1e-3 rather than 0, 0, 0, 0, 0).
export function fmtTick(v: number, incr: number): string {
  if (v === 0) return '0';
  const step = Math.abs(incr) || Math.abs(v);
  if (step < 1e-3 || Math.abs(v) >= 1e6) {
    const exp = Math.floor(Math.log10(Math.abs(v)));
    const digits = Math.min(3, placesOf(step / 10 ** exp));
    return v.toExponential(digits).replace(/\.?0+e/, 'e').replace('e+', 'e');
  }
  return v.toFixed(placesOf(step));
}

// The decimal places that write `incr` exactly (at most 8): 0.25 -> 2, 20 -> 0.
function placesOf(incr: number): number {
  const step = Math.abs(incr);
  for (let p = 0; p < 8; p++) {
    const scaled = step * 10 ** p;
    if (Math.abs(scaled - Math.round(scaled)) < 1e-6 * Math.max(1, scaled)) return p;
  }
  return 8;
}

// A value in a legend or a table: 4 significant digits.
export const fmtValue = (v: number | null | undefined) =>
  v === null || v === undefined || !isFinite(v) ? '—' : Math.abs(v) < 1e-3 && v !== 0 ? v.toExponential(2) : String(+v.toPrecision(4));

// Who created a resource (trainyardInfo.creator), in one line: "ana (CI) · token 0123456789abcdef on
// p1 · from 10.0.0.7", "anonymous (server without --auth) · from 127.0.0.1", or "—" for a resource
// stored before creators were recorded. Structurally typed, so this module imports nothing.
export function fmtCreator(c?: { anonymous?: boolean; tokenId?: string; project?: string; owner?: string;
  description?: string; callerIp?: string }): string {
  if (!c) return '—';
  const who = c.anonymous ? 'anonymous (server without --auth)'
    : [c.owner && c.description ? `${c.owner} (${c.description})` : c.owner || c.description,
      `token ${c.tokenId ?? '?'} on ${c.project ?? '?'}`].filter(Boolean).join(' · ');
  return c.callerIp ? `${who} · from ${c.callerIp}` : who;
}

// "1 model", "2 models"; `many` for irregular plurals.
export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

// What a location holds, for the picker: "3 jobs, 1 model" (GET /v1/projects' resourceCounts).
const KIND_WORDS: Record<string, [string, string]> = {
  customJobs: ['job', 'jobs'], hyperparameterTuningJobs: ['HP-tuning job', 'HP-tuning jobs'],
  trainingPipelines: ['pipeline', 'pipelines'], models: ['model', 'models'], endpoints: ['endpoint', 'endpoints'],
  batchPredictionJobs: ['batch prediction', 'batch predictions'], jobs: ['AI Platform job', 'AI Platform jobs'],
};
export function describeCounts(counts: Record<string, number>): string {
  return Object.entries(counts).map(([k, n]) => (KIND_WORDS[k] ? plural(n, ...KIND_WORDS[k]) : `${n} ${k}`)).join(', ');
}

// A duration in seconds as a latency: "87 ms", "1.25 s"; "—" for none.
export function fmtLatency(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !isFinite(seconds)) return '—';
  return seconds < 1 ? `${+(seconds * 1000).toPrecision(3)} ms` : `${+seconds.toPrecision(3)} s`;
}
