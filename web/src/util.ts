// Small DOM and formatting helpers shared by the pages.

type Child = Node | string | null | undefined | false;

// h('div.card', {onclick}, child, ...): an element with classes, attributes/handlers and children.
export function h(tag: string, attrs: Record<string, any> = {}, ...children: Child[]): HTMLElement {
  const [name, ...classes] = tag.split('.');
  const el = document.createElement(name || 'div');
  if (classes.length) el.className = classes.join(' ');
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

export const shortState = (s: string) => s.replace(/^(JOB|PIPELINE)_STATE_/, '');

export function stateBadge(state: string): HTMLElement {
  const s = shortState(state);
  return h(`span.badge.state-${s.toLowerCase()}`, { text: s, title: state });
}

export function fmtTime(iso?: string): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function fmtDuration(seconds: number): string {
  if (!isFinite(seconds) || seconds < 0) return '—';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

export function durationOf(job: { startTime?: string; endTime?: string }): string {
  if (!job.startTime) return '—';
  const end = job.endTime ? Date.parse(job.endTime) : Date.now();
  return fmtDuration((end - Date.parse(job.startTime)) / 1000);
}

export const fmtUsd = (v?: number) => (v === undefined ? '—' : `$${v < 0.01 && v > 0 ? v.toFixed(4) : v.toFixed(2)}`);

export const idOf = (name: string) => name.slice(name.lastIndexOf('/') + 1);

export function message(kind: 'loading' | 'empty' | 'error', text: string): HTMLElement {
  return h(`p.state.state-msg-${kind}`, { text, role: kind === 'error' ? 'alert' : 'status' });
}

export const isTerminal = (s: string) =>
  ['JOB_STATE_SUCCEEDED', 'JOB_STATE_FAILED', 'JOB_STATE_CANCELLED', 'JOB_STATE_EXPIRED',
   'JOB_STATE_PARTIALLY_SUCCEEDED', 'PIPELINE_STATE_SUCCEEDED', 'PIPELINE_STATE_FAILED',
   'PIPELINE_STATE_CANCELLED'].includes(s);

// "gs://bucket/a/b" -> ["bucket", "a/b"]; null for anything else.
export function splitGcs(uri: string): [string, string] | null {
  const m = uri.match(/^gs:\/\/([^/]+)\/?(.*)$/);
  return m ? [m[1], m[2]] : null;
}

// What a page returns to stop its timers and requests when the console leaves it.
export type Cleanup = () => void;
