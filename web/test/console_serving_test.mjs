// Browser test of the console's serving pages (ctest console_serving_browser_test, label
// integration), with a REAL trainer: `trainyard-bert train` fine-tunes BERT-Tiny on the sample data
// (data/sample, scripts/fetch-sample-data.sh; a generated toy set where it is missing) into a
// bucket, the model is uploaded, and the real `trainyard server` (127.0.0.1 port 0, local
// executor) serves it with `trainyard-bert serve` replicas. Debian's chromium through
// playwright-core checks:
//   - the model page shows the trainer's metrics.json: scalars as rows, the per-epoch history as
//     charts (train and valid on one) and a table, per_class and the confusion matrix as tables;
//   - the models list names the training pipeline (a pipeline of the trainer image) that made a
//     model, linked;
//   - Deploy on the model page (a new endpoint, a machine type) shows progress and links the
//     endpoint; its page lists the deployed model with its replicas and traffic; a test prediction
//     answers the trainer's labels; the prediction is counted with a latency; Undeploy empties it;
//     "Create endpoint" on the endpoints list makes an empty one;
//   - the batch predictions page: a job created from the browser over a small JSON-lines file
//     runs to SUCCEEDED — or, on a server without the API, the page shows the server's error and
//     the output says "SKIPPED: batch prediction walk: …" for that part only;
//   - every page (jobs, job, HP tuning, study, pipelines, pipeline, models, model, the create
//     steps, endpoints, endpoint, batch predictions) at 390 and 1400 px wide: nothing scrolls
//     sideways, and every form field (deploy, test prediction, batch create) has a label;
//     screenshots console-serving-<width>-<page>.png in --out;
//   - no request leaves the server's origin; no console errors.
//
//   node web/test/console_serving_test.mjs --trainyard build/tools/trainyard --out DIR
//     [--sample-data data/sample] [--chromium /usr/bin/chromium] [--console-dist web/dist]
// Prints "SKIPPED: <reason>" and exits 0 without chromium, playwright-core or trainyard-bert.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  arg, checker, chromiumOrSkip, fitsWidth, launchOptions, restClient, sleep, startServer, unlabelled, waitFor, waitInPage, watch,
} from './harness.mjs';

const source = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const trainyard = path.resolve(arg('trainyard', 'build/tools/trainyard'));
const bert = path.join(path.dirname(trainyard), 'trainyard-bert');
const outDir = path.resolve(arg('out', 'build/test-artifacts'));
const sampleDir = path.resolve(arg('sample-data', path.join(source, 'data', 'sample')));
const chromiumPath = arg('chromium', '/usr/bin/chromium');
const chromium = await chromiumOrSkip(chromiumPath);
if (!fs.existsSync(bert)) {
  console.log(`SKIPPED: ${bert} not found (a LibTorch build makes it)`);
  process.exit(0);
}
fs.mkdirSync(outDir, { recursive: true });
for (const f of fs.readdirSync(outDir)) if (/^console-serving-.*\.png$/.test(f)) fs.rmSync(path.join(outDir, f));

const PARENT = 'projects/local/locations/us-central1';
const state = checker();
const check = state.check;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'trainyard-console-serving-'));
const buckets = path.join(work, 'buckets');
const data = path.join(buckets, 'bkt', 'data');
fs.mkdirSync(data, { recursive: true });

// --- the data: 300 training and 150 validation rows of the sample, or a toy set ---
function prepareData() {
  const csv = path.join(sampleDir, 'uci_sentiment.csv');
  if (fs.existsSync(csv) && fs.existsSync(path.join(sampleDir, 'vocab.txt'))) {
    const rows = fs.readFileSync(csv, 'utf8').trim().split('\n');
    fs.writeFileSync(path.join(data, 'train.csv'), [rows[0], ...rows.slice(1, 301)].join('\n') + '\n');
    fs.writeFileSync(path.join(data, 'valid.csv'), [rows[0], ...rows.slice(301, 451)].join('\n') + '\n');
    return path.join(sampleDir, 'vocab.txt');
  }
  console.log(`NOTE: ${csv} missing (scripts/fetch-sample-data.sh): training on a generated toy set`);
  const vocab = path.join(work, 'vocab.txt');
  fs.writeFileSync(vocab, '[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ngood\nbad\ngreat\nawful\nmovie\nthe\na\n');
  const rows = Array.from({ length: 64 }, (_, i) => (i % 2 ? 'a great movie,1' : 'the awful movie,0'));
  for (const f of ['train.csv', 'valid.csv']) fs.writeFileSync(path.join(data, f), ['text,label', ...rows].join('\n') + '\n');
  return vocab;
}
const vocab = prepareData();
const TRAIN_ARGS = [`--vocab=${vocab}`, '--text-column=text', '--label-column=label', '--batch-size=32', '--threads=1'];

