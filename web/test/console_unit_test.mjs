// Unit tests of the console's DOM-free modules (ctest console_unit_test, label unit): the chart
// number formats, which chart a scalar series goes on and its smoothing, the create form's
// requests, the field paths of the server's violations (and their words in the form), the gcloud
// command line, the images offered, a real trainer's metrics.json as the model page shows it,
// the serving figures of /metrics, the deploy and predict requests, and batch predictions. The
// modules are transpiled with the TypeScript compiler of web/node_modules and imported.
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
const modules = ['format', 'curve_model', 'create/model', 'create/gcloud', 'create/field_words', 'create/images',
  'metrics_model', 'prometheus', 'serving_model', 'batch_model'];
for (const m of modules) {
  const src = fs.readFileSync(path.join(web, 'src', `${m}.ts`), 'utf8');
  const js = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2020 } })
    .outputText.replace(/from '(\.\.?\/[^']+)'/g, "from '$1.mjs'");
  fs.mkdirSync(path.dirname(path.join(out, `${m}.mjs`)), { recursive: true });
  fs.writeFileSync(path.join(out, `${m}.mjs`), js);
}
const load = (m) => import(pathToFileURL(path.join(out, `${m}.mjs`)).href);
const { fmtCreator, fmtTick, fmtValue } = await load('format');
const { chartOf, smooth } = await load('curve_model');
const model = await load('create/model');
const { commandLineOf, shellWord } = await load('create/gcloud');
const { fieldWordsOf, inFormWords } = await load('create/field_words');
const { imageChoices } = await load('create/images');
const { metricsViewOf } = await load('metrics_model');
const { parsePrometheus, servingFigures, totalOf } = await load('prometheus');
const { deployRequestOf, predictBodyOf } = await load('serving_model');
const batch = await load('batch_model');
const { describeCounts, fmtLatency } = await load('format');

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

test('pool 0, the chief, is always sent with 1 replica', () => {
  const f = seedForm('customJob');
  f.pools[0].replicaCount = 2;
  f.pools[1].replicaCount = 3;
  const pools = model.requestOf(f).body.jobSpec.workerPoolSpecs;
  assert.deepEqual(pools.map((p) => p.replicaCount), ['1', '3']);
});

test('the server\'s field paths read as the form labels them', () => {
  assert.deepEqual(['trainingTaskInputs.workerPoolSpecs[1].replicaCount', 'jobSpec.workerPoolSpecs[0].machineSpec.machineType',
    'trialJobSpec.workerPoolSpecs[2].containerSpec.env[0].name', 'workerPoolSpecs[3]', 'jobSpec.workerPoolSpecs[1].diskSpec.bootDiskSizeGb',
    'trainingTaskInputs.baseOutputDirectory.outputUriPrefix', 'modelToUpload.displayName', 'studySpec.metrics[0].metricId',
    'workerPoolSpecs[1].somethingNew'].map(fieldWordsOf), [
    'Worker pool 1 — workers › Replica count', 'Worker pool 0 — chief › Machine type',
    'Worker pool 2 — parameter servers › Environment variables', 'Worker pool 3 — evaluators',
    'Worker pool 1 — workers › Disk size (GB)', 'Output directory', 'Model name', 'studySpec.metrics[0].metricId',
    'Worker pool 1 — workers › somethingNew']);
  assert.equal(inFormWords('the primary pool (workerPoolSpecs[0]) must have exactly 1 replica, got 2; put more replicas in workerPoolSpecs[1]'),
    'the primary pool (Worker pool 0 — chief) must have exactly 1 replica, got 2; put more replicas in Worker pool 1 — workers');
  assert.equal(inFormWords('trainingTaskInputs.workerPoolSpecs[1].replicaCount: must be between 1 and 1000, got 0.'),
    'Worker pool 1 — workers › Replica count: must be between 1 and 1000, got 0.');
  assert.equal(inFormWords('displayName: required'), 'displayName: required');
});

