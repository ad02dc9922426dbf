// Job page: state timeline, replicas, spec, live logs per replica, training curves (:scalars),
// cancel and delete.
import { api, CustomJob, LogEntry, ScalarSeries } from './api';
import { LineChart } from './charts';
import { machineOf } from './jobs';
import type { Cleanup } from './main';
import { durationOf, fmtTime, fmtUsd, h, idOf, isTerminal, message, shortState, stateBadge } from './util';

const ERROR_RE = /\b(error|exception|traceback|fatal|failed|killed)\b/i;

export function jobPage(app: HTMLElement, name: string): Cleanup {
  let stopped = false;
  const timers: number[] = [];
  const later = (fn: () => void, ms: number) => timers.push(window.setTimeout(fn, ms));
  const header = h('div.job-header', {}, message('loading', 'Loading job…'));
  const summary = h('section.card.summary');
  const curves = h('section.card.curves', {}, h('h2', { text: 'Training curves' }), message('loading', 'Reading TensorBoard event files…'));
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
      h('div.actions', {}, cancel, del),
      j.error?.message ? message('error', j.error.message) : '');
  }

  function renderSummary(j: CustomJob) {
    const steps: [string, string | undefined][] = [['QUEUED', j.createTime], ['RUNNING', j.startTime]];
    if (isTerminal(j.state) || j.endTime) steps.push([shortState(j.state), j.endTime]);
    else if (!j.startTime) steps[1] = [shortState(j.state), j.updateTime];
    const restarts = (j.trainyardInfo?.replicas ?? []).reduce((n, r) => n + r.restarts, 0);
    const out = j.jobSpec.baseOutputDirectory?.outputUriPrefix;
    summary.replaceChildren(
      h('h2', { text: 'Timeline' }),
      h('ol.timeline', {}, ...steps.map(([s, t]) => h(`li.state-${s.toLowerCase()}`, {},
        h('b', { text: s }), h('span', { text: t ? fmtTime(t) : '—' }))),
        restarts ? h('li.state-restart', {}, h('b', { text: `${restarts} restart(s)` }), h('span', { text: 'replica failures or preemptions' })) : null),
      h('dl', {},
        h('dt', { text: 'Duration' }), h('dd', { text: durationOf(j) }),
        h('dt', { text: 'Machines' }), h('dd', { text: machineOf(j) }),
        h('dt', { text: 'Estimated cost' }), h('dd', { text: `${fmtUsd(j.trainyardInfo?.estimatedCostUsd)} (${fmtUsd(j.trainyardInfo?.hourlyCostUsd)}/h)` }),
        h('dt', { text: 'Output dir' }), h('dd', { text: out ?? '—' }),
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

  // Curves: :scalars polled with its cursor; one chart per tag group ("train/loss" → "train").
  const series = new Map<string, { x: number[]; y: (number | null)[] }>();
  const charts = new Map<string, { chart: LineChart; keys: string[]; el: HTMLElement }>();
  let scalarsCursor = '';
  async function pollScalars() {
    if (stopped) return;
    try {
      const page = await api.scalars(name, scalarsCursor);
      if (stopped) return;
      scalarsCursor = page.nextCursor;
      for (const s of page.series) add(s);
      renderCurves(page.logDir, page.warnings);
      const ended = isTerminal(page.jobState);
      if (page.more) later(pollScalars, 0);
      else if (!ended) later(pollScalars, 2000);
    } catch (e) {
      curves.replaceChildren(h('h2', { text: 'Training curves' }), message('error', `Could not read scalars: ${(e as Error).message}`));
      later(pollScalars, 5000);
    }
  }
  function add(s: ScalarSeries) {
    const key = s.run === '.' ? s.tag : `${s.run}/${s.tag}`;
    const cur = series.get(key) ?? { x: [], y: [] };
    for (const [step, , value] of s.points) { cur.x.push(step); cur.y.push(value); }
    series.set(key, cur);
  }
  function renderCurves(logDir: string | null, warnings: string[]) {
    if (series.size === 0) {
      curves.replaceChildren(h('h2', { text: 'Training curves' }), message('empty', logDir
        ? `No scalars in ${logDir} yet; they appear as the job writes TensorBoard events.`
        : 'This job has no TensorBoard log dir (set baseOutputDirectory, or pass --tensorboard-dir).'));
      return;
    }
    if (curves.querySelector('.state')) curves.replaceChildren(h('h2', { text: 'Training curves' }));
    const groups = new Map<string, string[]>();
    for (const key of [...series.keys()].sort()) {
      const g = key.includes('/') ? key.slice(0, key.lastIndexOf('/')) : 'scalars';
      groups.set(g, [...(groups.get(g) ?? []), key]);
    }
    for (const [g, keys] of groups) {
      // Each tag on its own chart: losses and accuracies have different scales.
      for (const key of keys) {
        let c = charts.get(key);
        if (!c) {
          const el = h('div.chart', { 'data-tag': key });
          curves.append(el);
          c = { chart: new LineChart(el, key, [key], g.startsWith('epoch') ? 'epoch' : 'step'), keys: [key], el };
          charts.set(key, c);
        }
        const s = series.get(key)!;
        const order = s.x.map((_, i) => i).sort((a, b) => s.x[a] - s.x[b]);
        c.chart.set(order.map((i) => s.x[i]), [order.map((i) => s.y[i])]);
      }
    }
    curves.querySelector('.warnings')?.remove();
    if (warnings.length) curves.append(h('div.warnings', { text: warnings.join('; ') }));
  }
  const onResize = () => charts.forEach((c) => c.chart.resize(c.el));
  window.addEventListener('resize', onResize);

  refreshJob().then(() => { if (job) renderLogTabs(job); restartLogs(); });
  pollScalars();
  return () => {
    stopped = true;
    timers.forEach((t) => window.clearTimeout(t));
    window.removeEventListener('resize', onResize);
    charts.forEach((c) => c.chart.destroy());
  };
}
