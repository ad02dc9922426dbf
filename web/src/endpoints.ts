// Endpoints (online prediction, docs/serving.md): the list, and an endpoint's page with its
// deployed models — the model, machine, replicas, share of the traffic, predictions, failures and
// mean latency (from the server's /metrics: prometheus.ts) — Undeploy, and a box that sends a
// test prediction. Both refresh every 3 s.
import { api, DeployedModel, Endpoint, waitOperation } from './api';
import { fmtCreator, fmtLatency, plural } from './format';
import type { Cleanup } from './util';
import { modelLink } from './names';
import { parsePrometheus, ServingFigures, servingFigures, totalOf } from './prometheus';
import { predictBodyOf, SAMPLE_PREDICT_BODY } from './serving_model';
import { guardWrite } from './session';
import { fmtTime, h, idOf, message } from './util';

// Serving figures of every endpoint, or null when /metrics cannot be read (they then show "—").
async function figuresOf(endpoints: string[]): Promise<Map<string, Map<string, ServingFigures>> | null> {
  try {
    const samples = parsePrometheus(await api.metricsText());
    return new Map(endpoints.map((e) => [e, servingFigures(samples, e)]));
  } catch { return null; }
}

const splitText = (e: Endpoint) =>
  Object.entries(e.trafficSplit ?? {}).map(([id, pct]) => `${id}: ${pct}%`).join(', ') || 'no traffic';

function replicasText(f: ServingFigures | undefined, d?: DeployedModel) {
  const range = d ? ` (min ${d.dedicatedResources?.minReplicaCount ?? 1}, max ${d.dedicatedResources?.maxReplicaCount ?? d.dedicatedResources?.minReplicaCount ?? 1})` : '';
  return f ? `${f.healthyReplicas} of ${f.replicas} healthy${range}` : `—${range}`;
}

function createForm(parent: string): HTMLElement {
  const input = h('input', { id: 'new-endpoint-name', name: 'displayName', required: true, placeholder: 'reviews' }) as HTMLInputElement;
  const status = h('div', { role: 'status' });
  const form = h('form.create-endpoint', { hidden: true, onsubmit: async (e: Event) => {
    e.preventDefault();
    try {
      const op = await api.createEndpoint(parent, input.value.trim());
      if (op.response?.name) location.hash = `#/${op.response.name}`;
      else status.replaceChildren(message('error', op.error?.message ?? 'the server created no endpoint'));
    } catch (err) { status.replaceChildren(message('error', `Could not create the endpoint: ${(err as Error).message}`)); }
  } },
  h('div.field', {}, h('label', { for: 'new-endpoint-name', text: 'Endpoint name' }), input),
  h('button.primary', { type: 'submit', text: 'Create' }), status);
  const open = h('button', { type: 'button', text: 'Create endpoint', 'data-action': 'create-endpoint',
    onclick: () => { form.hidden = false; input.focus(); } });
  return h('div', {}, guardWrite(parent.split('/')[1], h('div.actions', {}, open)), form);
}

export function endpointsPage(app: HTMLElement, parent: string): Cleanup {
  let stopped = false;
  let timer = 0;
  const body = h('div.table-wrap', {}, message('loading', 'Loading endpoints…'));
  app.append(h('div.job-header', {}, h('h1', { text: 'Endpoints' }), createForm(parent)), body);
  async function load() {
    try {
      const list = (await api.listEndpoints(parent)).endpoints ?? [];
      const figures = await figuresOf(list.map((e) => e.name));
      if (stopped) return;
      body.replaceChildren(list.length === 0
        ? message('empty', `No endpoints in ${parent}. Deploy a model from its page, or create an endpoint.`)
        : h('table.jobs.endpoints', {},
          h('thead', {}, h('tr', {}, ...['Name', 'Deployed models', 'Traffic split', 'Replicas', 'Predictions', 'Mean latency', 'Created']
            .map((t) => h('th', { text: t })))),
          h('tbody', {}, ...list.map((e) => {
            const total = figures ? totalOf(figures.get(e.name)!) : undefined;
            return h('tr', { 'data-endpoint': idOf(e.name) },
              h('td', {}, h('a', { href: `#/${e.name}`, text: e.displayName || idOf(e.name) }), h('div.sub', { text: idOf(e.name) })),
              h('td', { text: (e.deployedModels ?? []).map((d) => d.displayName || d.id).join(', ') || 'none' }),
              h('td', { text: splitText(e) }), h('td', { text: total ? `${total.healthyReplicas} of ${total.replicas} healthy` : '—' }),
              h('td', { text: total ? String(total.predictions) : '—' }), h('td', { text: fmtLatency(total?.meanLatencySeconds) }),
              h('td', { text: fmtTime(e.createTime) }));
          }))));
    } catch (e) {
      if (!stopped) body.replaceChildren(message('error', `Could not list endpoints: ${(e as Error).message}`));
    }
    if (!stopped) timer = window.setTimeout(load, 3000);
  }
  load();
  return () => { stopped = true; window.clearTimeout(timer); };
}

