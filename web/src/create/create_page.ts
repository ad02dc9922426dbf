// The create flow, step by step as the Vertex console's Training → Create (seed 004): what to
// create (default: train a new model, i.e. a TrainingPipeline whose model is registered; or a
// custom job, or a hyperparameter-tuning job), its details, the training code, the
// hyperparameters (HP tuning only), compute and pricing, options, and a review that shows the
// request as JSON and as the gcloud command line. The server validates: each of its
// fieldViolations is shown next to its field and nothing is created until it accepts; the created
// resource then opens on its page.
import { api, ApiError, MachineCatalog } from '../api';
import type { Cleanup } from '../util';
import { currentCaller, whyReadOnly } from '../session';
import { h, message } from '../util';
import { fieldWordsOf, inFormWords } from './field_words';
import { clearErrors, fieldId, inputField, keyValueRows, selectField, showViolations } from './fields';
import { commandLineOf } from './gcloud';
import { hpSection } from './hp';
import { ImageUse, imageChoices } from './images';
import { CreateForm, CreateKind, newForm, requestOf } from './model';
import { poolsSection } from './pools';

const KINDS: [CreateKind, string, string][] = [
  ['pipeline', 'Train new model', 'A training pipeline: runs your code, then registers the model it wrote in the model registry.'],
  ['customJob', 'Custom job', 'Runs your code on the machines you choose; nothing is registered.'],
  ['hpTuningJob', 'Hyperparameter-tuning job', 'Runs your code as trials with different parameters, optimising a metric.'],
];

// Container images Vertex offers prebuilt (the server maps them, docs/containers.md).
const PREBUILT = ['us-docker.pkg.dev/vertex-ai/training/pytorch-xla.1-13.py310:latest',
  'us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.1-13.py310:latest',
  'us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-12.py310:latest',
  'us-docker.pkg.dev/vertex-ai/training/scikit-learn-cpu.0-23:latest'];

interface Step { id: string; title: string; body: () => HTMLElement }

export function createPage(app: HTMLElement, parent: string, kind: string): Cleanup {
  const project = parent.split('/')[1];
  const box = h('div.create', {}, message('loading', 'Loading the machine catalog…'));
  app.append(h('h1', { text: 'Create' }), box);
  let stopped = false;
  Promise.all([whyReadOnly(project), api.machineTypes()]).then(([why, catalog]) => {
    if (stopped) return;
    if (why) { box.replaceChildren(message('error', `You cannot create here. ${why}`)); return; }
    const k = (KINDS.some(([v]) => v === kind) ? kind : 'pipeline') as CreateKind;
    const machine = catalog.machineTypes.some((m) => m.name === 'n1-standard-4') ? 'n1-standard-4' : catalog.machineTypes[0]?.name ?? '';
    new CreateFlow(box, parent, catalog, newForm(k, machine)).render();
  }).catch((e) => {
    if (!stopped) box.replaceChildren(message('error', `Could not load the machine catalog: ${(e as Error).message}`));
  });
  return () => { stopped = true; };
}

class CreateFlow {
  private current = 0;
  private steps: Step[] = [];
  private panels: HTMLElement[] = [];
  private review = h('div.review');
  private problems = h('div.problems', { role: 'alert' });
  private buckets = h('datalist', { id: 'known-buckets' });
  private trainingImages = h('datalist', { id: 'training-images' });
  private servingImages = h('datalist', { id: 'serving-images' });
  private models: [string, string][] = [['', 'New model']];

  constructor(private root: HTMLElement, private parent: string, private catalog: MachineCatalog,
    private f: CreateForm) {
    api.listBuckets(parent.split('/')[1]).then((r) => this.buckets.replaceChildren(
      ...(r.items ?? []).map((b) => h('option', { value: `gs://${b.name}/` })))).catch(() => { /* none known */ });
    this.offerImages();
    api.listModels(parent, 100, '').then((r) => {
      this.models.push(...(r.models ?? []).map((m): [string, string] => [m.name, `New version of ${m.displayName}`]));
    }).catch(() => { /* no registry */ });
  }

