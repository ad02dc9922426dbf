// Models: the registry's models, and a model's page with its versions; for the version shown, its
// artifact files (the Cloud Storage API over its artifactUri), its metrics.json (metrics_view.ts)
// and the training pipeline and custom job that produced it (which link back here); Deploy
// (deploy.ts) and a batch prediction of it.
import { api, GcsObject, ModelVersion, Pipeline } from './api';
import type { LineChart } from './charts';
import { DeployPanel } from './deploy';
import type { Cleanup } from './util';
import { renderMetrics } from './metrics_view';
import { pipelineLink } from './names';
import { guardWrite } from './session';
import { fmtTime, h, idOf, message, splitGcs } from './util';

const versionsOf = (m: ModelVersion) => (m.versionAliases ?? []).join(', ');

export function modelsPage(app: HTMLElement, parent: string): Cleanup {
  let stopped = false;
  let timer = 0;
  const body = h('div.table-wrap', {}, message('loading', 'Loading models…'));
  app.append(h('h1', { text: 'Models' }), body);
  async function load() {
    try {
      const res = await api.listModels(parent, 100, '');
      if (stopped) return;
      const models = res.models ?? [];
      body.replaceChildren(models.length === 0
        ? message('empty', `No models in ${parent}. Train one with "+ Create", or upload one: trainyard ai models upload …`)
        : h('table.jobs.models', {},
          h('thead', {}, h('tr', {}, ...['Name', 'Default version', 'Created', 'Produced by', 'Artifacts'].map((t) => h('th', { text: t })))),
          h('tbody', {}, ...models.map((m) => h('tr', { 'data-model': idOf(m.name) },
            h('td', {}, h('a', { href: `#/${m.name}`, text: m.displayName || idOf(m.name) }), h('div.sub', { text: idOf(m.name) })),
            h('td', { text: `v${m.versionId ?? '?'} ${versionsOf(m)}` }), h('td', { text: fmtTime(m.createTime) }),
            h('td', {}, m.trainingPipeline ? pipelineLink(m.trainingPipeline) : 'upload'),
            h('td.mono', { text: m.artifactUri ?? '—' }))))));
    } catch (e) {
      if (!stopped) body.replaceChildren(message('error', `Could not list models: ${(e as Error).message}`));
    }
    if (!stopped) timer = window.setTimeout(load, 5000);
  }
  load();
  return () => { stopped = true; window.clearTimeout(timer); };
}

function renderFiles(box: HTMLElement, bucket: string, dir: string, items: GcsObject[]) {
  box.replaceChildren(items.length === 0 ? message('empty', 'No files.') : h('table.files', {},
    h('tr', {}, h('th', { text: 'File' }), h('th', { text: 'Size' }), h('th', { text: 'Updated' })),
    ...items.map((o) => h('tr', { 'data-file': o.name.slice(dir.length) },
      h('td.mono', { text: o.name.slice(dir.length), title: `gs://${bucket}/${o.name}` }),
      h('td', { text: `${Number(o.size).toLocaleString()} B` }), h('td', { text: fmtTime(o.updated) })))));
}

// The pipeline that trained the version and that pipeline's backing job.
async function renderOrigin(box: HTMLElement, v: ModelVersion) {
  if (!v.trainingPipeline) { box.replaceChildren(h('dt', { text: 'Produced by' }), h('dd', { text: 'an upload (trainyard ai models upload)' })); return; }
  let p: Pipeline | null = null;
  try { p = await api.getPipeline(v.trainingPipeline); } catch { /* deleted: the name still links */ }
  const job = p?.trainingTaskMetadata?.backingCustomJob;
  box.replaceChildren(h('dt', { text: 'Training pipeline' }),
    h('dd', {}, h('a', { href: `#/${v.trainingPipeline}`, 'data-link': 'pipeline', text: p?.displayName ?? idOf(v.trainingPipeline) })),
    h('dt', { text: 'Custom job' }),
    h('dd', {}, job ? h('a', { href: `#/${job}`, 'data-link': 'job', text: idOf(job) }) : '—'));
}