// --- the real trainer, straight into the bucket ---
const trained = spawnSync(bert, ['train', `--job-dir=${path.join(buckets, 'bkt', 'models', 'bert')}`,
  `--training-file=${path.join(data, 'train.csv')}`, `--validation-file=${path.join(data, 'valid.csv')}`, '--epochs=3',
  ...TRAIN_ARGS], { encoding: 'utf8' });
if (trained.status !== 0) {
  console.log(`FAIL trainyard-bert train: ${trained.stderr.slice(-2000)}`);
  process.exit(1);
}

// --- the server: local executor, trainyard-bert next to it and on PATH ---
const server = await startServer(trainyard,
  ['--data-dir', path.join(work, 'server'), '--allow-root-replicas', '--executor', 'local', '--gpus', '0', '--no-cgroups'],
  { TRAINYARD_BUCKET_ROOT: buckets, PATH: `${path.dirname(bert)}:${process.env.PATH}` },
  path.join(outDir, 'console_serving_test.server.err'));
const base = server.base;
const rest = restClient(base, null);
const uploaded = await rest('POST', `/v1/${PARENT}/models:upload`, { model: {
  displayName: 'bert-sentiment', artifactUri: 'gs://bkt/models/bert', containerSpec: { imageUri: 'trainyard/bert-serve:latest' } } });
const MODEL = uploaded.response.model;

// A job, an HP-tuning job and a training pipeline of the trainer image, for the pages they have.
const pool = (command) => ({ machineSpec: { machineType: 'n1-standard-1' }, replicaCount: '1',
  containerSpec: { imageUri: 'local', command: ['sh', '-c', command] } });
const job = await rest('POST', `/v1/${PARENT}/customJobs`, { displayName: 'serving-test-job',
  jobSpec: { workerPoolSpecs: [pool('echo hello from the job')] } });
const TRIAL = 'for a in "$@"; do case $a in --lr=*) echo "accuracy=${a#--lr=}";; esac; done';
const study = await rest('POST', `/v1/${PARENT}/hyperparameterTuningJobs`, { displayName: 'serving-test-study',
  maxTrialCount: 2, parallelTrialCount: 2, studySpec: { metrics: [{ metricId: 'accuracy', goal: 'MAXIMIZE' }],
    algorithm: 'RANDOM_SEARCH', parameters: [{ parameterId: 'lr', doubleValueSpec: { minValue: 0.1, maxValue: 0.9 } }] },
  trialJobSpec: { workerPoolSpecs: [{ ...pool(TRIAL), containerSpec: { imageUri: 'local', command: ['sh', '-c', TRIAL, 'trial'] } }] },
});
const pipeline = await rest('POST', `/v1/${PARENT}/trainingPipelines`, { displayName: 'bert-pipeline',
  trainingTaskDefinition: 'gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml',
  trainingTaskInputs: { baseOutputDirectory: { outputUriPrefix: 'gs://bkt/pipeline' }, workerPoolSpecs: [{
    machineSpec: { machineType: 'n1-standard-1' }, replicaCount: '1', containerSpec: { imageUri: 'trainyard/bert-sentiment:latest',
      args: ['--training-file=gs://bkt/data/train.csv', '--validation-file=gs://bkt/data/valid.csv', '--epochs=1', ...TRAIN_ARGS] } }] },
  modelToUpload: { displayName: 'bert-from-pipeline' } });

const browser = await chromium.launch(launchOptions(chromiumPath));
const foreign = [];
const consoleErrors = [];
const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
const page = await context.newPage();
// 404: GET /v1/containerImages of an older server; 404/501: batchPredictionJobs of a server without them.
watch(page, base, foreign, consoleErrors, /status of (404|501)/);
page.setDefaultTimeout(30000);
const pages = new Map();  // a name for the screenshots -> hash, for the width pass
const visit = async (name, hash, selector) => {
  await page.goto(`${base}/#/${hash}`);
  if (selector) await page.waitForSelector(selector);
  pages.set(name, hash);
};

