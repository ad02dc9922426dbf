// Batch predictions (Vertex's batchPredictionJobs): the list with a create form (batch_create.ts),
// and a job's page: its state, progress from completionStats, input, output directory, error and
// partial failures, the custom job that runs it (its logs) when the job names one, Cancel and
// Delete. A server without the API answers the list with an error, shown as every page shows one.
import { api, BatchPredictionJob } from './api';
import { batchCreateCard } from './batch_create';
import { backingJobOf, progressOf } from './batch_model';
import type { Cleanup } from './util';
import { modelLink } from './names';
import { guardWrite } from './session';
import { durationOf, fmtTime, fmtUsd, h, idOf, isTerminal, message, stateBadge } from './util';

function progressBar(j: BatchPredictionJob): HTMLElement {
  const p = progressOf(j.completionStats);
  const done = j.state === 'JOB_STATE_SUCCEEDED';
  const bar = h('progress', { max: p.total || 1, value: p.total ? p.done : done ? 1 : 0, 'aria-label': 'progress' });
  return h('div.progress', { 'data-progress': p.fraction === null ? '' : p.fraction.toFixed(3) }, bar, h('span.sub', { text: ` ${p.text}` }));
}

export function batchPredictionsPage(app: HTMLElement, parent: string, params: URLSearchParams): Cleanup {
  let stopped = false;
  let timer = 0;
  const create = batchCreateCard(parent, params.get('model') ?? '');
  const body = h('div.table-wrap', {}, message('loading', 'Loading batch predictions…'));
  const open = h('button', { type: 'button', text: 'Create batch prediction', 'data-action': 'open-batch-create', onclick: () => create.open() });
  app.append(h('div.job-header', {}, h('h1', { text: 'Batch predictions' }), guardWrite(parent.split('/')[1], h('div.actions', {}, open))),
    create.el, body);
  if (params.get('create')) create.open();
  async function load() {
    try {
      const list = (await api.listBatchJobs(parent)).batchPredictionJobs ?? [];
      if (stopped) return;
      body.replaceChildren(list.length === 0
        ? message('empty', `No batch predictions in ${parent}. Create one from a model, or with "Create batch prediction".`)
        : h('table.jobs.batch', {},
          h('thead', {}, h('tr', {}, ...['Name', 'State', 'Model', 'Progress', 'Created', 'Duration'].map((t) => h('th', { text: t })))),
          h('tbody', {}, ...list.map((j) => h('tr', { 'data-batch': idOf(j.name) },
            h('td', {}, h('a', { href: `#/${j.name}`, text: j.displayName || idOf(j.name) }), h('div.sub', { text: idOf(j.name) })),
            h('td', {}, stateBadge(j.state)),
            h('td', {}, j.model ? modelLink(j.model) : '—'),
            h('td', { text: progressOf(j.completionStats).text }),
            h('td', { text: fmtTime(j.createTime) }), h('td', { text: durationOf(j) }))))));
    } catch (e) {
      if (!stopped) body.replaceChildren(message('error', `Could not list batch predictions: ${(e as Error).message}`));
    }
    if (!stopped) timer = window.setTimeout(load, 3000);
  }
  load();
  return () => { stopped = true; window.clearTimeout(timer); };
}

export function batchPredictionPage(app: HTMLElement, name: string): Cleanup {
  let stopped = false;
  let timer = 0;
  const list = `#/${name.replace(/\/batchPredictionJobs\/.*/, '/batchPredictionJobs')}`;
  const header = h('div.job-header', {}, message('loading', 'Loading batch prediction…'));
  const summary = h('section.card.summary');
  app.append(header, summary);

  async function load() {
    try {
      const j = await api.getBatchJob(name);
      if (stopped) return;
      renderHeader(j);
      renderSummary(j);
      if (!isTerminal(j.state)) timer = window.setTimeout(load, 2000);
    } catch (e) {
      if (!stopped) header.replaceChildren(h('a.back', { href: list, text: '← Batch predictions' }),
        message('error', `Could not load ${name}: ${(e as Error).message}`));
    }
  }

  function renderHeader(j: BatchPredictionJob) {
    const act = (fn: () => Promise<unknown>, after: () => void) => async (e: Event) => {
      const b = e.target as HTMLButtonElement;
      b.disabled = true;
      try { await fn(); after(); } catch (err) { alert((err as Error).message); b.disabled = false; }
    };
    const cancel = h('button.danger', { text: 'Cancel', 'data-action': 'cancel',
      disabled: isTerminal(j.state) || j.state === 'JOB_STATE_CANCELLING',
      onclick: act(() => api.cancelBatchJob(name), () => { window.clearTimeout(timer); load(); }) });
    const del = h('button', { text: 'Delete', 'data-action': 'delete', disabled: !isTerminal(j.state), title: 'only ended jobs can be deleted',
      onclick: act(async () => { if (confirm(`Delete ${j.displayName}? Its predictions stay.`)) await api.deleteBatchJob(name); },
        () => { location.hash = list; }) });
    header.replaceChildren(h('a.back', { href: list, text: '← Batch predictions' }),
      h('h1', {}, j.displayName || idOf(name), ' ', stateBadge(j.state)),
      guardWrite(name.split('/')[1], h('div.actions', {}, cancel, del)),
      j.error?.message ? message('error', j.error.message) : '');
  }

  function renderSummary(j: BatchPredictionJob) {
    const job = backingJobOf(j);
    const out = j.outputInfo?.gcsOutputDirectory;
    const r = j.dedicatedResources;
    summary.replaceChildren(h('h2', { text: 'Progress' }), progressBar(j), h('dl', {},
      h('dt', { text: 'Model' }), h('dd', {}, j.model ? modelLink(j.model, j.modelVersionId as string | undefined) : '—'),
      h('dt', { text: 'Input' }), h('dd.mono', { text: `${j.inputConfig?.instancesFormat ?? '?'}: ${(j.inputConfig?.gcsSource?.uris ?? []).join(', ')}` }),
      h('dt', { text: 'Output directory' }), h('dd.mono', { 'data-output': '', text: out ?? `${j.outputConfig?.gcsDestination?.outputUriPrefix ?? '—'} (not written yet)` }),
      h('dt', { text: 'Machines' }), h('dd', { text: `${r?.machineSpec?.machineType ?? '—'} · ${r?.startingReplicaCount ?? 1}–${r?.maxReplicaCount ?? r?.startingReplicaCount ?? 1} replicas` }),
      h('dt', { text: 'Created' }), h('dd', { text: fmtTime(j.createTime) }),
      h('dt', { text: 'Duration' }), h('dd', { text: durationOf(j) }),
      ...(j.trainyardInfo?.estimatedCostUsd !== undefined
        ? [h('dt', { text: 'Estimated cost' }), h('dd', { text: fmtUsd(j.trainyardInfo.estimatedCostUsd) })] : []),
      ...(job ? [h('dt', { text: 'Custom job' }), h('dd', {}, h('a', { href: `#/${job}`, 'data-link': 'job', text: `${idOf(job)} (logs)` }))] : []),
      h('dt', { text: 'Name' }), h('dd.mono', { text: name })),
    ...(j.partialFailures?.length ? [h('h3', { text: 'Partial failures' }),
      h('ul.failures', {}, ...j.partialFailures.map((f) => h('li', { text: f.message ?? `code ${f.code}` })))] : []));
  }

  load();
  return () => { stopped = true; window.clearTimeout(timer); };
}