export function modelPage(app: HTMLElement, name: string): Cleanup {
  let stopped = false;
  const list = `#/${name.replace(/\/models\/.*/, '/models')}`;
  const header = h('div.job-header', {}, message('loading', 'Loading model…'));
  const versions = h('section.card.versions');
  const detail = h('section.card.version');
  const deploySlot = h('div.deploy-slot');
  let deploy: DeployPanel | null = null;
  let charts: LineChart[] = [];
  const onResize = () => charts.forEach((c) => c.resize(c.el));
  window.addEventListener('resize', onResize);
  app.append(header, deploySlot, versions, detail);
  const wanted = new URLSearchParams(location.hash.split('?')[1] ?? '').get('version');

  async function load() {
    try {
      const [model, all] = await Promise.all([api.getModel(name), api.listModelVersions(name)]);
      if (stopped) return;
      const list = all.models ?? [];
      renderHeader(model);
      const shown = list.find((v) => v.versionId === wanted) ?? model;
      renderVersions(list, shown);
      showVersion(shown);
    } catch (e) {
      if (!stopped) header.replaceChildren(h('a.back', { href: list, text: '← Models' }),
        message('error', `Could not load ${name}: ${(e as Error).message}`));
    }
  }

  function renderHeader(m: ModelVersion) {
    const del = h('button.danger', { text: 'Delete model', onclick: async () => {
      if (!confirm(`Delete ${m.displayName} and all its versions? Its files stay.`)) return;
      try { await api.deleteModel(name); location.hash = list; } catch (e) { alert((e as Error).message); }
    } });
    deploy?.stop();
    deploy = new DeployPanel(name, m.displayName || idOf(name));
    deploySlot.replaceChildren(deploy.el);
    const parent = name.replace(/\/models\/.*/, '');
    header.replaceChildren(h('a.back', { href: list, text: '← Models' }),
      h('h1', { text: m.displayName || idOf(name) }),
      guardWrite(name.split('/')[1], h('div.actions', {},
        h('button.primary', { type: 'button', text: 'Deploy…', 'data-action': 'open-deploy', onclick: () => deploy?.open() }),
        h('a.button', { href: `#/${parent}/batchPredictionJobs?create=1&model=${encodeURIComponent(name)}`,
          'data-action': 'batch-predict', text: 'Batch predict…' }),
        del)),
      m.description ? h('p.sub', { text: m.description }) : '');
  }

  function renderVersions(list: ModelVersion[], shown: ModelVersion) {
    versions.replaceChildren(h('h2', { text: 'Versions' }), h('div.table-wrap', {}, h('table.jobs', {},
      h('tr', {}, ...['Version', 'Aliases', 'Created', 'Produced by'].map((t) => h('th', { text: t }))),
      ...list.map((v) => h(`tr${v.versionId === shown.versionId ? '.best' : ''}`, { 'data-version': v.versionId },
        h('td', {}, h('a', { href: `#/${name}?version=${v.versionId}`, text: `v${v.versionId}` })),
        h('td', { text: versionsOf(v) }), h('td', { text: fmtTime(v.versionCreateTime ?? v.createTime) }),
        h('td', {}, v.trainingPipeline ? pipelineLink(v.trainingPipeline) : 'upload'))))));
  }

  async function showVersion(v: ModelVersion) {
    const files = h('div.files', {}, message('loading', 'Listing artifact files…'));
    const metrics = h('div.metrics-json', {}, message('loading', 'Reading metrics.json…'));
    const origin = h('dl.origin');
    detail.replaceChildren(h('h2', { text: `Version ${v.versionId}` }),
      h('dl', {}, h('dt', { text: 'Artifacts' }), h('dd.mono', { text: v.artifactUri ?? '—' }),
        h('dt', { text: 'Serving image' }), h('dd.mono', { text: v.containerSpec?.imageUri ?? 'none' })),
      origin, h('h3', { text: 'Metrics (metrics.json)' }), metrics, h('h3', { text: 'Files' }), files);
    renderOrigin(origin, v);
    const where = v.artifactUri ? splitGcs(v.artifactUri) : null;
    if (!where) {
      files.replaceChildren(message('empty', 'This version has no gs:// artifactUri.'));
      metrics.replaceChildren(message('empty', 'No metrics.json.'));
      return;
    }
    const [bucket, prefix] = where;
    const dir = prefix && !prefix.endsWith('/') ? `${prefix}/` : prefix;
    api.listObjects(bucket, dir).then((r) => renderFiles(files, bucket, dir, r.items ?? []))
      .catch((e) => files.replaceChildren(message('error', `Could not list ${v.artifactUri}: ${(e as Error).message}`)));
    api.objectText(bucket, `${dir}metrics.json`).then((text) => { if (!stopped) charts = renderMetrics(metrics, text); })
      .catch((e) => metrics.replaceChildren(message('error', `Could not read metrics.json: ${(e as Error).message}`)));
  }

  load();
  return () => {
    stopped = true;
    deploy?.stop();
    charts.forEach((c) => c.destroy());
    window.removeEventListener('resize', onResize);
  };
}
