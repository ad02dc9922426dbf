// Unit tests of the console's DOM-free modules (ctest console_unit_test, label unit): the chart
// number formats, which chart a scalar series goes on and its smoothing, the create form's
// requests, the field paths of the server's violations, and the gcloud command line. The modules
// are transpiled with the TypeScript compiler of web/node_modules and imported.
//
//   node web/test/console_unit_test.mjs
// Prints "SKIPPED: <reason>" and exits 0 when typescript is not installed (npm ci in web/).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const web = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let ts;
try {
  ts = (await import('typescript')).default;
} catch (e) {
  console.log(`SKIPPED: typescript is not installed (npm ci in web/): ${e.message}`);
  process.exit(0);
}

// Transpiles src/<name>.ts (and what it imports among `modules`) into a temp dir as .mjs.
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'trainyard-console-unit-'));
const modules = ['format', 'curve_model', 'create/model', 'create/gcloud'];
for (const m of modules) {
  const src = fs.readFileSync(path.join(web, 'src', `${m}.ts`), 'utf8');
  const js = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2020 } })
    .outputText.replace(/from '(\.\/[^']+)'/g, "from '$1.mjs'");
  fs.mkdirSync(path.dirname(path.join(out, `${m}.mjs`)), { recursive: true });
  fs.writeFileSync(path.join(out, `${m}.mjs`), js);
}
const load = (m) => import(pathToFileURL(path.join(out, `${m}.mjs`)).href);
const { fmtCreator, fmtTick, fmtValue } = await load('format');
const { chartOf, smooth } = await load('curve_model');
const model = await load('create/model');
const { commandLineOf, shellWord } = await load('create/gcloud');

let failures = 0;
function test(name, fn) {
  try { fn(); console.log(`ok   ${name}`); } catch (e) { failures++; console.log(`FAIL ${name}\n${e.message}`); }
}

test('axis ticks keep small values readable', () => {
  // The learning-rate chart of seed 003: 5e-4 with ticks 1e-4 apart used to read "0".
  assert.deepEqual([4e-4, 5e-4, 6e-4].map((v) => fmtTick(v, 1e-4)), ['4e-4', '5e-4', '6e-4']);
  assert.deepEqual([0, 2.5e-4, 5e-4, 7.5e-4, 1e-3].map((v) => fmtTick(v, 2.5e-4)), ['0', '2.5e-4', '5e-4', '7.5e-4', '1e-3']);
  assert.deepEqual([0.0015, 0.002].map((v) => fmtTick(v, 0.0005)), ['1.5e-3', '2e-3']);
  assert.deepEqual([0.01, 0.015].map((v) => fmtTick(v, 0.005)), ['0.010', '0.015']);
  assert.deepEqual([2e6, 2.5e6].map((v) => fmtTick(v, 5e5)), ['2e6', '2.5e6']);
  assert.deepEqual([0, 0.25, 0.5].map((v) => fmtTick(v, 0.25)), ['0', '0.25', '0.50']);
  assert.deepEqual([100, 120].map((v) => fmtTick(v, 20)), ['100', '120']);
  assert.deepEqual([fmtValue(0.000512345), fmtValue(0.693147), fmtValue(null)], ['5.12e-4', '0.6931', '—']);
});

test('a creator reads as who, which token and from where', () => {
  assert.deepEqual([
    fmtCreator({ tokenId: '0123456789abcdef', project: 'p1', owner: 'ana', description: 'CI', callerIp: '10.0.0.7' }),
    fmtCreator({ tokenId: '0123456789abcdef', project: '*' }),
    fmtCreator({ anonymous: true, callerIp: '127.0.0.1' }),
    fmtCreator(undefined),
  ], [
    'ana (CI) · token 0123456789abcdef on p1 · from 10.0.0.7',
    'token 0123456789abcdef on *',
    'anonymous (server without --auth) · from 127.0.0.1',
    '—',
  ]);
});

test('train and validation series of one metric share a chart', () => {
  const got = [['.', 'epoch/train_loss'], ['.', 'epoch/valid_loss'], ['.', 'epoch/valid_macro_f1'],
    ['.', 'train/loss'], ['.', 'train/learning_rate'], ['train', 'epoch_loss'], ['validation', 'epoch_loss']]
    .map(([run, tag]) => { const c = chartOf(run, tag); return `${c.chart}:${c.label}`; });
  assert.deepEqual(got, ['epoch/loss:train', 'epoch/loss:valid', 'epoch/macro_f1:valid', 'loss:train',
    'learning_rate:train', 'epoch_loss:train', 'epoch_loss:validation']);
});

test('smoothing is a debiased moving average that skips gaps', () => {
  assert.deepEqual(smooth([1, 1, 1], 0.9).map((v) => +v.toFixed(6)), [1, 1, 1]);
  assert.deepEqual(smooth([0, null, 10], 0.5).map((v) => (v === null ? null : +v.toFixed(4))), [0, null, 6.6667]);
  assert.deepEqual(smooth([3, 4], 0), [3, 4]);
});

// The form of seed 004: a chief and one worker running a custom container.
function seedForm(kind) {
  const f = model.newForm(kind);
  f.displayName = 'multiworker-cassava';
  f.imageUri = 'gcr.io/my-project/multiworker:cassava';
  f.pools[1].enabled = true;
  f.pools[1].machineType = 'n1-standard-8';
  f.outputDir = 'gs://my-bucket/mwms';
  return f;
}

