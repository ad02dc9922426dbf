// HP-tuning pages: the studies list, and a study with its trials table (sortable, best trial
// highlighted), metric per trial, and parallel coordinates of parameters → metric.
import uPlot from 'uplot';
import { api, Study, Trial } from './api';
import { LineChart, parallelCoordinates } from './charts';
import type { Cleanup } from './util';
import { guardWrite } from './session';
import { durationOf, fmtTime, h, idOf, isTerminal, message, stateBadge } from './util';

export function studiesPage(app: HTMLElement, parent: string): Cleanup {
  let stopped = false;
  let timer = 0;
  const body = h('div.table-wrap', {}, message('loading', 'Loading HP-tuning jobs…'));
  app.append(h('h1', { text: 'Hyperparameter tuning jobs' }), body);
  async function load() {
    try {
      const res = await api.listStudies(parent, '', 50, '');
      if (stopped) return;
      const studies = res.hyperparameterTuningJobs ?? [];
      body.replaceChildren(studies.length === 0
        ? message('empty', `No HP-tuning jobs in ${parent}. Start one with: trainyard ai hp-tuning-jobs create …`)
        : h('table.jobs', {}, h('tr', {}, ...['Name', 'State', 'Created', 'Duration', 'Trials'].map((t) => h('th', { text: t }))),
          ...studies.map((s) => h('tr', { 'data-study': idOf(s.name) },
            h('td', {}, h('a', { href: `#/${s.name}`, text: s.displayName || idOf(s.name) }), h('div.sub', { text: idOf(s.name) })),
            h('td', {}, stateBadge(s.state)), h('td', { text: fmtTime(s.createTime) }),
            h('td', { text: durationOf(s) }), h('td', { text: `${(s.trials ?? []).length} / ${s.maxTrialCount ?? '?'}` })))));
    } catch (e) {
      if (!stopped) body.replaceChildren(message('error', `Could not list HP-tuning jobs: ${(e as Error).message}`));
    }
    if (!stopped) timer = window.setTimeout(load, 3000);
  }
  load();
  return () => { stopped = true; window.clearTimeout(timer); };
}

const metricOf = (t: Trial, id: string) => t.finalMeasurement?.metrics?.find((m) => m.metricId === id)?.value;
const paramOf = (t: Trial, id: string) => t.parameters?.find((p) => p.parameterId === id)?.value;

