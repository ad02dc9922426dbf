// The form that creates a batch prediction job: the model (the registry's), the instances (gs://
// URIs, JSON lines or CSV), the output prefix (the buckets the server knows offered), the machine
// type and replicas. The answer is the job itself, whose page then opens.
import { api, ApiError, MachineCatalog, ModelVersion } from './api';
import { clearErrors, inputField, selectField, showViolations } from './create/fields';
import { machineLine } from './create/pools';
import { BatchForm, batchRequestOf, newBatchForm } from './batch_model';
import { h, idOf, message } from './util';

function fields(f: BatchForm, models: ModelVersion[], catalog: MachineCatalog): HTMLElement[] {
  const modelChoices: [string, string][] = [['', 'Choose a model…'],
    ...models.map((m): [string, string] => [m.name, `${m.displayName} (${idOf(m.name)})`])];
  if (f.model && !models.some((m) => m.name === f.model)) modelChoices.push([f.model, idOf(f.model)]);
  const at = 'dedicatedResources';
  return [
    inputField('Batch prediction name', () => f.displayName, (v) => { f.displayName = v; },
      { path: 'displayName', required: true, placeholder: 'reviews-batch' }),
    selectField('Model', modelChoices, () => f.model, (v) => { f.model = v; }, { path: 'model' }),
    h('div.row', {},
      selectField('Instances format', [['jsonl', 'JSON lines (one instance per line)'], ['csv', 'CSV (one instance per row)']],
        () => f.instancesFormat, (v) => { f.instancesFormat = v as BatchForm['instancesFormat']; }, { path: 'inputConfig.instancesFormat' })),
    inputField('Source files (one gs:// URI per line)', () => f.sourceUris, (v) => { f.sourceUris = v; },
      { path: 'inputConfig.gcsSource.uris', rows: 2, placeholder: 'gs://my-bucket/reviews.jsonl' }),
    inputField('Output directory prefix', () => f.outputUriPrefix, (v) => { f.outputUriPrefix = v; }, {
      path: 'outputConfig.gcsDestination.outputUriPrefix', list: 'batch-buckets', placeholder: 'gs://my-bucket/predictions',
      hint: 'Predictions are written as JSON lines into a new directory under it' }),
    selectField('Machine type', catalog.machineTypes.map((m): [string, string] => [m.name, machineLine(m)]),
      () => f.machineType, (v) => { f.machineType = v; }, { path: `${at}.machineSpec.machineType` }),
    h('div.row', {},
      inputField('Starting replicas', () => f.startingReplicaCount, (v) => { f.startingReplicaCount = Number(v); },
        { path: `${at}.startingReplicaCount`, type: 'number', min: 1 }),
      inputField('Maximum replicas', () => f.maxReplicaCount, (v) => { f.maxReplicaCount = Number(v); },
        { path: `${at}.maxReplicaCount`, type: 'number', min: 1 })),
  ];
}

async function submit(card: HTMLElement, parent: string, f: BatchForm, button: HTMLButtonElement, status: HTMLElement) {
  button.disabled = true;
  clearErrors(card);
  status.replaceChildren(message('loading', 'Creating the batch prediction job…'));
  try {
    const job = await api.createBatchJob(parent, batchRequestOf(f));
    location.hash = `#/${job.name}`;
  } catch (e) {
    button.disabled = false;
    const err = e as ApiError;
    const { unplaced } = showViolations(card, err.violations ?? []);
    status.replaceChildren(message('error', `The server refused the request: ${err.message}`),
      ...unplaced.map((v) => h('p.field-error', { text: `${v.field}: ${v.description}` })));
  }
}

// The create card (hidden until open() is called); `model` preselects a model's name.
export function batchCreateCard(parent: string, model: string): { el: HTMLElement; open: () => void } {
  const el = h('section.card.batch-create', { hidden: true, 'data-panel': 'batch-create' });
  let loaded = false;
  const load = async () => {
    el.replaceChildren(h('h2', { text: 'New batch prediction' }), message('loading', 'Loading models and machine types…'));
    try {
      const [models, catalog] = await Promise.all([api.listModels(parent, 100, ''), api.machineTypes()]);
      const buckets = await api.listBuckets(parent.split('/')[1]).catch(() => ({ items: [] }));
      const f = newBatchForm(model, catalog.machineTypes.some((m) => m.name === 'n1-standard-2') ? 'n1-standard-2'
        : catalog.machineTypes[0]?.name ?? '');
      const status = h('div.batch-status', { role: 'status' });
      const button = h('button.primary', { type: 'button', text: 'Create', 'data-action': 'create-batch' }) as HTMLButtonElement;
      button.onclick = () => submit(el, parent, f, button, status);
      el.replaceChildren(h('h2', { text: 'New batch prediction' }),
        h('datalist', { id: 'batch-buckets' }, ...(buckets.items ?? []).map((b) => h('option', { value: `gs://${b.name}/` }))),
        ...fields(f, models.models ?? [], catalog), h('div.step-nav', {}, button), status);
    } catch (e) {
      loaded = false;
      el.replaceChildren(h('h2', { text: 'New batch prediction' }), message('error', (e as Error).message));
    }
  };
  const open = () => {
    el.hidden = false;
    if (!loaded) { loaded = true; load(); }
  };
  return { el, open };
}
