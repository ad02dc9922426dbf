// The create form's state and the requests it stands for, with no DOM: what the form shows is
// turned into a TrainingPipeline, a CustomJob or a HyperparameterTuningJob body here, and the
// gcloud command line that does the same (gcloud.ts).

export type CreateKind = 'pipeline' | 'customJob' | 'hpTuningJob';

export const POOL_ROLES = ['chief', 'workers', 'parameter servers', 'evaluators'];

export interface PoolForm {
  enabled: boolean;          // pool 0 always
  machineType: string;
  acceleratorType: string;   // '' = none
  acceleratorCount: number;
  replicaCount: number;
  bootDiskType: string;      // pd-ssd, pd-standard
  bootDiskSizeGb: number;
}

export interface KeyValue { key: string; value: string }

export interface HpParam {
  id: string;
  type: 'DOUBLE' | 'INTEGER' | 'DISCRETE' | 'CATEGORICAL';
  min: string; max: string;  // DOUBLE, INTEGER
  values: string;            // DISCRETE, CATEGORICAL: comma-separated
  scale: '' | 'UNIT_LINEAR_SCALE' | 'UNIT_LOG_SCALE' | 'UNIT_REVERSE_LOG_SCALE';
}

export interface CreateForm {
  kind: CreateKind;
  displayName: string;
  // pipeline: the model to register
  modelName: string;
  modelDescription: string;
  parentModel: string;        // '' = a new model, else the model to add a version to
  servingImageUri: string;    // '' = no prediction container
  // training code, the same for every pool
  codeMode: 'custom' | 'prebuilt';
  imageUri: string;
  command: string;            // one argument per line
  args: string;               // one argument per line
  executorImageUri: string;
  packageUris: string;        // one per line
  pythonModule: string;
  pools: PoolForm[];          // always 4; pool i is sent when enabled (empty {} for skipped ones)
  env: KeyValue[];
  outputDir: string;          // gs://bucket/path
  serviceAccount: string;
  timeoutHours: string;       // '' = none
  labels: KeyValue[];
  // HP tuning
  metrics: { id: string; goal: 'MAXIMIZE' | 'MINIMIZE' }[];
  params: HpParam[];
  maxTrialCount: number;
  parallelTrialCount: number;
  maxFailedTrialCount: number;
  algorithm: '' | 'GRID_SEARCH' | 'RANDOM_SEARCH';
}

export const CUSTOM_TASK =
  'gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml';

export function newPool(index: number, machineType: string): PoolForm {
  return {
    enabled: index === 0, machineType, acceleratorType: '', acceleratorCount: 0, replicaCount: 1,
    bootDiskType: 'pd-ssd', bootDiskSizeGb: 100,
  };
}

export function newForm(kind: CreateKind, machineType = 'n1-standard-4'): CreateForm {
  return {
    kind, displayName: '', modelName: '', modelDescription: '', parentModel: '', servingImageUri: '',
    codeMode: 'custom', imageUri: '', command: '', args: '', executorImageUri: '', packageUris: '', pythonModule: '',
    pools: [0, 1, 2, 3].map((i) => newPool(i, machineType)),
    env: [], outputDir: '', serviceAccount: '', timeoutHours: '', labels: [],
    metrics: [{ id: '', goal: 'MAXIMIZE' }],
    params: [{ id: '', type: 'DOUBLE', min: '', max: '', values: '', scale: 'UNIT_LINEAR_SCALE' }],
    maxTrialCount: 4, parallelTrialCount: 2, maxFailedTrialCount: 0, algorithm: '',
  };
}

export const lines = (text: string) => text.split('\n').map((l) => l.trim()).filter((l) => l !== '');

const num = (text: string): number | string => (text.trim() !== '' && !isNaN(Number(text)) ? Number(text) : text.trim());

function pairs(list: KeyValue[]): KeyValue[] {
  return list.filter((kv) => kv.key.trim() !== '' || kv.value !== '');
}

function labelsOf(list: KeyValue[]): Record<string, string> | undefined {
  const kept = pairs(list);
  return kept.length ? Object.fromEntries(kept.map((kv) => [kv.key.trim(), kv.value])) : undefined;
}

// The program every pool runs.
function codeOf(f: CreateForm): Record<string, unknown> {
  const env = pairs(f.env).map((kv) => ({ name: kv.key.trim(), value: kv.value }));
  const extra = { ...(lines(f.args).length ? { args: lines(f.args) } : {}), ...(env.length ? { env } : {}) };
  if (f.codeMode === 'prebuilt') {
    return { pythonPackageSpec: {
      executorImageUri: f.executorImageUri.trim(), packageUris: lines(f.packageUris),
      pythonModule: f.pythonModule.trim(), ...extra } };
  }
  return { containerSpec: {
    imageUri: f.imageUri.trim(), ...(lines(f.command).length ? { command: lines(f.command) } : {}), ...extra } };
}

