// Job page: state timeline, replicas, spec, live logs per replica, training curves (:scalars),
// cancel and delete.
import { api, CustomJob, LogEntry, StateChange } from './api';
import { CurvesCard } from './curves';
import { fmtCreator } from './format';
import { machineOf } from './jobs';
import type { Cleanup } from './util';
import { guardWrite } from './session';
import { durationOf, fmtTime, fmtUsd, h, idOf, isTerminal, message, shortState, stateBadge } from './util';

const ERROR_RE = /\b(error|exception|traceback|fatal|failed|killed)\b/i;

export function jobPage(app: HTMLElement, name: string): Cleanup {
  let stopped = false;
  const timers: number[] = [];
  const later = (fn: () => void, ms: number) => timers.push(window.setTimeout(fn, ms));
  const header = h('div.job-header', {}, message('loading', 'Loading job…'));
  const summary = h('section.card.summary');
  const curves = h('section.card.curves');
  const logs = h('section.card.logs');
  const spec = h('section.card.spec');
  app.append(header, h('div.grid', {}, summary, curves), logs, spec);

  let job: CustomJob | null = null;
  async function refreshJob() {
    try {
      job = await api.getJob(name);
      if (stopped) return;
      renderHeader(job);
      renderSummary(job);
      if (!spec.childElementCount) {
        spec.append(h('h2', { text: 'Spec (JSON)' }),
          h('pre.json', { text: JSON.stringify({ displayName: job.displayName, labels: job.labels, jobSpec: job.jobSpec }, null, 2) }));
      }
      if (!isTerminal(job.state)) later(refreshJob, 2000);
    } catch (e) {
      if (stopped) return;
      header.replaceChildren(h('a.back', { href: `#/${name.replace(/\/customJobs\/.*/, '/customJobs')}`, text: '← Jobs' }),
        message('error', `Could not load ${name}: ${(e as Error).message}`));
    }
  }

  // Every state the job entered and every replica restart (trainyardInfo.stateHistory); jobs
  // stored before the server kept a history fall back to the create/start/end times.
  function timeline(j: CustomJob): HTMLElement {
    let steps: StateChange[] = j.trainyardInfo?.stateHistory ?? [];
    if (steps.length === 0) {
      steps = [{ state: 'JOB_STATE_QUEUED', time: j.createTime ?? '' }];
      if (j.startTime) steps.push({ state: 'JOB_STATE_RUNNING', time: j.startTime });
      if (isTerminal(j.state)) steps.push({ state: j.state, time: j.endTime ?? '' });
    }
    const restarts = (j.trainyardInfo?.replicas ?? []).reduce((n, r) => n + r.restarts, 0);
    return h('ol.timeline', {}, ...steps.map((c, i) => {
      // Same state again with a detail: a replica restart, or what the executor does otherwise
      // than asked (an oversubscribed host, noted at QUEUED).
      const again = i > 0 && c.state === steps[i - 1].state && !!c.detail;
      const label = !again ? shortState(c.state) : c.detail?.includes('restarted') ? 'RESTART' : 'NOTE';
      return h(`li.state-${label.toLowerCase()}`, { title: c.detail ?? '' },
        h('b', { text: label }), h('span', { text: c.time ? fmtTime(c.time) : '—' }),
        c.detail ? h('span.sub', { text: c.detail }) : null);
    }),
    restarts && !steps.some((c) => c.detail?.includes('restarted'))
      ? h('li.state-restart', {}, h('b', { text: `${restarts} restart(s)` }), h('span', { text: 'replica failures or preemptions' }))
      : null);
  }

  function renderHeader(j: CustomJob) {
    const busy = (b: HTMLButtonElement, fn: () => Promise<unknown>, after: () => void) => async () => {
      b.disabled = true;
      try { await fn(); after(); } catch (e) { alert((e as Error).message); b.disabled = false; }
    };
    const cancel = h('button.danger', { text: 'Cancel job', disabled: isTerminal(j.state) || j.state === 'JOB_STATE_CANCELLING' }) as HTMLButtonElement;
    cancel.onclick = busy(cancel, () => api.cancelJob(name), () => { refreshJob(); });
    const del = h('button', { text: 'Delete', disabled: !isTerminal(j.state), title: 'only ended jobs can be deleted' }) as HTMLButtonElement;
    del.onclick = busy(del, async () => { if (confirm(`Delete ${j.displayName} and its logs?`)) await api.deleteJob(name); },
      () => { location.hash = `#/${name.replace(/\/customJobs\/.*/, '/customJobs')}`; });
    header.replaceChildren(
      h('a.back', { href: `#/${name.replace(/\/customJobs\/.*/, '/customJobs')}`, text: '← Jobs' }),
      h('h1', {}, j.displayName || idOf(name), ' ', stateBadge(j.state)),
      guardWrite(name.split('/')[1], h('div.actions', {}, cancel, del)),
      j.error?.message ? message('error', j.error.message) : '');
  }

  // What this job runs for, from its labels, linked both ways: a training pipeline, a batch
  // prediction, or an endpoint (a serving replica of one of its deployed models).
  function originOf(j: CustomJob): HTMLElement[] {
    const parent = name.replace(/\/customJobs\/.*/, '');
    const kinds: [string, string, string, string][] = [['trainyard-training-pipeline', 'trainingPipelines', 'Training pipeline', 'pipeline'],
      ['trainyard-batch-prediction', 'batchPredictionJobs', 'Batch prediction', 'batch-prediction'],
      ['trainyard-endpoint', 'endpoints', 'Endpoint', 'endpoint']];
    return kinds.flatMap(([label, collection, title, link]) => {
      const id = j.labels?.[label];
      return id ? [h('dt', { text: title }), h('dd', {}, h('a', { href: `#/${parent}/${collection}/${id}`, 'data-link': link, text: id }))] : [];
    });
  }

  function renderSummary(j: CustomJob) {
    const out = j.jobSpec.baseOutputDirectory?.outputUriPrefix;
    summary.replaceChildren(
      h('h2', { text: 'Timeline' }),
      timeline(j),
      h('dl', {},
        h('dt', { text: 'Duration' }), h('dd', { text: durationOf(j) }),
        h('dt', { text: 'Machines' }), h('dd', { text: machineOf(j) }),
        h('dt', { text: 'Estimated cost' }), h('dd', { text: `${fmtUsd(j.trainyardInfo?.estimatedCostUsd)} (${fmtUsd(j.trainyardInfo?.hourlyCostUsd)}/h)` }),
        h('dt', { text: 'Output dir' }), h('dd', { text: out ?? '—' }),
        h('dt', { text: 'Created by' }), h('dd', { text: fmtCreator(j.trainyardInfo?.creator) }),
        ...originOf(j),
        h('dt', { text: 'Name' }), h('dd.mono', { text: name })),
      h('h2', { text: 'Replicas' }),
      (j.trainyardInfo?.replicas ?? []).length === 0 ? message('empty', 'No replica has started yet.')
        : h('table.replicas', {}, h('tr', {}, h('th', { text: 'Task' }), h('th', { text: 'Exit code' }), h('th', { text: 'Restarts' })),
          ...(j.trainyardInfo?.replicas ?? []).map((r) => h('tr', {}, h('td', { text: r.taskName }),
            h('td', { text: r.exitCode === undefined ? 'running' : String(r.exitCode), class: r.exitCode ? 'bad' : '' }),
            h('td', { text: String(r.restarts) })))));
    if (!logTabs.childElementCount || logTabs.childElementCount - 1 !== (j.trainyardInfo?.replicas ?? []).length) renderLogTabs(j);
  }

  // Logs: one stream per replica (or all), followed with long polls while the job runs.
  const logTabs = h('div.tabs');
  const logBox = h('div.logbox', { tabindex: 0 });
  const search = h('input', { placeholder: 'search logs', 'aria-label': 'search logs', type: 'search' }) as HTMLInputElement;
  const follow = h('input', { type: 'checkbox', checked: true, id: 'follow' }) as HTMLInputElement;
  const logStatus = h('span.sub');
  let task = '';
  let cursor = '-1';
  let lines: LogEntry[] = [];
  let logGeneration = 0;
  logs.append(h('h2', { text: 'Logs' }), logTabs,
    h('div.logtools', {}, search, h('label', {}, follow, ' follow'),
      h('button', { text: 'Jump to first error', onclick: () => jumpToError() }), logStatus),
    logBox);
  search.addEventListener('input', () => renderLines(true));

  function renderLogTabs(j: CustomJob) {
    const tasks = ['', ...(j.trainyardInfo?.replicas ?? []).map((r) => r.taskName)];
    logTabs.replaceChildren(...tasks.map((t) => h(`button.tab${t === task ? '.active' : ''}`, {
      text: t || 'all replicas', onclick: () => { task = t; renderLogTabs(j); restartLogs(); },
    })));
  }
  function restartLogs() { cursor = '-1'; lines = []; logBox.replaceChildren(); pollLogs(++logGeneration); }

  async function pollLogs(gen: number) {
    if (stopped || gen !== logGeneration) return;
    try {
      const page = await api.logs(name, cursor, task, lines.length ? 10 : 0);
      if (stopped || gen !== logGeneration) return;
      cursor = page.nextCursor;
      if (page.entries.length) { lines.push(...page.entries); renderLines(false, page.entries); }
      if (!lines.length) logBox.replaceChildren(message('empty', page.done ? 'This job wrote no logs.' : 'No log lines yet…'));
      logStatus.textContent = `${lines.length} lines${page.done ? ' · job ended' : ' · live'}`;
      if (!page.done) later(() => pollLogs(gen), page.entries.length ? 0 : 500);
    } catch (e) {
      logStatus.textContent = `log read failed: ${(e as Error).message}; retrying`;
      later(() => pollLogs(gen), 3000);
    }
  }
  function lineEl(l: LogEntry) {
    return h(`div.line${l.stream === 'stderr' ? '.stderr' : ''}${ERROR_RE.test(l.text) ? '.err' : ''}`, {},
      h('span.ts', { text: l.time.slice(11, 19) }), h('span.task', { text: l.taskName }), l.text);
  }
  function renderLines(all: boolean, added: LogEntry[] = []) {
    const term = search.value.toLowerCase();
    const keep = (l: LogEntry) => !term || l.text.toLowerCase().includes(term);
    if (all || logBox.querySelector('.state')) logBox.replaceChildren(...lines.filter(keep).map(lineEl));
    else logBox.append(...added.filter(keep).map(lineEl));
    if (follow.checked && !term) logBox.scrollTop = logBox.scrollHeight;
  }
  function jumpToError() {
    const el = logBox.querySelector('.line.err') as HTMLElement | null;
    if (!el) { logStatus.textContent = 'no error lines'; return; }
    follow.checked = false;
    logBox.querySelectorAll('.focus').forEach((x) => x.classList.remove('focus'));
    el.classList.add('focus');
    logBox.scrollTop = el.offsetTop - logBox.offsetTop - 40;
  }

  // Curves: curves.ts (train and validation of a metric on one chart, smoothing of step curves).
  const curveCard = new CurvesCard(curves, name, later, () => stopped);
  const onResize = () => curveCard.resize();
  window.addEventListener('resize', onResize);

  refreshJob().then(() => { if (job) renderLogTabs(job); restartLogs(); });
  return () => {
    stopped = true;
    timers.forEach((t) => window.clearTimeout(t));
    window.removeEventListener('resize', onResize);
    curveCard.destroy();
  };
}
