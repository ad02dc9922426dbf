// Training pipelines: the list, and a pipeline's page with its backing custom job (state,
// replicas, a link to its logs and curves) and the model it registered; links go both ways (the
// job page and the model page link back here).
import { api, CustomJob, Pipeline, WorkerPoolSpec } from './api';
import { fmtCreator } from './format';
import { machineOf } from './jobs';
import type { Cleanup } from './util';
import { guardWrite } from './session';
import { durationOf, fmtTime, h, idOf, isTerminal, message, stateBadge } from './util';

const poolsOf = (p: Pipeline) => ((p.trainingTaskInputs?.workerPoolSpecs ?? []) as WorkerPoolSpec[]);
const machinesOf = (p: Pipeline) => machineOf({ jobSpec: { workerPoolSpecs: poolsOf(p) } } as CustomJob);

// A link to the model version a pipeline registered, or '—'.
export function modelLink(p: Pipeline): HTMLElement | string {
  const m = p.modelToUpload;
  if (!m?.name) return m?.displayName ? `${m.displayName} (not registered yet)` : '—';
  return h('a', { href: `#/${m.name}?version=${m.versionId ?? ''}`, 'data-link': 'model', text: `${m.displayName ?? idOf(m.name)} v${m.versionId ?? '?'}` });
}

export function pipelinesPage(app: HTMLElement, parent: string): Cleanup {
  let stopped = false;
  let timer = 0;
  const body = h('div.table-wrap', {}, message('loading', 'Loading training pipelines…'));
  app.append(h('h1', { text: 'Training pipelines' }), body);
  async function load() {
    try {
      const res = await api.listPipelines(parent, 50, '');
      if (stopped) return;
      const list = res.trainingPipelines ?? [];
      body.replaceChildren(list.length === 0
        ? message('empty', `No training pipelines in ${parent}. Train a new model with "+ Create".`)
        : h('table.jobs.pipelines', {},
          h('thead', {}, h('tr', {}, ...['Name', 'State', 'Created', 'Duration', 'Model', 'Machines'].map((t) => h('th', { text: t })))),
          h('tbody', {}, ...list.map((p) => h('tr', { 'data-pipeline': idOf(p.name) },
            h('td', {}, h('a', { href: `#/${p.name}`, text: p.displayName || idOf(p.name) }), h('div.sub', { text: idOf(p.name) })),
            h('td', {}, stateBadge(p.state)), h('td', { text: fmtTime(p.createTime) }), h('td', { text: durationOf(p) }),
            h('td', {}, modelLink(p)), h('td.machine', { text: machinesOf(p) }))))));
    } catch (e) {
      if (!stopped) body.replaceChildren(message('error', `Could not list training pipelines: ${(e as Error).message}`));
    }
    if (!stopped) timer = window.setTimeout(load, 3000);
  }
  load();
  return () => { stopped = true; window.clearTimeout(timer); };
}

export function pipelinePage(app: HTMLElement, name: string): Cleanup {
  let stopped = false;
  let timer = 0;
  const list = `#/${name.replace(/\/trainingPipelines\/.*/, '/trainingPipelines')}`;
  const header = h('div.job-header', {}, message('loading', 'Loading training pipeline…'));
  const summary = h('section.card.summary');
  const job = h('section.card.backing-job');
  const spec = h('section.card.spec');
  app.append(header, h('div.grid', {}, summary, job), spec);

  async function load() {
    try {
      const p = await api.getPipeline(name);
      if (stopped) return;
      render(p);
      const jobName = p.trainingTaskMetadata?.backingCustomJob;
      if (jobName) renderJob(await api.getJob(jobName));
      else job.replaceChildren(h('h2', { text: 'Backing custom job' }), message('empty', 'Not started yet.'));
      if (!isTerminal(p.state)) timer = window.setTimeout(load, 2000);
    } catch (e) {
      if (stopped) return;
      header.replaceChildren(h('a.back', { href: list, text: '← Training pipelines' }),
        message('error', `Could not load ${name}: ${(e as Error).message}`));
    }
  }

  function render(p: Pipeline) {
    const cancel = h('button.danger', { text: 'Cancel', disabled: isTerminal(p.state) || p.state === 'PIPELINE_STATE_CANCELLING',
      onclick: async () => { try { await api.cancelPipeline(name); load(); } catch (e) { alert((e as Error).message); } } });
    const del = h('button', { text: 'Delete', disabled: !isTerminal(p.state), title: 'only ended pipelines can be deleted',
      onclick: async () => {
        if (!confirm(`Delete ${p.displayName}? Its job and model stay.`)) return;
        try { await api.deletePipeline(name); location.hash = list; } catch (e) { alert((e as Error).message); }
      } });
    header.replaceChildren(h('a.back', { href: list, text: '← Training pipelines' }),
      h('h1', {}, p.displayName || idOf(name), ' ', stateBadge(p.state)),
      guardWrite(name.split('/')[1], h('div.actions', {}, cancel, del)),
      p.error?.message ? message('error', p.error.message) : '');
    summary.replaceChildren(h('h2', { text: 'Pipeline' }), h('dl', {},
      h('dt', { text: 'Created' }), h('dd', { text: fmtTime(p.createTime) }),
      h('dt', { text: 'Created by' }), h('dd', { text: fmtCreator(p.trainyardInfo?.creator) }),
      h('dt', { text: 'Started' }), h('dd', { text: fmtTime(p.startTime) }),
      h('dt', { text: 'Ended' }), h('dd', { text: fmtTime(p.endTime) }),
      h('dt', { text: 'Duration' }), h('dd', { text: durationOf(p) }),
      h('dt', { text: 'Machines' }), h('dd', { text: machinesOf(p) }),
      h('dt', { text: 'Model' }), h('dd', {}, modelLink(p)),
      h('dt', { text: 'Name' }), h('dd.mono', { text: name })));
    if (!spec.childElementCount) {
      spec.append(h('h2', { text: 'Request (JSON)' }), h('pre.json', { text: JSON.stringify({
        displayName: p.displayName, labels: p.labels, trainingTaskInputs: p.trainingTaskInputs,
        modelToUpload: p.modelToUpload }, null, 2) }));
    }
  }

  function renderJob(j: CustomJob) {
    const replicas = j.trainyardInfo?.replicas ?? [];
    job.replaceChildren(h('h2', { text: 'Backing custom job' }),
      h('p', {}, h('a', { href: `#/${j.name}`, 'data-link': 'job', text: j.displayName || idOf(j.name) }), ' ', stateBadge(j.state)),
      h('p.sub', { text: 'Its page has the logs of every replica and the training curves.' }),
      replicas.length === 0 ? message('empty', 'No replica has started yet.')
        : h('table.replicas', {}, h('tr', {}, h('th', { text: 'Task' }), h('th', { text: 'Exit code' }), h('th', { text: 'Restarts' })),
          ...replicas.map((r) => h('tr', {}, h('td', { text: r.taskName }),
            h('td', { text: r.exitCode === undefined ? 'running' : String(r.exitCode) }), h('td', { text: String(r.restarts) })))));
  }

  load();
  return () => { stopped = true; window.clearTimeout(timer); };
}