// Pool `i` of the request; pool 0, the chief, always has 1 replica.
function poolOf(f: CreateForm, p: PoolForm, i: number): Record<string, unknown> {
  const machineSpec: Record<string, unknown> = { machineType: p.machineType };
  if (p.acceleratorType) {
    machineSpec.acceleratorType = p.acceleratorType;
    machineSpec.acceleratorCount = p.acceleratorCount;
  }
  return {
    machineSpec, replicaCount: i === 0 ? '1' : String(p.replicaCount),
    diskSpec: { bootDiskType: p.bootDiskType, bootDiskSizeGb: p.bootDiskSizeGb }, ...codeOf(f),
  };
}

// The CustomJobSpec of the form: pools up to the last enabled one (skipped ones are {}).
export function jobSpecOf(f: CreateForm): Record<string, unknown> {
  const last = f.pools.reduce((n, p, i) => (p.enabled || i === 0 ? i : n), 0);
  const spec: Record<string, unknown> = {
    workerPoolSpecs: f.pools.slice(0, last + 1).map((p, i) => (p.enabled || i === 0 ? poolOf(f, p, i) : {})),
  };
  if (f.outputDir.trim()) spec.baseOutputDirectory = { outputUriPrefix: f.outputDir.trim() };
  if (f.serviceAccount.trim()) spec.serviceAccount = f.serviceAccount.trim();
  if (f.timeoutHours.trim()) {
    const hours = Number(f.timeoutHours);
    spec.scheduling = { timeout: isNaN(hours) ? f.timeoutHours.trim() : `${Math.round(hours * 3600)}s` };
  }
  return spec;
}

function paramOf(p: HpParam): Record<string, unknown> {
  const out: Record<string, unknown> = { parameterId: p.id.trim() };
  const values = p.values.split(',').map((v) => v.trim()).filter((v) => v !== '');
  if (p.type === 'DOUBLE') out.doubleValueSpec = { minValue: num(p.min), maxValue: num(p.max) };
  if (p.type === 'INTEGER') out.integerValueSpec = { minValue: String(p.min).trim(), maxValue: String(p.max).trim() };
  if (p.type === 'DISCRETE') out.discreteValueSpec = { values: values.map(num) };
  if (p.type === 'CATEGORICAL') out.categoricalValueSpec = { values };
  if (p.scale && p.type !== 'CATEGORICAL') out.scaleType = p.scale;
  return out;
}

export function studySpecOf(f: CreateForm): Record<string, unknown> {
  return {
    metrics: f.metrics.map((m) => ({ metricId: m.id.trim(), goal: m.goal })),
    parameters: f.params.map(paramOf),
    ...(f.algorithm ? { algorithm: f.algorithm } : {}),
  };
}

// The collection the form creates in and the request body.
export function requestOf(f: CreateForm): { collection: string; body: Record<string, unknown> } {
  const labels = labelsOf(f.labels);
  const common = { displayName: f.displayName.trim(), ...(labels ? { labels } : {}) };
  if (f.kind === 'customJob') return { collection: 'customJobs', body: { ...common, jobSpec: jobSpecOf(f) } };
  if (f.kind === 'hpTuningJob') {
    return { collection: 'hyperparameterTuningJobs', body: {
      ...common, studySpec: studySpecOf(f), maxTrialCount: f.maxTrialCount, parallelTrialCount: f.parallelTrialCount,
      ...(f.maxFailedTrialCount ? { maxFailedTrialCount: f.maxFailedTrialCount } : {}), trialJobSpec: jobSpecOf(f) } };
  }
  const model: Record<string, unknown> = { displayName: (f.modelName || f.displayName).trim() };
  if (f.modelDescription.trim()) model.description = f.modelDescription.trim();
  if (f.servingImageUri.trim()) model.containerSpec = { imageUri: f.servingImageUri.trim() };
  return { collection: 'trainingPipelines', body: {
    ...common, trainingTaskDefinition: CUSTOM_TASK, trainingTaskInputs: jobSpecOf(f), modelToUpload: model,
    ...(f.parentModel ? { parentModel: f.parentModel } : {}) } };
}

// Where a request field path of the server's fieldViolations points in the form: the job spec's
// paths under every request shape become "spec.…", so one form field serves all three kinds.
export function formPathOf(field: string): string {
  return field.replace(/^(jobSpec|trainingTaskInputs|trialJobSpec)(\.|$)/, 'spec$2');
}
