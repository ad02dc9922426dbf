// "Deploy" on a model's page: an existing endpoint or a new one, the machine type (the server's
// catalog), min and max replicas; :deployModel answers an operation, followed until it is done
// (about 2 s for a small BERT on the native runtime), then the endpoint is linked.
import { api, ApiError, Endpoint, MachineCatalog, waitOperation } from './api';
import { clearErrors, inputField, selectField, showViolations } from './create/fields';
import { machineLine } from './create/pools';
import { DeployForm, deployRequestOf } from './serving_model';
import { h, idOf, message } from './util';

export class DeployPanel {
  readonly el = h('section.card.deploy', { hidden: true, 'data-panel': 'deploy' });
  private alive = true;
  private status = h('div.deploy-status', { role: 'status' });
  private form: DeployForm = { endpoint: '', endpointName: '', displayName: '', machineType: '', minReplicaCount: 1, maxReplicaCount: 1 };

  constructor(private model: string, private modelDisplayName: string) {}

  get parent() { return this.model.replace(/\/models\/.*$/, ''); }

  open() {
    this.el.hidden = false;
    if (!this.el.childElementCount) this.load();
    this.el.scrollIntoView({ block: 'nearest' });
  }

  stop() { this.alive = false; }

  private async load() {
    this.el.replaceChildren(h('h2', { text: 'Deploy to an endpoint' }), message('loading', 'Loading endpoints and machine types…'));
    try {
      const [endpoints, catalog] = await Promise.all([api.listEndpoints(this.parent), api.machineTypes()]);
      if (this.alive) this.render(endpoints.endpoints ?? [], catalog);
    } catch (e) {
      if (this.alive) this.el.replaceChildren(h('h2', { text: 'Deploy to an endpoint' }), message('error', (e as Error).message));
    }
  }

  private render(endpoints: Endpoint[], catalog: MachineCatalog) {
    const f = this.form;
    f.machineType = ['n1-standard-2', 'n1-standard-4'].find((m) => catalog.machineTypes.some((x) => x.name === m))
      ?? catalog.machineTypes[0]?.name ?? '';
    f.endpointName = `${this.modelDisplayName}-endpoint`;
    const newName = inputField('New endpoint name', () => f.endpointName, (v) => { f.endpointName = v; },
      { path: 'displayName', required: true });
    const choices: [string, string][] = [['', 'New endpoint…'],
      ...endpoints.map((e): [string, string] => [e.name, `${e.displayName} (${idOf(e.name)})`])];
    const endpoint = selectField('Endpoint', choices, () => f.endpoint, (v) => { f.endpoint = v; newName.hidden = v !== ''; },
      { path: 'endpoint' });
    const button = h('button.primary', { type: 'button', text: 'Deploy', 'data-action': 'deploy' }) as HTMLButtonElement;
    button.onclick = () => this.deploy(button);
    const at = 'deployedModel.dedicatedResources';
    this.el.replaceChildren(h('h2', { text: 'Deploy to an endpoint' }),
      h('div.row', {}, endpoint, newName),
      inputField('Deployed model name', () => f.displayName, (v) => { f.displayName = v; },
        { path: 'deployedModel.displayName', placeholder: this.modelDisplayName, hint: 'Empty: the model\'s name' }),
      selectField('Machine type', catalog.machineTypes.map((m): [string, string] => [m.name, machineLine(m)]),
        () => f.machineType, (v) => { f.machineType = v; }, { path: `${at}.machineSpec.machineType` }),
      h('div.row', {},
        inputField('Minimum replicas', () => f.minReplicaCount, (v) => { f.minReplicaCount = Number(v); },
          { path: `${at}.minReplicaCount`, type: 'number', min: 1 }),
        inputField('Maximum replicas', () => f.maxReplicaCount, (v) => { f.maxReplicaCount = Number(v); },
          { path: `${at}.maxReplicaCount`, type: 'number', min: 1, hint: 'More replicas start when requests queue' })),
      h('p.sub', { text: 'The deployed model gets 100% of the endpoint\'s traffic.' }),
      h('div.step-nav', {}, button), this.status);
  }

  private async deploy(button: HTMLButtonElement) {
    button.disabled = true;
    clearErrors(this.el);
    const started = Date.now();
    const say = (text: string) => this.status.replaceChildren(message('loading', text));
    try {
      let endpoint = this.form.endpoint;
      if (!endpoint) {
        say('Creating the endpoint…');
        const op = await api.createEndpoint(this.parent, this.form.endpointName.trim());
        endpoint = op.response?.name ?? '';
        if (!endpoint) throw new Error(op.error?.message ?? 'the server created no endpoint');
        this.chooseCreated(endpoint, op.response?.displayName ?? this.form.endpointName);
      }
      say('Deploying: starting the serving replicas…');
      const tick = window.setInterval(() => say(`Deploying: starting the serving replicas… ${Math.round((Date.now() - started) / 1000)} s`), 1000);
      const done = await waitOperation(await api.deployModel(endpoint, deployRequestOf(this.model, this.modelDisplayName, this.form)),
        () => this.alive).finally(() => window.clearInterval(tick));
      if (!done) return;
      if (done.error) throw new Error(done.error.message ?? 'the deployment failed');
      this.deployed(endpoint, (done.response?.deployedModel as { id?: string } | undefined)?.id ?? '');
    } catch (e) {
      button.disabled = false;
      const err = e as ApiError;
      showViolations(this.el, err.violations ?? []);
      this.status.replaceChildren(message('error', `Deploy failed: ${err.message}`));
    }
  }

  // A retry after a failed deploy goes to the endpoint already created, which the form now shows.
  private chooseCreated(endpoint: string, displayName: string) {
    this.form.endpoint = endpoint;
    const select = this.el.querySelector<HTMLSelectElement>('[data-field=endpoint]');
    if (!select) return;
    select.append(h('option', { value: endpoint, text: `${displayName} (${idOf(endpoint)})` }));
    select.value = endpoint;
    const newName = this.el.querySelector<HTMLElement>('[data-field=displayName]')?.closest('.field') as HTMLElement | null;
    if (newName) newName.hidden = true;
  }

  private deployed(endpoint: string, id: string) {
    this.status.replaceChildren(h('p.deployed', {}, `Deployed${id ? ` as ${id}` : ''}. `,
      h('a', { href: `#/${endpoint}`, 'data-link': 'endpoint', text: 'Open the endpoint →' })));
  }
}