  // The images the server can run (an older server has no catalog: none) and those this project's
  // jobs used, newest first; neither failing is worth a message: the fields still take any image.
  private offerImages() {
    const catalog = api.containerImages().catch(() => []);
    const jobs = api.listJobs(this.parent, '', 100, '').then((r) => r.customJobs ?? []).catch(() => []);
    Promise.all([catalog, jobs]).then(([c, j]) => {
      const fill = (list: HTMLElement, use: ImageUse) => list.replaceChildren(...imageChoices(c, j, use).map((o) =>
        h('option', { value: o.value, label: o.label || undefined })));
      fill(this.trainingImages, 'TRAINING');
      fill(this.servingImages, 'SERVING');
    });
  }

  render() {
    this.steps = this.stepList();
    this.current = Math.min(this.current, this.steps.length - 1);
    this.panels = this.steps.map((s, i) => h('section.step.card', { 'data-step': s.id, hidden: i !== this.current },
      h('h2', { text: `${i + 1}. ${s.title}` }), s.body(), this.nav(i)));
    const stepper = h('ol.steps', {}, ...this.steps.map((s, i) => h('li', {},
      h(`button.step-link${i === this.current ? '.active' : ''}`, { type: 'button', 'data-goto': s.id, text: `${i + 1}. ${s.title}`,
        onclick: () => this.go(i) }))));
    this.root.replaceChildren(stepper, this.buckets, this.trainingImages, this.servingImages, ...this.panels);
  }

  private stepList(): Step[] {
    const isHp = this.f.kind === 'hpTuningJob';
    return [
      { id: 'method', title: 'Training method', body: () => this.methodStep() },
      { id: 'details', title: this.f.kind === 'pipeline' ? 'Model details' : 'Job details', body: () => this.detailsStep() },
      { id: 'code', title: 'Training container', body: () => this.codeStep() },
      ...(isHp ? [{ id: 'hyperparameters', title: 'Hyperparameters', body: () => hpSection(this.f) }] : []),
      { id: 'compute', title: 'Compute and pricing', body: () => poolsSection(this.catalog, this.f, () => { /* price shown in place */ }) },
      { id: 'options', title: 'Options', body: () => this.optionsStep() },
      { id: 'review', title: 'Review and create', body: () => this.reviewStep() },
    ];
  }

  private nav(i: number): HTMLElement {
    const last = i === this.steps.length - 1;
    const startLabel = this.f.kind === 'pipeline' ? 'Start training' : 'Create';
    return h('div.step-nav', {},
      i > 0 ? h('button', { type: 'button', text: 'Back', onclick: () => this.go(i - 1) }) : null,
      last ? h('button.primary', { type: 'button', text: startLabel, 'data-action': 'submit', onclick: (e: Event) => this.submit(e.target as HTMLButtonElement) })
        : h('button.primary', { type: 'button', text: 'Continue', onclick: () => this.go(i + 1) }));
  }

  private go(i: number) {
    this.current = i;
    this.panels.forEach((p, k) => { p.hidden = k !== i; });
    this.root.querySelectorAll('.step-link').forEach((b, k) => b.classList.toggle('active', k === i));
    if (this.steps[i].id === 'review') this.fillReview();
    this.panels[i].scrollIntoView({ block: 'nearest' });
  }

  private methodStep(): HTMLElement {
    const group = `kind-${fieldId()}`;
    return h('div', {},
      h('p.sub', { text: 'Dataset: no managed dataset (your code reads its data, e.g. from gs:// paths).' }),
      h('fieldset.kinds', {}, h('legend', { text: 'What to create' }), ...KINDS.map(([value, title, text]) => {
        const id = `${group}-${value}`;
        const radio = h('input', { type: 'radio', name: group, id, value, checked: value === this.f.kind });
        radio.addEventListener('change', () => { this.f.kind = value; this.render(); });
        return h('div.kind', {}, radio, h('label', { for: id }, h('b', { text: title }), h('span.sub', { text: ` — ${text}` })));
      })));
  }

