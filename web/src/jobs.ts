// Jobs list: filter by state, name and label (the server's AIP-160 filter), pages, auto-refresh.
import { api, CustomJob } from './api';
import type { Cleanup } from './util';
import { durationOf, fmtTime, fmtUsd, h, idOf, message, stateBadge } from './util';

const STATES = ['', 'QUEUED', 'PENDING', 'RUNNING', 'CANCELLING', 'SUCCEEDED', 'FAILED', 'CANCELLED'];
const PAGE_SIZE = 20;

export function machineOf(job: CustomJob): string {
  return job.jobSpec.workerPoolSpecs
    .map((p) => {
      const m = p.machineSpec ?? {};
      const acc = m.acceleratorCount ? ` + ${m.acceleratorCount}× ${m.acceleratorType}` : '';
      return `${p.replicaCount ?? 1}× ${m.machineType ?? '?'}${acc}`;
    })
    .join(', ');
}

// The server filter for the form's fields: state, display name (substring via `:`), a label k=v.
function filterOf(state: string, name: string, label: string): string {
  const parts: string[] = [];
  if (state) parts.push(`state="JOB_STATE_${state}"`);
  if (name) parts.push(`display_name:"${name.replace(/"/g, '')}"`);
  const kv = label.match(/^\s*([^=\s]+)\s*=\s*(.*?)\s*$/);
  if (kv) parts.push(`labels.${kv[1]}="${kv[2].replace(/"/g, '')}"`);
  return parts.join(' AND ');
}

export function jobsPage(app: HTMLElement, parent: string, params: URLSearchParams): Cleanup {
  const state = params.get('state') ?? '';
  const name = params.get('name') ?? '';
  const label = params.get('label') ?? '';
  const tokens: string[] = [''];  // page tokens of the pages seen, for "previous"
  let page = 0;
  const body = h('div.table-wrap');
  const pager = h('div.pager');
  const status = h('span.refresh', { text: '' });
  const form = h('form.filters', {
    onsubmit: (e: Event) => {
      e.preventDefault();
      const f = new FormData(form as HTMLFormElement);
      const p = new URLSearchParams();
      for (const k of ['state', 'name', 'label']) if (f.get(k)) p.set(k, String(f.get(k)));
      location.hash = `#/${parent}/customJobs?${p}`;
    },
  },
    h('select', { name: 'state', 'aria-label': 'state' },
      ...STATES.map((s) => h('option', { value: s, text: s || 'any state', selected: s === state }))),
    h('input', { name: 'name', placeholder: 'display name contains', value: name, 'aria-label': 'name' }),
    h('input', { name: 'label', placeholder: 'label key=value', value: label, 'aria-label': 'label' }),
    h('button', { type: 'submit', text: 'Filter' }));
  app.append(h('h1', { text: 'Custom jobs' }), form, status, body, pager);
  body.append(message('loading', 'Loading jobs…'));

  let timer = 0;
  let stopped = false;
  async function load() {
    window.clearTimeout(timer);
    try {
      const res = await api.listJobs(parent, filterOf(state, name, label), PAGE_SIZE, tokens[page]);
      if (stopped) return;
      render(res.customJobs ?? [], res.nextPageToken ?? '');
      status.textContent = `updated ${new Date().toLocaleTimeString()} · refreshes every 3 s`;
    } catch (e) {
      if (stopped) return;
      body.replaceChildren(message('error', `Could not list jobs: ${(e as Error).message}`));
    }
    if (!stopped) timer = window.setTimeout(load, 3000);
  }

  function render(jobs: CustomJob[], next: string) {
    if (jobs.length === 0) {
      body.replaceChildren(message('empty', page === 0 && !state && !name && !label
        ? `No custom jobs in ${parent} yet. Submit one with: trainyard ai custom-jobs create …`
        : 'No jobs match these filters.'));
    } else {
      body.replaceChildren(h('table.jobs', {},
        h('thead', {}, h('tr', {}, ...['Name', 'State', 'Created', 'Duration', 'Machines', 'Est. cost', 'Labels']
          .map((t) => h('th', { text: t })))),
        h('tbody', {}, ...jobs.map((j) => h('tr', { 'data-job': idOf(j.name) },
          h('td', {}, h('a', { href: `#/${j.name}`, text: j.displayName || idOf(j.name) }),
            h('div.sub', { text: idOf(j.name) })),
          h('td', {}, stateBadge(j.state)),
          h('td', { text: fmtTime(j.createTime) }),
          h('td', { text: durationOf(j) }),
          h('td.machine', { text: machineOf(j) }),
          h('td', { text: fmtUsd(j.trainyardInfo?.estimatedCostUsd) }),
          h('td.labels', {}, ...Object.entries(j.labels ?? {}).map(([k, v]) => h('span.label', { text: `${k}=${v}` }))))))));
    }
    if (next) tokens[page + 1] = next;
    pager.replaceChildren(
      h('button', { text: '← Previous', disabled: page === 0, onclick: () => { page--; load(); } }),
      h('span', { text: ` page ${page + 1} ` }),
      h('button', { text: 'Next →', disabled: !next, onclick: () => { page++; load(); } }));
  }

  load();
  return () => { stopped = true; window.clearTimeout(timer); };
}