export function studyPage(app: HTMLElement, name: string): Cleanup {
  let stopped = false;
  let timer = 0;
  let sortKey = 'id';
  let sortDir = 1;
  let study: Study | null = null;
  const header = h('div.job-header', {}, message('loading', 'Loading HP-tuning job…'));
  const table = h('section.card.trials');
  const chartsBox = h('section.card.curves');
  app.append(header, table, chartsBox);
  let metricChart: LineChart | null = null;
  let pcp: uPlot | null = null;
  let pcpKey = '';

  async function load() {
    try {
      study = await api.getStudy(name);
      if (stopped) return;
      render(study);
      if (!isTerminal(study.state)) timer = window.setTimeout(load, 3000);
    } catch (e) {
      if (!stopped) header.replaceChildren(message('error', `Could not load ${name}: ${(e as Error).message}`));
    }
  }

  function render(s: Study) {
    const metric = s.studySpec.metrics[0];
    const maximize = metric?.goal !== 'MINIMIZE';
    const trials = s.trials ?? [];
    const scored = trials.filter((t) => metricOf(t, metric.metricId) !== undefined);
    const best = scored.reduce<Trial | null>((b, t) => {
      if (!b) return t;
      const v = metricOf(t, metric.metricId)!, bv = metricOf(b, metric.metricId)!;
      return (maximize ? v > bv : v < bv) ? t : b;
    }, null);
    const cancel = h('button.danger', { text: 'Cancel', disabled: isTerminal(s.state) || s.state === 'JOB_STATE_CANCELLING',
      onclick: async () => { try { await api.cancelStudy(name); load(); } catch (e) { alert((e as Error).message); } } });
    header.replaceChildren(
      h('a.back', { href: `#/${name.replace(/\/hyperparameterTuningJobs\/.*/, '/hyperparameterTuningJobs')}`, text: '← HP tuning' }),
      h('h1', {}, s.displayName || idOf(name), ' ', stateBadge(s.state)),
      guardWrite(name.split('/')[1], h('div.actions', {}, cancel)),
      h('p.sub', { text: `${metric.goal} ${metric.metricId} · ${trials.length} / ${s.maxTrialCount ?? '?'} trials · ${s.parallelTrialCount ?? 1} in parallel` +
        (best ? ` · best: trial ${best.id} = ${metricOf(best, metric.metricId)}` : '') }),
      s.error?.message ? message('error', s.error.message) : '');

    const params = s.studySpec.parameters.map((p) => p.parameterId);
    const cols = ['id', 'state', ...params, metric.metricId, 'job'];
    const value = (t: Trial, c: string): string | number | undefined =>
      c === 'id' ? Number(t.id) : c === 'state' ? t.state : c === metric.metricId ? metricOf(t, c) : paramOf(t, c);
    const sorted = [...trials].sort((a, b) => {
      const va = value(a, sortKey), vb = value(b, sortKey);
      if (va === undefined) return 1;
      if (vb === undefined) return -1;
      return (va < vb ? -1 : va > vb ? 1 : 0) * sortDir;
    });
    table.replaceChildren(h('h2', { text: 'Trials' }), trials.length === 0 ? message('empty', 'No trials yet.') :
      h('div.table-wrap', {}, h('table.trials', {},
        h('tr', {}, ...cols.map((c) => h(`th.sortable${c === sortKey ? '.sorted' : ''}`, {
          text: c + (c === sortKey ? (sortDir > 0 ? ' ▲' : ' ▼') : ''),
          onclick: () => { if (c === 'job') return; sortDir = c === sortKey ? -sortDir : 1; sortKey = c; render(s); },
        }))),
        ...sorted.map((t) => h(`tr${t === best ? '.best' : ''}`, { 'data-trial': t.id },
          h('td', { text: t.id + (t === best ? ' ★' : '') }), h('td', { text: t.state + (t.earlyStopped ? ' (stopped early)' : '') }),
          ...params.map((p) => h('td', { text: String(paramOf(t, p) ?? '—') })),
          h('td', { text: String(metricOf(t, metric.metricId) ?? '—') }),
          h('td', {}, t.customJob ? h('a', { href: `#/${t.customJob}`, text: idOf(t.customJob) }) : '—'))))));

    if (scored.length === 0) {
      chartsBox.replaceChildren(h('h2', { text: 'Charts' }), message('empty', 'Charts appear once trials report the metric.'));
      metricChart = null; pcp?.destroy(); pcp = null; pcpKey = '';
      return;
    }
    if (!metricChart) {
      chartsBox.replaceChildren(h('h2', { text: 'Charts' }));
      const el = h('div.chart', { 'data-chart': 'metric' });
      chartsBox.append(el);
      metricChart = new LineChart(el, `${metric.metricId} per trial`, [metric.metricId], 'trial');
    }
    const byId = [...scored].sort((a, b) => Number(a.id) - Number(b.id));
    metricChart.set(byId.map((t) => Number(t.id)), [byId.map((t) => metricOf(t, metric.metricId)!)]);
    // Categorical values are placed by their index among the values seen.
    const cats = new Map<string, string[]>();
    const num = (p: string, v: number | string | undefined) => {
      if (typeof v === 'number') return v;
      if (v === undefined) return NaN;
      const n = Number(v);
      if (!isNaN(n)) return n;
      const list = cats.get(p) ?? [];
      if (!list.includes(v)) list.push(v);
      cats.set(p, list);
      return list.indexOf(v);
    };
    const rows = byId.map((t) => [...params.map((p) => num(p, paramOf(t, p))), metricOf(t, metric.metricId)!]);
    const key = JSON.stringify(rows);
    if (key !== pcpKey && params.length > 0) {
      pcp?.destroy();
      chartsBox.querySelector('[data-chart=pcp]')?.remove();
      const el = h('div.chart', { 'data-chart': 'pcp' });
      chartsBox.append(el);
      pcp = parallelCoordinates(el, [...params, metric.metricId], rows, best ? byId.indexOf(best) : -1);
      pcpKey = key;
    }
  }
  load();
  return () => { stopped = true; window.clearTimeout(timer); pcp?.destroy(); };
}