  private detailsStep(): HTMLElement {
    const f = this.f;
    const name = inputField(f.kind === 'pipeline' ? 'Training pipeline name' : 'Job name', () => f.displayName,
      (v) => { f.displayName = v; }, { path: 'displayName', required: true, placeholder: 'multiworker-cassava' });
    if (f.kind !== 'pipeline') return h('div', {}, name);
    return h('div', {}, name,
      selectField('Model', this.models, () => f.parentModel, (v) => { f.parentModel = v; }, { path: 'parentModel' }),
      inputField('Model name', () => f.modelName, (v) => { f.modelName = v; },
        { path: 'modelToUpload.displayName', hint: 'Defaults to the pipeline name' }),
      inputField('Model description', () => f.modelDescription, (v) => { f.modelDescription = v; },
        { path: 'modelToUpload.description', rows: 2 }),
      inputField('Prediction container image (optional)', () => f.servingImageUri, (v) => { f.servingImageUri = v; },
        { path: 'modelToUpload.containerSpec.imageUri', list: 'serving-images', placeholder: 'trainyard/bert-serve:latest',
          hint: 'Leave empty for no prediction container' }));
  }

  private codeStep(): HTMLElement {
    const f = this.f;
    const at = 'spec.workerPoolSpecs[*]';
    const custom = h('div', { hidden: f.codeMode !== 'custom' },
      inputField('Container image', () => f.imageUri, (v) => { f.imageUri = v; },
        { path: `${at}.containerSpec.imageUri`, list: 'training-images', placeholder: 'trainyard/bert-sentiment:latest',
          hint: 'The images this server runs and those used recently are offered; any other image is pulled' }),
      inputField('Command (one argument per line)', () => f.command, (v) => { f.command = v; },
        { path: `${at}.containerSpec.command`, rows: 3, hint: 'Replaces the image entrypoint; empty keeps it' }));
    const prebuilt = h('div', { hidden: f.codeMode !== 'prebuilt' },
      inputField('Prebuilt container image', () => f.executorImageUri, (v) => { f.executorImageUri = v; },
        { path: `${at}.pythonPackageSpec.executorImageUri`, list: 'prebuilt-images' }),
      h('datalist', { id: 'prebuilt-images' }, ...PREBUILT.map((u) => h('option', { value: u }))),
      inputField('Python package URIs (one per line)', () => f.packageUris, (v) => { f.packageUris = v; },
        { path: `${at}.pythonPackageSpec.packageUris`, rows: 2, placeholder: 'gs://my-bucket/trainer-0.1.tar.gz' }),
      inputField('Python module', () => f.pythonModule, (v) => { f.pythonModule = v; },
        { path: `${at}.pythonPackageSpec.pythonModule`, placeholder: 'trainer.task' }));
    const mode = selectField('Training code', [['custom', 'Custom container'], ['prebuilt', 'Prebuilt container + Python package']],
      () => f.codeMode, (v) => {
        f.codeMode = v as CreateForm['codeMode'];
        custom.hidden = v !== 'custom';
        prebuilt.hidden = v !== 'prebuilt';
      });
    const argsPath = () => `${at}.${f.codeMode === 'custom' ? 'containerSpec' : 'pythonPackageSpec'}.args`;
    return h('div', {}, mode, custom, prebuilt,
      inputField('Arguments (one per line)', () => f.args, (v) => { f.args = v; }, { path: argsPath(), rows: 3 }),
      inputField('Output directory', () => f.outputDir, (v) => { f.outputDir = v; }, {
        path: 'spec.baseOutputDirectory.outputUriPrefix', list: 'known-buckets', placeholder: 'gs://my-bucket/run1',
        hint: 'Your code gets AIP_MODEL_DIR = <this>/model/; the model is registered from there' +
          (f.kind === 'pipeline' ? ' (empty: the server\'s staging bucket)' : ''),
      }));
  }