// The test prediction box: a PredictRequest, sent as is; the answer (or the error) below.
function predictCard(name: string): HTMLElement {
  const text = h('textarea', { id: 'predict-body', name: 'predict', rows: 4, spellcheck: 'false' }) as HTMLTextAreaElement;
  text.value = SAMPLE_PREDICT_BODY;
  const out = h('div.predict-result');
  const send = h('button.primary', { type: 'button', text: 'Predict', 'data-action': 'predict' }) as HTMLButtonElement;
  send.onclick = async () => {
    const { body, problem } = predictBodyOf(text.value);
    if (!body) { out.replaceChildren(message('error', problem!)); return; }
    send.disabled = true;
    out.replaceChildren(message('loading', 'Predicting…'));
    try {
      const answer = await api.predict(name, body);
      out.replaceChildren(h('pre.json', { 'data-predict': 'result', text: JSON.stringify(answer, null, 2) }));
    } catch (e) {
      out.replaceChildren(message('error', `Prediction failed: ${(e as Error).message}`));
    } finally { send.disabled = false; }
  };
  return h('section.card.predict', {}, h('h2', { text: 'Test the endpoint' }),
    h('div.field', {}, h('label', { for: 'predict-body', text: 'Request (JSON: {"instances": [...]})' }), text),
    h('div.step-nav', {}, send), out);
}

export function endpointPage(app: HTMLElement, name: string): Cleanup {
  let stopped = false;
  let timer = 0;
  const list = `#/${name.replace(/\/endpoints\/.*/, '/endpoints')}`;
  const header = h('div.job-header', {}, message('loading', 'Loading endpoint…'));
  const summary = h('section.card.summary');
  const models = h('section.card.deployed');
  const status = h('div.undeploy-status', { role: 'status' });
  app.append(header, summary, models, predictCard(name));
  const busy = new Set<string>();  // deployed models being undeployed
  let loads = 0;

  async function load() {
    window.clearTimeout(timer);
    const gen = ++loads;
    try {
      const e = await api.getEndpoint(name);
      const figures = (await figuresOf([name]))?.get(name) ?? null;
      if (stopped || gen !== loads) return;
      render(e, figures);
    } catch (e) {
      if (!stopped) header.replaceChildren(h('a.back', { href: list, text: '← Endpoints' }),
        message('error', `Could not load ${name}: ${(e as Error).message}`));
    }
    if (!stopped && gen === loads) timer = window.setTimeout(load, 3000);
  }

  function render(e: Endpoint, figures: Map<string, ServingFigures> | null) {
    header.replaceChildren(h('a.back', { href: list, text: '← Endpoints' }), h('h1', { text: e.displayName || idOf(name) }));
    summary.replaceChildren(h('h2', { text: 'Endpoint' }), h('dl', {},
      h('dt', { text: 'Deployed models' }), h('dd', { text: plural((e.deployedModels ?? []).length, 'model') }),
      h('dt', { text: 'Traffic split' }), h('dd', { 'data-traffic': '', text: splitText(e) }),
      h('dt', { text: 'Created' }), h('dd', { text: fmtTime(e.createTime) }),
      h('dt', { text: 'Created by' }), h('dd', { text: fmtCreator(e.trainyardInfo?.creator) }),
      h('dt', { text: 'Name' }), h('dd.mono', { text: name })));
    const deployed = e.deployedModels ?? [];
    models.replaceChildren(h('h2', { text: 'Deployed models' }), status, deployed.length === 0
      ? message('empty', 'No model is deployed here. Open a model and press "Deploy…".')
      : h('div.table-wrap', {}, h('table.jobs.deployed-models', {},
        h('thead', {}, h('tr', {}, ...['Deployed model', 'Model', 'Machine', 'Replicas', 'Traffic', 'Predictions', 'Failures',
          'Mean latency', 'In flight', ''].map((t) => h('th', { text: t })))),
        h('tbody', {}, ...deployed.map((d) => row(e, d, figures?.get(d.id)))))),
      figures ? '' : h('p.sub', { text: 'Replica and request figures are unavailable (GET /metrics failed).' }));
  }

  function row(e: Endpoint, d: DeployedModel, f: ServingFigures | undefined): HTMLElement {
    const parent = name.replace(/\/endpoints\/.*/, '');
    const undeploy = h('button.danger', { type: 'button', text: busy.has(d.id) ? 'Undeploying…' : 'Undeploy',
      disabled: busy.has(d.id), 'data-action': 'undeploy', onclick: () => undeployModel(d) });
    return h('tr', { 'data-deployed-model': d.id },
      h('td', {}, d.displayName || d.id, h('div.sub', { text: d.id })),
      h('td', {}, modelLink(d.model, d.modelVersionId)),
      h('td', { text: d.dedicatedResources?.machineSpec?.machineType ?? '—' }),
      h('td', { 'data-replicas': '', text: replicasText(f, d) }),
      h('td', { text: `${e.trafficSplit?.[d.id] ?? 0}%` }),
      h('td', { 'data-predictions': '', text: f ? String(f.predictions) : '—' }),
      h('td', { text: f ? String(f.failures) : '—' }),
      h('td', { 'data-latency': '', text: fmtLatency(f?.meanLatencySeconds) }),
      h('td', { text: f ? String(f.inFlight) : '—' }),
      h('td', {}, guardWrite(name.split('/')[1], h('div.actions', {}, undeploy)),
        h('a.sub', { href: `#/${parent}/customJobs?label=${encodeURIComponent(`trainyard-deployed-model=${d.id}`)}`,
          text: 'replica logs' })));
  }

  async function undeployModel(d: DeployedModel) {
    if (!confirm(`Undeploy ${d.displayName || d.id}? Its replicas stop; the model stays.`)) return;
    busy.add(d.id);
    load();
    try {
      const done = await waitOperation(await api.undeployModel(name, d.id), () => !stopped);
      if (done?.error) status.replaceChildren(message('error', `Undeploy failed: ${done.error.message}`));
      else status.replaceChildren();
    } catch (e) {
      status.replaceChildren(message('error', `Undeploy failed: ${(e as Error).message}`));
    }
    busy.delete(d.id);
    if (!stopped) load();
  }

  load();
  return () => { stopped = true; window.clearTimeout(timer); };
}