async function modelPageShowsTheTrainersMetrics() {
  await visit('model', MODEL, 'table.metrics tr[data-metric="validation.accuracy"]');
  const metrics = JSON.parse(fs.readFileSync(path.join(buckets, 'bkt', 'models', 'bert', 'metrics.json'), 'utf8'));
  await page.waitForSelector('.chart[data-history="loss"][data-series="train,valid"] canvas');
  check(true, 'the history is charted: train and valid loss on one chart');
  const historyRows = await page.$$eval('[data-metric-table="history"] tbody tr', (rs) => rs.length);
  check(historyRows === metrics.history.length, `the history is a table too (${historyRows} epochs)`);
  const perClass = await page.$$eval('[data-metric-table="validation.per_class"] thead th', (ths) => ths.map((t) => t.textContent).join());
  check(perClass === 'label,f1,precision,recall,support', `per_class is a table (${perClass})`);
  check(await page.isVisible('[data-metric-table="validation.confusion_matrix"]'), 'the confusion matrix is a table');
  const longest = await page.$$eval('table.metrics td', (tds) => Math.max(...tds.map((t) => t.textContent.length)));
  check(longest < 60, `no metric is printed as a line of JSON (longest value ${longest} characters)`);
}

async function modelsListNamesThePipeline() {
  const p = await waitFor('the pipeline to end', async () => {
    const got = await rest('GET', `/v1/${pipeline.name}`);
    return /SUCCEEDED|FAILED|CANCELLED/.test(got.state) ? got : null;
  }, 240000);
  check(p.state === 'PIPELINE_STATE_SUCCEEDED', `the trainer's pipeline ran (${p.state} ${p.error?.message ?? ''})`);
  await visit('models', `${PARENT}/models`, 'table.models tr[data-model]');
  const id = p.modelToUpload.name.split('/').pop();
  await waitInPage(page, (m) => document.querySelector(`tr[data-model="${m}"] a[data-link=pipeline]`)?.textContent === 'bert-pipeline', 10000, id);
  check(true, 'the models list names the pipeline that made a model (its displayName, linked)');
  pages.set('pipelines', `${PARENT}/trainingPipelines`);
  pages.set('pipeline', pipeline.name);
}

// Deploy from the model page into a new endpoint; returns the endpoint's name.
async function deployFromTheModelPage() {
  await visit('model', MODEL, '[data-action=open-deploy]');
  await page.click('[data-action=open-deploy]');
  await page.waitForSelector('[data-panel=deploy] [data-field=endpoint]');
  await page.fill('[data-panel=deploy] [data-field=displayName]', 'reviews');
  await page.selectOption('[data-panel=deploy] [data-field="deployedModel.dedicatedResources.machineSpec.machineType"]', 'n1-standard-1');
  await page.screenshot({ path: path.join(outDir, 'console-serving-deploy-form.png'), fullPage: true });
  await page.click('[data-action=deploy]');
  await page.waitForSelector('.deploy-status .state-msg-loading');
  check(true, 'deploy shows its progress');
  await page.waitForSelector('.deploy-status a[data-link=endpoint], .deploy-status .state-msg-error', { timeout: 120000 });
  const failed = await page.$('.deploy-status .state-msg-error');
  check(!failed, `the deployment finished (${failed ? await failed.textContent() : 'linked to its endpoint'})`);
  await page.click('.deploy-status a[data-link=endpoint]');
  await page.waitForSelector('tr[data-deployed-model]');
  return page.evaluate(() => location.hash.slice(2));
}