  private optionsStep(): HTMLElement {
    const f = this.f;
    const code = f.codeMode === 'custom' ? 'containerSpec' : 'pythonPackageSpec';
    return h('div', {},
      keyValueRows('environment variable', f.env, `spec.workerPoolSpecs[*].${code}.env`),
      inputField('Service account', () => f.serviceAccount, (v) => { f.serviceAccount = v; },
        { path: 'spec.serviceAccount', placeholder: 'trainer@my-project.iam.gserviceaccount.com', hint: 'Chooses the Unix user replicas run as (docs/security.md)' }),
      inputField('Timeout (hours)', () => f.timeoutHours, (v) => { f.timeoutHours = v; },
        { path: 'spec.scheduling.timeout', type: 'number', min: 0, step: 'any', hint: 'Empty: no limit' }),
      keyValueRows('label', f.labels, 'labels', 'Key', 'Value'));
  }

  private reviewStep(): HTMLElement {
    return h('div', {}, this.problems, this.review);
  }

  private fillReview() {
    const { collection, body } = requestOf(this.f);
    currentCaller().catch(() => null).then((c) => {
      const cmd = commandLineOf(this.f, this.parent, !!c?.authentication, location.origin);
      const json = JSON.stringify(body, null, 2);
      // A pipeline's command line sends the request itself as its file: shown once, named so.
      const same = cmd.configText === json;
      this.review.replaceChildren(...[
        h('h3', { text: `POST /v1/${this.parent}/${collection}${same ? ` — saved as ${cmd.configFile}, the command below sends it` : ''}` }),
        h('pre.json', { 'data-review': 'json', text: json }),
        h('h3', { text: this.f.kind === 'pipeline' ? 'The same request from a shell' : 'The same with gcloud' }),
        h('pre.json', { 'data-review': 'gcloud', text: cmd.command }),
        cmd.configFile && !same ? h('h3', { text: cmd.configFile }) : null,
        cmd.configText && !same ? h('pre.json', { 'data-review': 'config', text: cmd.configText }) : null,
        cmd.note ? h('p.sub', { text: cmd.note }) : null].filter((x): x is HTMLElement => x !== null));
    });
  }

  // Sends the request; on 400 shows each field violation next to its field and opens the first
  // step that has one; on success opens the created resource.
  private async submit(button: HTMLButtonElement) {
    const { collection, body } = requestOf(this.f);
    button.disabled = true;
    this.problems.replaceChildren();
    clearErrors(this.root);
    this.root.querySelectorAll('.step-link').forEach((b) => b.classList.remove('has-error'));
    try {
      const create = { customJobs: api.createJob, hyperparameterTuningJobs: api.createStudy,
        trainingPipelines: api.createPipeline }[collection]!;
      const created = await create(this.parent, body);
      location.hash = `#/${created.name}`;
    } catch (e) {
      button.disabled = false;
      const err = e as ApiError;
      const { unplaced, first } = showViolations(this.root, err.violations ?? []);
      this.panels.forEach((p, i) => {
        if (p.querySelector('[aria-invalid]')) this.root.querySelectorAll('.step-link')[i].classList.add('has-error');
      });
      this.problems.append(message('error', `The server refused the request: ${inFormWords(err.message)}`),
        ...unplaced.map((v) => h('p.field-error', { text: `${fieldWordsOf(v.field)}: ${inFormWords(v.description)}` })));
      const step = first ? this.panels.findIndex((p) => p.contains(first)) : -1;
      if (step >= 0) {
        this.go(step);
        first!.focus();
      }
    }
  }
}
