// The server's field paths in the create form's words: a violation of
// "trainingTaskInputs.workerPoolSpecs[1].replicaCount" reads "Worker pool 1 — workers › Replica
// count", as the form labels that field, and so does every such path inside a message ("put more
// replicas in workerPoolSpecs[1]" → "… in Worker pool 1 — workers"). No DOM: unit-tested in
// web/test/console_unit_test.mjs.
import { POOL_ROLES } from './model';

// A pool's fields, by their path under workerPoolSpecs[N] (the labels of pools.ts and create_page.ts).
const POOL_FIELDS: Record<string, string> = {
  'machineSpec.machineType': 'Machine type',
  'machineSpec.acceleratorType': 'Accelerator type',
  'machineSpec.acceleratorCount': 'Accelerator count',
  machineSpec: 'Machine type',
  replicaCount: 'Replica count',
  'diskSpec.bootDiskType': 'Disk type',
  'diskSpec.bootDiskSizeGb': 'Disk size (GB)',
  diskSpec: 'Disk',
  'containerSpec.imageUri': 'Container image',
  'containerSpec.command': 'Command',
  'containerSpec.args': 'Arguments',
  'containerSpec.env': 'Environment variables',
  containerSpec: 'Training container',
  'pythonPackageSpec.executorImageUri': 'Prebuilt container image',
  'pythonPackageSpec.packageUris': 'Python package URIs',
  'pythonPackageSpec.pythonModule': 'Python module',
  'pythonPackageSpec.args': 'Arguments',
  'pythonPackageSpec.env': 'Environment variables',
  pythonPackageSpec: 'Training code',
};

// The job spec's own fields and the request's top-level ones.
const FIELDS: Record<string, string> = {
  'spec.baseOutputDirectory.outputUriPrefix': 'Output directory',
  'spec.baseOutputDirectory': 'Output directory',
  'spec.serviceAccount': 'Service account',
  'spec.scheduling.timeout': 'Timeout (hours)',
  'spec.workerPoolSpecs': 'Worker pools',
  displayName: 'Name',
  labels: 'Labels',
  parentModel: 'Model',
  'modelToUpload.displayName': 'Model name',
  'modelToUpload.description': 'Model description',
  'modelToUpload.containerSpec.imageUri': 'Prediction container image',
  maxTrialCount: 'Maximum trials',
  parallelTrialCount: 'Parallel trials',
  maxFailedTrialCount: 'Maximum failed trials',
  'studySpec.algorithm': 'Search algorithm',
};

export const poolWords = (i: number) => `Worker pool ${i} — ${POOL_ROLES[i] ?? 'extra pool'}`;

// The label of the longest key of `table` that `path` is or starts with; null when none is.
function labelOf(table: Record<string, string>, path: string): string | null {
  let best: string | null = null;
  for (const k of Object.keys(table)) {
    const under = path === k || path.startsWith(`${k}.`) || path.startsWith(`${k}[`);
    if (under && (best === null || k.length > best.length)) best = k;
  }
  return best === null ? null : table[best];
}

// A request field path in the form's words; a path the form has no words for comes back as is.
export function fieldWordsOf(field: string): string {
  const path = field.replace(/^(jobSpec|trainingTaskInputs|trialJobSpec)(\.|$)/, 'spec$2');
  const pool = path.match(/^(?:spec\.)?workerPoolSpecs\[(\d+)\](?:\.(.+))?$/);
  if (pool) {
    const rest = pool[2] ? labelOf(POOL_FIELDS, pool[2]) ?? pool[2] : '';
    return rest ? `${poolWords(Number(pool[1]))} › ${rest}` : poolWords(Number(pool[1]));
  }
  return labelOf(FIELDS, path) ?? field;
}

const POOL_PATH = /\b(?:(?:jobSpec|trainingTaskInputs|trialJobSpec|spec)\.)?workerPoolSpecs\[\d+\](?:\.[A-Za-z_]\w*(?:\[\d+\])?)*/g;

// A server message with every worker-pool path in it in the form's words.
export function inFormWords(message: string): string {
  return message.replace(POOL_PATH, (p) => fieldWordsOf(p));
}