async function endpointPredictsAndCounts(endpoint) {
  pages.set('endpoint', endpoint);
  await waitInPage(page, () => /^1 of 1 healthy/.test(document.querySelector('td[data-replicas]')?.textContent ?? ''), 30000);
  check(true, 'the endpoint page shows 1 of 1 replicas healthy');
  check((await page.textContent('[data-traffic]')).endsWith(': 100%'), 'the deployed model has all the traffic');
  check((await page.inputValue('#predict-body')) === '{"instances": ["a great movie"]}', 'the test box is prefilled');
  await page.click('[data-action=predict]');
  await page.waitForSelector('[data-predict=result], .predict .state-msg-error');
  const answer = JSON.parse(await page.textContent('[data-predict=result]').catch(() => '{}'));
  const labels = JSON.parse(fs.readFileSync(path.join(buckets, 'bkt', 'models', 'bert', 'labels.json'), 'utf8'));
  const known = Object.values(labels.id2label ?? {}).map(String);
  check(answer.predictions?.length === 1 && known.includes(String(answer.predictions[0].label)),
    `the test prediction answers one of the trainer's labels (${JSON.stringify(answer.predictions)})`);
  await page.fill('#predict-body', '{"instance": ["x"]}');
  await page.click('[data-action=predict]');
  await page.waitForSelector('.predict .state-msg-error');
  check(/instances/.test(await page.textContent('.predict .state-msg-error')), 'a malformed request shows why');
  await waitInPage(page, () => document.querySelector('td[data-predictions]')?.textContent === '1' &&
    /ms|s$/.test(document.querySelector('td[data-latency]')?.textContent ?? ''), 15000);
  check(true, 'the prediction is counted, with its mean latency (from /metrics)');
  await page.screenshot({ path: path.join(outDir, 'console-serving-endpoint.png'), fullPage: true });
  await visit('endpoints', `${PARENT}/endpoints`, 'table.endpoints tr[data-endpoint]');
  check((await page.textContent('table.endpoints')).includes('bert-sentiment'), 'the endpoints list shows the deployed model');
}

async function createEndpointFromTheList() {
  await visit('endpoints', `${PARENT}/endpoints`, '[data-action=create-endpoint]:visible');
  await page.click('[data-action=create-endpoint]');
  await page.fill('#new-endpoint-name', 'empty-endpoint');
  await page.click('form.create-endpoint button[type=submit]');
  await waitInPage(page, () => /\/endpoints\/[^/]+$/.test(location.hash));
  await page.waitForSelector('.deployed .state-msg-empty');
  check((await page.textContent('.job-header h1')) === 'empty-endpoint', 'an endpoint created from the list opens, empty');
}

async function undeployFromTheEndpointPage(endpoint) {
  await visit('endpoint', endpoint, 'tr[data-deployed-model] [data-action=undeploy]');
  page.once('dialog', (d) => d.accept());
  await page.click('[data-action=undeploy]');
  await page.waitForSelector('.deployed .state-msg-empty', { timeout: 60000 });
  const e = await rest('GET', `/v1/${endpoint}`);
  check(!(e.deployedModels ?? []).length, 'undeploy from the UI empties the endpoint');
}

async function batchPredictionWalk() {
  const probe = await fetch(`${base}/v1/${PARENT}/batchPredictionJobs`);
  await visit('batch-predictions', `${PARENT}/batchPredictionJobs`, '#app .table-wrap > :not(.state-msg-loading)');
  if (probe.status === 404 || probe.status === 501) {
    check(await page.isVisible('.table-wrap .state-msg-error'), 'a server without the API: the list shows its error');
    console.log('SKIPPED: batch prediction walk: the server has no batchPredictionJobs API');
    return;
  }
  fs.mkdirSync(path.join(buckets, 'bkt', 'batch'), { recursive: true });
  fs.writeFileSync(path.join(buckets, 'bkt', 'batch', 'reviews.jsonl'), '"a great movie"\n"an awful movie"\n"the best phone"\n');
  await page.click('[data-action=open-batch-create]');
  await page.waitForSelector('[data-panel=batch-create] [data-field=model]');
  await page.fill('[data-panel=batch-create] [data-field=displayName]', 'reviews-batch');
  await page.selectOption('[data-panel=batch-create] [data-field=model]', MODEL);
  await page.fill('[data-field="inputConfig.gcsSource.uris"]', 'gs://bkt/batch/reviews.jsonl');
  await page.fill('[data-field="outputConfig.gcsDestination.outputUriPrefix"]', 'gs://bkt/batch/out');
  await page.selectOption('[data-field="dedicatedResources.machineSpec.machineType"]', 'n1-standard-1');
  await page.click('[data-action=create-batch]');
  await waitInPage(page, () => /\/batchPredictionJobs\/[^/?]+$/.test(location.hash));
  pages.set('batch-prediction', await page.evaluate(() => location.hash.slice(2)));
  await waitInPage(page, () => /SUCCEEDED|FAILED|CANCELLED/.test(document.querySelector('.job-header .badge')?.textContent ?? ''), 240000);
  const badge = await page.textContent('.job-header .badge');
  check(badge === 'SUCCEEDED', `the batch prediction created in the browser ran to ${badge}`);
  check((await page.getAttribute('.progress', 'data-progress')) === '1.000', 'its progress bar is full');
  check(!(await page.textContent('[data-output]')).includes('not written yet'), 'its output directory is shown');
}