test('the image fields offer the server\'s catalog, then recent images, newest first', () => {
  const catalog = [
    { imageUri: 'trainyard/bert-sentiment:latest', description: 'trainyard-bert train', use: 'TRAINING' },
    { imageUri: 'trainyard/bert-serve:latest', description: 'trainyard-bert serve', use: 'SERVING' },
    { imageUri: 'us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4.py310:latest', use: 'TRAINING' }];
  const job = (t, ...images) => ({ createTime: t, jobSpec: { workerPoolSpecs: images.map((i) => (i ? { containerSpec: { imageUri: i } } : {})) } });
  const jobs = [job('2026-01-01T00:00:00Z', 'old:1'), job('2026-03-01T00:00:00Z', 'new:2', 'new:2'),
    job('2026-02-01T00:00:00Z', 'trainyard/bert-sentiment:latest', null),
    { ...job('2026-04-01T00:00:00Z', 'trainyard/bert-serve:latest'), labels: { 'trainyard-endpoint': '7' } },
    { ...job('2026-05-01T00:00:00Z', 'trainyard/bert-batch-predict'), labels: { 'trainyard-batch-prediction': '8' } }];
  assert.deepEqual(imageChoices(catalog, jobs, 'TRAINING').map((c) => `${c.value}|${c.label}`), [
    'trainyard/bert-sentiment:latest|trainyard-bert train', 'us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4.py310:latest|',
    'new:2|used recently', 'old:1|used recently']);
  assert.deepEqual(imageChoices([], jobs, 'SERVING').map((c) => c.value), ['trainyard/bert-serve:latest']);
  assert.deepEqual(imageChoices([], [], 'TRAINING'), []);
});

test('a real trainer\'s metrics.json: history charted, per-class and confusion matrix as tables', () => {
  const metrics = JSON.parse(fs.readFileSync(path.join(web, 'test', 'testdata', 'trainyard_bert_metrics.json'), 'utf8'));
  const view = metricsViewOf(metrics);
  const longest = Math.max(...view.rows.map(([k, v]) => k.length + v.length));
  assert.ok(longest < 60, `no row is a line of JSON (longest ${longest})`);
  assert.deepEqual(view.histories.map((h) => [h.key, h.x, h.xs.length, h.series.map(([n]) => n).join()]),
    [['history', 'epoch', metrics.history.length, 'seconds,train_accuracy,train_loss,valid_accuracy,valid_loss,valid_macro_f1']]);
  assert.deepEqual(view.tables.map((t) => `${t.key}: ${t.columns.join()}`), [
    'history: epoch,seconds,train_accuracy,train_loss,valid_accuracy,valid_loss,valid_macro_f1',
    'validation.confusion_matrix: true \\ predicted,0,1',
    'validation.per_class: label,f1,precision,recall,support']);
  const perClass = view.tables[2];
  assert.deepEqual(perClass.rows.map((r) => r[0]), ['0', '1']);
  assert.deepEqual(view.tables[1].rows.map((r) => r[0]), ['0', '1']);
  assert.ok(view.rows.some(([k, v]) => k === 'labels' && v === '0, 1'));
  assert.ok(view.rows.some(([k]) => k === 'validation.accuracy'));
});

test('metrics.json shapes other than the trainer\'s', () => {
  const view = metricsViewOf({ accuracy: 0.91, steps: [{ step: 10, loss: 1 }, { step: 20, loss: null }], tags: ['a', 'b'],
    mixed: [1, { a: 1 }], grid: [[1, 2], [3, 4, 5]] });
  assert.deepEqual(view.rows, [['accuracy', '0.91'], ['tags', 'a, b'], ['mixed', '[1,{"a":1}]']]);
  assert.deepEqual(view.histories.map((h) => h.series), [[['loss', [1, null]]]]);
  assert.deepEqual(view.tables.map((t) => t.columns.join()), ['step,loss', ',0,1,2']);
});

// GET /metrics of a server with one deployed model (the lines it really writes).
const METRICS = `# HELP trainyard_serving_replicas Serving replicas of a deployed model.
# TYPE trainyard_serving_replicas gauge
trainyard_serving_replicas{endpoint="projects/local/locations/us-central1/endpoints/17",deployed_model="83"} 2
trainyard_serving_healthy_replicas{endpoint="projects/local/locations/us-central1/endpoints/17",deployed_model="83"} 1
trainyard_serving_in_flight{endpoint="projects/local/locations/us-central1/endpoints/17",deployed_model="83"} 0
trainyard_predictions_total{endpoint="projects/local/locations/us-central1/endpoints/17",deployed_model="83"} 4
trainyard_prediction_failures_total{endpoint="projects/local/locations/us-central1/endpoints/17",deployed_model="83"} 1
trainyard_prediction_seconds_total{endpoint="projects/local/locations/us-central1/endpoints/17",deployed_model="83"} 0.34999999999999998
trainyard_predictions_total{endpoint="projects/local/locations/us-central1/endpoints/170",deployed_model="9"} 7
trainyard_serving_replicas{endpoint="17",deployed_model="84"} 1
trainyard_http_requests_total{method="GET",route="/v1/{a}",code="200"} 12
trainyard_build_info{version="0.1 \\"x\\""} 1
trainyard_queue_length 0
not a sample line
`;