test('train new model is a TrainingPipeline whose inputs are the job spec', () => {
  const f = seedForm('pipeline');
  f.modelName = 'cassava';
  const { collection, body } = model.requestOf(f);
  const pool = (m) => ({ machineSpec: { machineType: m }, replicaCount: '1', diskSpec: { bootDiskType: 'pd-ssd', bootDiskSizeGb: 100 },
    containerSpec: { imageUri: 'gcr.io/my-project/multiworker:cassava' } });
  assert.equal(collection, 'trainingPipelines');
  assert.deepEqual(body, {
    displayName: 'multiworker-cassava', trainingTaskDefinition: model.CUSTOM_TASK,
    trainingTaskInputs: { workerPoolSpecs: [pool('n1-standard-4'), pool('n1-standard-8')],
      baseOutputDirectory: { outputUriPrefix: 'gs://my-bucket/mwms' } },
    modelToUpload: { displayName: 'cassava' },
  });
});

test('a skipped pool is sent empty and accelerators only when chosen', () => {
  const f = seedForm('customJob');
  f.pools[1].enabled = false;
  f.pools[2].enabled = true;
  f.pools[2].acceleratorType = 'NVIDIA_TESLA_T4';
  f.pools[2].acceleratorCount = 2;
  const pools = model.requestOf(f).body.jobSpec.workerPoolSpecs;
  assert.deepEqual([pools.length, pools[1], pools[2].machineSpec],
    [3, {}, { machineType: 'n1-standard-4', acceleratorType: 'NVIDIA_TESLA_T4', acceleratorCount: 2 }]);
});

test('an HP-tuning job carries the study and the trial spec', () => {
  const f = seedForm('hpTuningJob');
  f.metrics = [{ id: 'accuracy', goal: 'MAXIMIZE' }];
  f.params = [{ id: 'lr', type: 'DOUBLE', min: '0.0001', max: '0.1', values: '', scale: 'UNIT_LOG_SCALE' },
    { id: 'batch', type: 'DISCRETE', min: '', max: '', values: '16, 32', scale: '' },
    { id: 'opt', type: 'CATEGORICAL', min: '', max: '', values: 'adam,sgd', scale: 'UNIT_LINEAR_SCALE' }];
  f.algorithm = 'RANDOM_SEARCH';
  const { collection, body } = model.requestOf(f);
  assert.equal(collection, 'hyperparameterTuningJobs');
  assert.deepEqual(body.studySpec, {
    metrics: [{ metricId: 'accuracy', goal: 'MAXIMIZE' }],
    parameters: [{ parameterId: 'lr', doubleValueSpec: { minValue: 0.0001, maxValue: 0.1 }, scaleType: 'UNIT_LOG_SCALE' },
      { parameterId: 'batch', discreteValueSpec: { values: [16, 32] } },
      { parameterId: 'opt', categoricalValueSpec: { values: ['adam', 'sgd'] } }],
    algorithm: 'RANDOM_SEARCH',
  });
  assert.deepEqual([body.maxTrialCount, body.parallelTrialCount, body.trialJobSpec.workerPoolSpecs.length], [4, 2, 2]);
});

test('violation paths of every request shape map to the form', () => {
  assert.deepEqual(['jobSpec.workerPoolSpecs[0].replicaCount', 'trainingTaskInputs.workerPoolSpecs[1].machineSpec',
    'trialJobSpec', 'displayName', 'studySpec.metrics[0].metricId'].map(model.formPathOf),
  ['spec.workerPoolSpecs[0].replicaCount', 'spec.workerPoolSpecs[1].machineSpec', 'spec', 'displayName',
    'studySpec.metrics[0].metricId']);
});

test('the gcloud command line says what the form says', () => {
  const f = seedForm('customJob');
  f.command = 'sh\n-c\necho a,b';
  f.labels = [{ key: 'team', value: 'vision' }];
  const cmd = commandLineOf(f, 'projects/my-project/locations/europe-west4', false, 'http://h:1');
  assert.equal(cmd.command, [
    'gcloud ai custom-jobs create', '--project=my-project', '--region=europe-west4', '--display-name=multiworker-cassava',
    '--worker-pool-spec=machine-type=n1-standard-4,replica-count=1,container-image-uri=gcr.io/my-project/multiworker:cassava',
    '--worker-pool-spec=machine-type=n1-standard-8,replica-count=1,container-image-uri=gcr.io/my-project/multiworker:cassava',
    "--command='^|^sh|-c|echo a,b'", '--labels=team=vision', '--config=job_spec.yaml'].join(' \\\n    '));
  assert.deepEqual(JSON.parse(cmd.configText), { baseOutputDirectory: { outputUriPrefix: 'gs://my-bucket/mwms' } });
  f.env = [{ key: 'EPOCHS', value: '2' }];
  assert.ok(JSON.parse(commandLineOf(f, 'projects/p/locations/l', false, '').configText).workerPoolSpecs[0].containerSpec.env);
  assert.equal(shellWord("it's"), `'it'\\''s'`);
  const pipeline = commandLineOf(seedForm('pipeline'), 'projects/p/locations/l', true, 'http://h:1');
  assert.match(pipeline.command, /Authorization: Bearer \$TOKEN.*http:\/\/h:1\/v1\/projects\/p\/locations\/l\/trainingPipelines$/s);
});

fs.rmSync(out, { recursive: true, force: true });
console.log(failures ? `${failures} test(s) failed` : 'all tests passed');
process.exit(failures ? 1 : 0);