// Every page at 390 and 1400 px: nothing wider than the screen; a screenshot of each.
async function everyPageFits() {
  // [name, hash, a button to press first]
  const all = [['jobs', `${PARENT}/customJobs`], ['job', job.name], ['hp-tuning', `${PARENT}/hyperparameterTuningJobs`],
    ['study', study.name], ...[...pages.entries()], ['model-deploy', MODEL, '[data-action=open-deploy]'],
    ['batch-create', `${PARENT}/batchPredictionJobs?create=1&model=${encodeURIComponent(MODEL)}`]];
  const wide = [];
  const noLabel = [];
  for (const width of [390, 1400]) {
    await page.setViewportSize({ width, height: 900 });
    for (const [name, hash, press] of all) {
      await page.goto(`${base}/#/${hash}`);
      await page.waitForSelector('#app > *:not(.state)');
      if (press) await page.click(press);
      await page.waitForTimeout(600);  // lets asynchronous parts (charts, tables, metrics, forms) render
      if (!(await fitsWidth(page))) wide.push(`${name}@${width}`);
      if (width === 390) noLabel.push(...(await unlabelled(page)).map((u) => `${name}: ${u}`));
      await page.screenshot({ path: path.join(outDir, `console-serving-${width}-${name}.png`), fullPage: true });
    }
    for (const step of ['method', 'details', 'code', 'compute', 'options', 'review']) {
      await page.goto(`${base}/#/${PARENT}/create`);
      await page.click(`[data-goto=${step}]`);
      await page.waitForTimeout(200);
      if (!(await fitsWidth(page))) wide.push(`create-${step}@${width}`);
      await page.screenshot({ path: path.join(outDir, `console-serving-${width}-create-${step}.png`), fullPage: true });
    }
  }
  check(wide.length === 0, `no page scrolls sideways at 390 or 1400 px (${all.length} pages + 6 create steps; too wide: ${wide.join(', ')})`);
  check(noLabel.length === 0, `every form field has a label (${noLabel.join(' | ')})`);
}

// Serving replicas outlive their server: what is left is undeployed before the server stops, and
// any replica still running with this test's bucket root (its server's child) is ended by pid.
async function undeployWhatIsLeft() {
  try {
    for (const e of (await rest('GET', `/v1/${PARENT}/endpoints`)).endpoints ?? []) {
      for (const d of e.deployedModels ?? []) await rest('POST', `/v1/${e.name}:undeployModel`, { deployedModelId: d.id });
    }
    await sleep(1000);
  } catch (e) { console.log(`NOTE: undeploying what was left failed: ${e.message}`); }
}

function endStrayReplicas() {
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p)).map(Number)) {
    if (pid === process.pid) continue;
    try {
      const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (!env.includes(`TRAINYARD_BUCKET_ROOT=${buckets}`)) continue;
      console.log(`NOTE: ending pid ${pid}, left running by the test's server`);
      process.kill(pid, 'SIGKILL');
    } catch { /* gone, or not ours to read */ }
  }
}

try {
  await modelPageShowsTheTrainersMetrics();
  const endpoint = await deployFromTheModelPage();
  await endpointPredictsAndCounts(endpoint);
  await undeployFromTheEndpointPage(endpoint);
  await createEndpointFromTheList();
  await modelsListNamesThePipeline();
  await batchPredictionWalk();
  await everyPageFits();
} catch (e) {
  state.failures++;
  console.log(`FAIL ${e.stack}`);
  await page.screenshot({ path: path.join(outDir, 'console-serving-failure.png'), fullPage: true }).catch(() => {});
} finally {
  await browser.close();
  await undeployWhatIsLeft();
  const exited = new Promise((r) => server.proc.once('exit', r));
  server.proc.kill('SIGTERM');
  await Promise.race([exited, sleep(10000)]);
  endStrayReplicas();
}
check(foreign.length === 0, `no request left the server (${foreign.join(', ')})`);
check(consoleErrors.length === 0, `no console errors (${consoleErrors.join(' | ')})`);
if (state.failures === 0) fs.rmSync(work, { recursive: true, force: true });
console.log(state.failures ? `${state.failures} check(s) failed; server stderr in ${outDir}` : 'all checks passed');
process.exit(state.failures ? 1 : 0);