test('serving figures per deployed model from /metrics', () => {
  const samples = parsePrometheus(METRICS);
  assert.equal(samples.length, 11);
  assert.deepEqual(samples.find((s) => s.name === 'trainyard_build_info').labels, { version: '0.1 "x"' });
  const figures = servingFigures(samples, 'projects/local/locations/us-central1/endpoints/17');
  assert.deepEqual([...figures.keys()], ['83', '84']);
  const f = figures.get('83');
  assert.deepEqual([f.replicas, f.healthyReplicas, f.inFlight, f.predictions, f.failures, +f.meanLatencySeconds.toFixed(4)],
    [2, 1, 0, 4, 1, 0.0875]);
  assert.equal(figures.get('84').meanLatencySeconds, null);
  assert.deepEqual([totalOf(figures).predictions, totalOf(figures).replicas], [4, 3]);
  assert.deepEqual([fmtLatency(0.0875), fmtLatency(1.5), fmtLatency(null)], ['87.5 ms', '1.5 s', '—']);
});

test('the picker counts in words', () => {
  assert.equal(describeCounts({ customJobs: 1, models: 1, trainingPipelines: 2, endpoints: 3, other: 4 }),
    '1 job, 1 model, 2 pipelines, 3 endpoints, 4 other');
});

test('deploy asks for all the traffic; the test box wants a PredictRequest', () => {
  const body = deployRequestOf('projects/p/locations/l/models/m', 'bert',
    { endpoint: '', endpointName: 'e', displayName: '', machineType: 'n1-standard-2', minReplicaCount: 2, maxReplicaCount: 1 });
  assert.deepEqual(body, { deployedModel: { model: 'projects/p/locations/l/models/m', displayName: 'bert',
    dedicatedResources: { machineSpec: { machineType: 'n1-standard-2' }, minReplicaCount: 2, maxReplicaCount: 2 } },
  trafficSplit: { 0: 100 } });
  assert.deepEqual(predictBodyOf('{"instances": ["a great movie"]}').body, { instances: ['a great movie'] });
  assert.match(predictBodyOf('{"instances": ').problem, /^not JSON/);
  assert.match(predictBodyOf('["x"]').problem, /JSON object/);
  assert.match(predictBodyOf('{"instance": []}').problem, /instances/);
});

test('batch prediction: the request, progress and the custom job behind it', () => {
  const f = batch.newBatchForm('projects/p/locations/l/models/m', 'n1-standard-4');
  Object.assign(f, { displayName: ' b ', sourceUris: 'gs://b/in.jsonl\n\n gs://b/in2.jsonl ', outputUriPrefix: 'gs://b/out', maxReplicaCount: 2 });
  assert.deepEqual(batch.batchRequestOf(f), {
    displayName: 'b', model: 'projects/p/locations/l/models/m',
    inputConfig: { instancesFormat: 'jsonl', gcsSource: { uris: ['gs://b/in.jsonl', 'gs://b/in2.jsonl'] } },
    outputConfig: { predictionsFormat: 'jsonl', gcsDestination: { outputUriPrefix: 'gs://b/out' } },
    dedicatedResources: { machineSpec: { machineType: 'n1-standard-4' }, startingReplicaCount: 1, maxReplicaCount: 2 } });
  const p = batch.progressOf({ successfulCount: '1500', failedCount: '2', incompleteCount: '498' });
  assert.deepEqual([p.done, p.total, p.fraction, p.text], [1502, 2000, 0.751, '1,502 of 2,000 instances (2 failed)']);
  assert.deepEqual([batch.progressOf(undefined).fraction, batch.progressOf({}).text], [null, 'no instances counted yet']);
  const name = 'projects/p/locations/l/batchPredictionJobs/5';
  assert.equal(batch.backingJobOf({ name, labels: { 'trainyard-custom-job': '42' } }), 'projects/p/locations/l/customJobs/42');
  assert.equal(batch.backingJobOf({ name, trainyardInfo: { backingCustomJob: 'projects/p/locations/l/customJobs/7' } }),
    'projects/p/locations/l/customJobs/7');
  assert.equal(batch.backingJobOf({ name, labels: { team: 'x' }, model: 'projects/p/locations/l/models/m' }), null);
});

fs.rmSync(out, { recursive: true, force: true });
console.log(failures ? `${failures} test(s) failed` : 'all tests passed');
process.exit(failures ? 1 : 0);
