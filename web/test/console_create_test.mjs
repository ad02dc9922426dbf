// Browser test of the console's create flow (ctest console_create_browser_test, label integration),
// walking seed 004 (the Vertex codelab that trains from the console): the real `trainyard server`
// on 127.0.0.1 port 0 with --auth and the local executor; Debian's chromium through
// playwright-core. It checks:
//   - a first visit opens where the jobs are (a job made beforehand in another project/location);
//   - "train new model" with a two-pool custom container from the loopback registry (chief + 1
//     worker, machine types picked from the list): the image field offers the server's catalog
//     (GET /v1/containerImages, where the server has it) with a placeholder that runs here; the
//     arguments box grows to its 7 lines; the chief's replica count is fixed at 1; worker pool 1
//     with 0 replicas first, which shows the server's message next to that field, in the form's
//     words ("Worker pool 1 — workers › Replica count", not workerPoolSpecs[1]), and creates
//     nothing; the review shows the request JSON once; then it runs to SUCCEEDED, both replicas'
//     logs show, the curves put train and valid on one chart, and its model is on the models page
//     (which names the pipeline that made it) with its metrics.json, files and the pipeline and
//     job that made it;
//   - a hyperparameter-tuning job created from the form runs its trials; its image field now also
//     offers the image the pipeline used;
//   - a viewer token sees no create, cancel or delete button, and is told why;
//   - the picker finds the job made in the other project and location, counts in words ("1 job",
//     never "1 jobs") and is wide enough for its text at 1400 px;
//   - at 390×844 and 1400×900 no page scrolls sideways, and every form field has a label;
//   - no request leaves the server's origin.
// Without podman, runc, docker-registry and busybox-static (or not root) the same walk runs with
// the `local` image (the command runs on the host), and the output says so.
// Screenshots of each step go to --out (build/test-artifacts/console-create-*.png).
//
//   node web/test/console_create_test.mjs --trainyard build/tools/trainyard --out DIR [--image local]
// Prints "SKIPPED: <reason>" and exits 0 when chromium or playwright-core is missing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  arg, checker, chromiumOrSkip, createToken, fitsWidth, launchOptions, record, restClient, scalarEvent,
  screenshotter, startServer, unlabelled, waitFor, waitInPage, watch,
} from './harness.mjs';
import { containersMissing, startRegistryWithBusybox } from './local_registry.mjs';

const source = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const trainyard = path.resolve(arg('trainyard', 'build/tools/trainyard'));
const outDir = path.resolve(arg('out', 'build/test-artifacts'));
const chromiumPath = arg('chromium', '/usr/bin/chromium');
const chromium = await chromiumOrSkip(chromiumPath);
fs.mkdirSync(outDir, { recursive: true });
for (const f of fs.readdirSync(outDir)) if (/^console-create-.*\.png$/.test(f)) fs.rmSync(path.join(outDir, f));

const PARENT = 'projects/local/locations/us-central1';
const FAR = 'projects/far-away/locations/europe-west4';
const state = checker();
const check = state.check;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'trainyard-console-create-'));
const buckets = path.join(work, 'buckets');
fs.mkdirSync(path.join(buckets, 'console-bkt'), { recursive: true });  // a bucket the server knows

// --- the image: the loopback registry's busybox, or the host ("local") where containers can't run ---
let registry = null;
let image = 'local';
// --image local: the host walk even where containers could run (how the fallback is tested).
let why = arg('image', '') === 'local' ? 'asked for with --image local' : containersMissing();
if (!why) {
  try {
    registry = startRegistryWithBusybox(source, work);
    image = registry.image;
    console.log(`image from the loopback registry: ${image}`);
  } catch (e) {
    // podman is installed but cannot build here (e.g. a chroot: "remount /: invalid argument").
    why = `podman cannot build the test image: ${e.message}`;
  }
}
if (why && arg('image', '') !== 'local' && process.env.TRAINYARD_REQUIRE_CONTAINERS === '1') {
  // CI must walk seed 004 with real containers (.ci/run sets this), never the host fallback.
  console.error(`FAILED: TRAINYARD_REQUIRE_CONTAINERS=1, but containers cannot run here: ${why}`);
  process.exit(1);
}
if (why) console.log(`NOTE: containers unavailable (${why}): the walk runs with imageUri "local" (host commands)`);

// The chief writes TensorBoard scalars (train and valid loss per epoch, a learning rate of 5e-4
// per step), its model and metrics.json into AIP_MODEL_DIR; the worker only says it ran.
const events = Buffer.concat([1, 2, 3].flatMap((e) => [
  record(scalarEvent(e, 'epoch/train_loss', 1 / e)), record(scalarEvent(e, 'epoch/valid_loss', 1.2 / e)),
  record(scalarEvent(e * 10, 'train/learning_rate', 5e-4)), record(scalarEvent(e * 10, 'train/loss', 2 / e))])).toString('base64');
const TRAIN_SCRIPT = 'MODEL=$AIP_MODEL_DIR; case $MODEL in gs://*) MODEL=$TRAINYARD_BUCKET_ROOT/${MODEL#gs://};; esac; ' +
  'TB=$AIP_TENSORBOARD_LOG_DIR; case $TB in gs://*) TB=$TRAINYARD_BUCKET_ROOT/${TB#gs://};; esac; ' +
  'echo "replica rank=$RANK of $WORLD_SIZE starts"; ' +
  `if [ "$RANK" = 0 ]; then mkdir -p $MODEL $TB && echo ${events} | base64 -d > $TB/events.out.tfevents.1.chief && ` +
  `echo weights > $MODEL/model.bin && echo '{"accuracy": 0.91, "loss": 0.23, "epochs": 3}' > $MODEL/metrics.json && ` +
  'echo "chief wrote the model"; else echo "worker rank $RANK done"; fi';
const TRIAL_SCRIPT = 'for a in "$@"; do case $a in --lr=*) lr=${a#--lr=};; esac; done; echo "accuracy=$lr"';

// --- the server, its tokens, and a job elsewhere for the picker ---
const dataDir = path.join(work, 'server');
fs.mkdirSync(dataDir);
const editor = createToken(trainyard, dataDir, '*', 'editor');
const viewer = createToken(trainyard, dataDir, 'local', 'viewer');
// --allow-root-replicas: replicas run in mkdtemp's 0700 dir, which `nobody` cannot enter.
const server = await startServer(trainyard,
  ['--data-dir', dataDir, '--auth', '--allow-root-replicas', '--executor', 'local', '--gpus', '0',
    '--kill-grace-seconds', '5', ...(registry?.serverArgs ?? [])],
  { TRAINYARD_BUCKET_ROOT: buckets, ...(registry?.env ?? {}) }, path.join(outDir, 'console_create_test.server.err'));
const base = server.base;
const rest = restClient(base, editor);
const farJob = await rest('POST', `/v1/${FAR}/customJobs`, {
  displayName: 'far-away-job',
  jobSpec: { workerPoolSpecs: [{ machineSpec: { machineType: 'n1-standard-1' }, replicaCount: '1',
    containerSpec: { imageUri: 'local', command: ['true'] } }] },
});

const browser = await chromium.launch(launchOptions(chromiumPath));
const foreign = [];
const consoleErrors = [];
const pagesSeen = [];  // hashes visited, for the phone-width pass

async function newPage(tokenValue) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  // 401 before signing in, and 400 from the refused create, are expected answers; so are 404 from
  // GET /v1/containerImages and 404/501 from batchPredictionJobs on a server without them.
  watch(page, base, foreign, consoleErrors, /status of (401|400|404|501)/);
  page.setDefaultTimeout(30000);
  await page.goto(`${base}/`);
  await page.waitForSelector('.signin input[name=token]');
  await page.fill('.signin input[name=token]', tokenValue);
  await page.click('.signin button[type=submit]');
  // Signed in, the console opens where the jobs are; later navigation must not race with it.
  await page.waitForSelector('.signin', { state: 'detached' });
  await waitInPage(page, () => /\/customJobs$/.test(location.hash));
  return page;
}

async function visit(page, hash, selector) {
  await page.goto(`${base}/#/${hash}`);
  if (selector) await page.waitForSelector(selector);
  if (!pagesSeen.includes(hash)) pagesSeen.push(hash);
}

// Fills a labelled field found by its request path.
const byPath = (p) => `[data-field="${p}"]`;

async function firstVisitOpensWhereTheJobsAre(page, shot) {
  await waitInPage(page, () => location.hash.includes('/customJobs'));
  const hash = await page.evaluate(() => location.hash);
  check(hash === `#/${FAR}/customJobs`, `a first visit opens where the jobs are (${hash})`);
  await page.waitForSelector(`tr[data-job="${farJob.name.split('/').pop()}"]`);
  await shot('first-visit');
}

// Steps 1-3 of seed 004: train new model, its name, the custom container.
async function fillTrainNewModel(page, shot) {
  await page.click('[data-action=create]');
  await page.waitForSelector('[data-step=method]');
  check(await page.isChecked('input[type=radio][value=pipeline]'), '"Train new model" is the default');
  await shot('step1-method');
  await page.click('[data-step=method] >> text=Continue');
  await page.fill(byPath('displayName'), 'multiworker-cassava');
  await page.fill(byPath('modelToUpload.displayName'), 'cassava-model');
  await shot('step2-model');
  await page.click('[data-step=details] >> text=Continue');
  await imageFieldOffersTheCatalog(page);
  await page.fill(byPath('spec.workerPoolSpecs[*].containerSpec.imageUri'), image);
  await page.fill(byPath('spec.workerPoolSpecs[*].containerSpec.command'), ['sh', '-c', TRAIN_SCRIPT].join('\n'));
  await argumentsBoxFitsItsLines(page);
  await page.fill(byPath('spec.baseOutputDirectory.outputUriPrefix'), 'gs://console-bkt/cassava');
  const known = await page.$$eval('#known-buckets option', (os) => os.map((o) => o.value));
  check(known.includes('gs://console-bkt/'), `output directory offers the buckets the server knows (${known})`);
  await shot('step3-container');
  await page.click('[data-step=code] >> text=Continue');
}

// The images the server can run (its catalog, when it has GET /v1/containerImages) are offered,
// an older server's 404 shows no error, and the placeholder is an image that runs here.
async function imageFieldOffersTheCatalog(page) {
  const field = byPath('spec.workerPoolSpecs[*].containerSpec.imageUri');
  const catalog = await fetch(`${base}/v1/containerImages`, { headers: { Authorization: `Bearer ${editor}` } })
    .then(async (r) => (r.ok ? (await r.json()).containerImages ?? [] : null));
  const wanted = (catalog ?? []).filter((c) => (c.use ?? 'TRAINING') === 'TRAINING').map((c) => c.imageUri);
  await waitInPage(page, (n) => document.querySelectorAll('#training-images option').length >= n, 10000, wanted.length);
  const offered = await page.$$eval('#training-images option', (os) => os.map((o) => o.value));
  check(await page.getAttribute(field, 'list') === 'training-images' && wanted.every((u) => offered.includes(u)),
    `the image field offers the server's catalog (${catalog ? wanted.join(', ') : 'none: the server has no GET /v1/containerImages'})`);
  check(await page.getAttribute(field, 'placeholder') === 'trainyard/bert-sentiment:latest', 'the image placeholder runs here');
  check(!(await page.$('.create .state-msg-error')), 'no error is shown for the image catalog');
}

// The arguments box is as tall as its lines.
async function argumentsBoxFitsItsLines(page) {
  const args = ['--epochs=3', '--batch-size=32', '--learning-rate=5e-4', '--max-length=100', '--seed=42',
    '--warmup-steps=0', '--weight-decay=0.01'];
  const box = byPath('spec.workerPoolSpecs[*].containerSpec.args');
  await page.fill(box, args.join('\n'));
  const fit = await page.$eval(box, (t) => ({ rows: t.rows, scroll: t.scrollHeight, client: t.clientHeight }));
  check(fit.rows >= 7 && fit.scroll <= fit.client + 2, `the arguments box shows its 7 lines (${JSON.stringify(fit)})`);
}

// Step 4: the chief and one worker, machine types from the catalog; the chief's replica count is
// fixed at 1; pool 1 gets 0 replicas first.
async function fillCompute(page, shot) {
  const machine0 = byPath('spec.workerPoolSpecs[0].machineSpec.machineType');
  const options = await page.$$eval(`${machine0} option`, (os) => os.map((o) => o.textContent));
  check(options.some((t) => /^n1-standard-1 · 1 vCPU · 3\.75 GiB · \$0\.06\/h$/.test(t)) &&
    options.some((t) => /^a2-highgpu-1g · 12 vCPU · 85 GiB · 1× NVIDIA_TESLA_A100 · \$\d/.test(t)),
  'machine list shows vCPUs, memory, bundled GPUs and the hourly price');
  await page.selectOption(machine0, 'n1-standard-1');
  const chief = byPath('spec.workerPoolSpecs[0].replicaCount');
  check(await page.getAttribute(chief, 'readonly') !== null && await page.inputValue(chief) === '1',
    'the chief\'s replica count is fixed at 1');
  await page.check('[data-pool="1"] input[type=checkbox]');
  await page.selectOption(byPath('spec.workerPoolSpecs[1].machineSpec.machineType'), 'n1-standard-1');
  await page.fill(byPath('spec.workerPoolSpecs[1].replicaCount'), '2');
  const total = await page.textContent('[data-total]');
  check(total === 'Estimated $0.18 per hour for all 3 replicas', `cluster price shown (${total})`);
  await page.fill(byPath('spec.workerPoolSpecs[1].replicaCount'), '0');
  await shot('step4-compute');
  await page.click('[data-step=compute] >> text=Continue');
  await page.click('[data-step=options] >> text=Add label');
  await page.fill(byPath('labels[0]'), 'seed');
  await page.locator('fieldset[data-field=labels] .kv-row input').nth(1).fill('004');
  await shot('step5-options');
  await page.click('[data-step=options] >> text=Continue');
}

// The refused create: the server's message next to pool 1's replica count, in the form's words;
// nothing created.
async function refusedThenFixed(page, shot) {
  const review = await page.textContent('[data-review=json]');
  check(review.includes('"trainingTaskDefinition"') && review.includes('"replicaCount": "0"'), 'review shows the request JSON');
  const copies = await page.$$eval('[data-step=review] pre', (ps) => ps.filter((p) => p.textContent.includes('"trainingTaskDefinition"')).length);
  check(copies === 1, `the review shows the request JSON once (${copies})`);
  check((await page.textContent('[data-review=gcloud]')).startsWith('curl -X POST'), 'review shows the same request from a shell');
  await shot('step6-review');
  await page.click('[data-action=submit]');
  const field = byPath('spec.workerPoolSpecs[1].replicaCount');
  await page.waitForSelector(`${field}[aria-invalid=true]`);
  const msg = await page.$eval(field, (el) => el.parentElement.querySelector('.field-error').textContent);
  check(/got 0/.test(msg), `the server's message is next to pool 1's replica count (${msg})`);
  const top = await page.textContent('.problems .state-msg-error');
  check(top.includes('Worker pool 1 — workers › Replica count') && !top.includes('workerPoolSpecs'),
    `the message names the field in the form's words (${top})`);
  check(await page.isVisible('[data-step=compute]'), 'the compute step is opened on the error');
  const listed = await rest('GET', `/v1/${PARENT}/trainingPipelines`);
  check(!(listed.trainingPipelines ?? []).length, 'nothing was created while the request was invalid');
  await shot('refused-replica-count');
  await page.fill(field, '1');
  await page.click('[data-goto=review]');
  await page.click('[data-action=submit]');
  await waitInPage(page, () => /\/trainingPipelines\/[^/]+$/.test(location.hash));
  return page.evaluate(() => location.hash.slice(2));
}

async function pipelineRuns(page, shot, name) {
  const p = await waitFor('the pipeline to end', async () => {
    const got = await rest('GET', `/v1/${name}`);
    return /SUCCEEDED|FAILED|CANCELLED/.test(got.state) ? got : null;
  }, 240000);
  check(p.state === 'PIPELINE_STATE_SUCCEEDED', `the pipeline ran to SUCCEEDED (${p.state} ${p.error?.message ?? ''})`);
  pagesSeen.push(name);
  await waitInPage(page, () => /SUCCEEDED/.test(document.querySelector('.job-header .badge')?.textContent ?? ''));
  await page.waitForSelector('a[data-link=model]');
  await shot('pipeline-succeeded');
  return p;
}

async function jobShowsBothReplicas(page, shot) {
  await page.click('.backing-job a[data-link=job]');
  await page.waitForSelector('.logbox .line');
  await waitInPage(page, () => {
    const tasks = new Set([...document.querySelectorAll('.logbox .line .task')].map((t) => t.textContent));
    return tasks.has('workerpool0-0') && tasks.has('workerpool1-0');
  });
  const text = await page.textContent('.logbox');
  check(text.includes('chief wrote the model') && text.includes('worker rank 1 done'), 'both replicas\' logs show');
  await page.waitForSelector('.chart[data-tag="epoch/loss"][data-series="train,valid"][data-points="3"]');
  check(true, 'train and valid loss share one chart with 3 epochs');
  await page.waitForSelector('.chart[data-tag="learning_rate"]');
  check(await page.isVisible('#smoothing'), 'step curves have a smoothing control');
  check(await page.isVisible('a[data-link=pipeline]'), 'the job links to its pipeline');
  pagesSeen.push(await page.evaluate(() => location.hash.slice(2)));
  await shot('job-logs-curves');
}

async function modelHasItsMetrics(page, shot) {
  await page.click('a[data-link=pipeline]');
  await page.click('a[data-link=model]');
  await page.waitForSelector('table.metrics tr[data-metric=accuracy]');
  check((await page.textContent('tr[data-metric=accuracy] td')) === '0.91', 'the model page shows metrics.json');
  // The file list and metrics.json load in parallel: wait for the list's own answer (or 30 s).
  await page.waitForFunction(() => !document.querySelector('div.files .state-msg-loading'), null, { timeout: 30000 })
    .catch(() => {});
  const files = await page.$$eval('table.files tr[data-file]', (rs) => rs.map((r) => r.dataset.file).sort());
  check(files.join() === 'metrics.json,model.bin',
    `the model page lists its artifact files (${files.join() || await page.textContent('div.files')})`);
  check(await page.isVisible('dl.origin a[data-link=pipeline]') && await page.isVisible('dl.origin a[data-link=job]'),
    'the model page links to the pipeline and the job that produced it');
  pagesSeen.push(await page.evaluate(() => location.hash.slice(2)));
  await shot('model');
  await visit(page, `${PARENT}/models`, 'tr[data-model]');
  check((await page.textContent('table.models')).includes('cassava-model'), 'the model is on the models page');
  await waitInPage(page, () => document.querySelector('table.models a[data-link=pipeline]')?.textContent === 'multiworker-cassava', 10000);
  check(true, 'the models list names the pipeline that produced the model (linked)');
  await shot('models');
}

async function hpTuningFromTheForm(page, shot) {
  await visit(page, `${PARENT}/create`, '[data-step=method]');
  await page.check('input[type=radio][value=hpTuningJob]');
  await page.click('[data-step=method] >> text=Continue');
  await page.fill(byPath('displayName'), 'console-study');
  await page.click('[data-step=details] >> text=Continue');
  await waitInPage(page, (img) => [...document.querySelectorAll('#training-images option')].some((o) => o.value === img), 10000, image);
  check(true, `the image field offers the image this project used recently (${image})`);
  await page.fill(byPath('spec.workerPoolSpecs[*].containerSpec.imageUri'), image);
  await page.fill(byPath('spec.workerPoolSpecs[*].containerSpec.command'), ['sh', '-c', TRIAL_SCRIPT, 'trial'].join('\n'));
  await page.click('[data-step=code] >> text=Continue');
  await page.fill(byPath('studySpec.metrics[0].metricId'), 'accuracy');
  await page.fill(byPath('studySpec.parameters[0].parameterId'), 'lr');
  await page.fill(byPath('studySpec.parameters[0].doubleValueSpec.minValue'), '0.01');
  await page.fill(byPath('studySpec.parameters[0].doubleValueSpec.maxValue'), '0.9');
  await page.fill(byPath('maxTrialCount'), '3');
  await page.fill(byPath('parallelTrialCount'), '1');
  await page.selectOption(byPath('studySpec.algorithm'), 'RANDOM_SEARCH');
  await shot('hp-parameters');
  await page.click('[data-goto=compute]');
  await page.selectOption(byPath('spec.workerPoolSpecs[0].machineSpec.machineType'), 'n1-standard-1');
  await page.click('[data-goto=review]');
  const gcloud = await page.textContent('[data-review=gcloud]');
  check(gcloud.startsWith('gcloud ai hp-tuning-jobs create') && gcloud.includes('--max-trial-count=3') &&
    gcloud.includes('--algorithm=RANDOM_SEARCH'), 'review shows the gcloud command line');
  await shot('hp-review');
  await page.click('[data-action=submit]');
  await waitInPage(page, () => /\/hyperparameterTuningJobs\/[^/]+$/.test(location.hash));
  const name = await page.evaluate(() => location.hash.slice(2));
  const study = await waitFor('3 trials with a metric', async () => {
    const s = await rest('GET', `/v1/${name}`);
    const done = (s.trials ?? []).filter((t) => t.finalMeasurement).length;
    return done >= 3 || /FAILED|CANCELLED/.test(s.state) ? s : null;
  }, 240000);
  check((study.trials ?? []).filter((t) => t.finalMeasurement).length === 3, `the HP-tuning job ran its 3 trials (${study.state})`);
  await page.waitForSelector('table.trials tr.best');
  // The page refreshes every 3 s: it shows the third trial's metric at its next refresh.
  await waitInPage(page, () => [...document.querySelectorAll('table.trials tr[data-trial]')]
    .filter((r) => r.children[3]?.textContent !== '—').length === 3);
  check(true, 'the study page lists 3 trials with their metric');
  pagesSeen.push(name);
  await shot('hp-trials');
}

async function viewerSeesNoWriteButtons(pipeline, shot) {
  const page = await newPage(viewer);
  await visit(page, `${PARENT}/trainingPipelines`, 'tr[data-pipeline]');
  await waitInPage(page, () => document.querySelector('#nav .readonly')?.hidden === false);
  check(!(await page.isVisible('[data-action=create]')), 'a viewer token sees no create button');
  await visit(page, pipeline, '.job-header h1');
  await page.waitForSelector('.readonly-note:not([hidden])');
  const note = await page.textContent('.readonly-note');
  check(!(await page.isVisible('button:has-text("Delete")')) && /viewer role/.test(note), `…nor delete, and is told why (${note})`);
  await shot('viewer');
  await visit(page, `${PARENT}/create`, '.state-msg-error');
  check((await page.textContent('.state-msg-error')).startsWith('You cannot create here.'), 'the create page refuses a viewer');
  await page.context().close();
}

async function pickerFindsTheOtherLocation(page, shot) {
  await visit(page, `${PARENT}/customJobs`, '#where-select');
  await waitInPage(page, (far) => !![...document.querySelectorAll('#where-select option')].find((o) => o.value === far), 30000, FAR);
  await page.selectOption('#where-select', FAR);
  await page.waitForSelector(`tr[data-job="${farJob.name.split('/').pop()}"]`);
  check(true, 'the picker finds the job in another project and location');
  const texts = await page.$$eval('#where-select option', (os) => os.map((o) => o.textContent));
  check(texts.some((t) => /\(1 job\)/.test(t)) && !texts.some((t) => /\b1 (jobs|models|pipelines)\b/.test(t)),
    `the picker counts in words (${texts.join(' | ')})`);
  await page.setViewportSize({ width: 1400, height: 900 });
  const fit = await page.$eval('#where-select', (sel) => {
    const span = document.createElement('span');
    span.style.font = getComputedStyle(sel).font;
    span.style.whiteSpace = 'pre';
    span.textContent = [...sel.options].reduce((a, o) => (o.textContent.length > a.length ? o.textContent : a), '');
    document.body.append(span);
    const need = span.getBoundingClientRect().width;
    span.remove();
    return { need: Math.round(need), have: sel.clientWidth };
  });
  check(fit.need + 16 <= fit.have, `the picker is wide enough for its longest entry at 1400 px (${JSON.stringify(fit)})`);
  await page.setViewportSize({ width: 1280, height: 900 });
  await shot('picker');
}

async function widthsAndLabels(page, shot) {
  const pages = [...new Set([`${PARENT}/customJobs`, `${PARENT}/hyperparameterTuningJobs`, `${PARENT}/trainingPipelines`,
    `${PARENT}/models`, `${PARENT}/endpoints`, `${PARENT}/batchPredictionJobs`, `${PARENT}/create`, ...pagesSeen])];
  const wide = [];
  const noLabel = [];
  for (const [width, height] of [[390, 844], [1400, 900]]) {
    await page.setViewportSize({ width, height });
    for (const hash of pages) {
      await page.goto(`${base}/#/${hash}`);
      await page.waitForSelector('#app > *:not(.state)');
      await page.waitForTimeout(500);  // lets asynchronous parts (charts, tables) render
      if (!(await fitsWidth(page))) wide.push(`${hash}@${width}`);
      if (width === 390) noLabel.push(...(await unlabelled(page)).map((u) => `${hash}: ${u}`));
      await shot(`${width === 390 ? 'phone' : 'wide'}-${hash.split('/').slice(4).join('-').replace(/[^\w-]+/g, '-')}`);
    }
    for (const step of ['details', 'code', 'compute', 'options', 'review']) {
      await page.goto(`${base}/#/${PARENT}/create?kind=hpTuningJob`);
      await page.click(`[data-goto=${step}]`);
      if (!(await fitsWidth(page))) wide.push(`create step ${step}@${width}`);
      if (width === 390) noLabel.push(...(await unlabelled(page)).map((u) => `create ${step}: ${u}`));
    }
  }
  check(wide.length === 0, `at 390×844 and 1400×900 no page scrolls sideways (${pages.length} pages + create steps; too wide: ${wide})`);
  check(noLabel.length === 0, `every form field has a label (${noLabel.join(' | ')})`);
}

try {
  const page = await newPage(editor);
  const shot = screenshotter(page, outDir, 'console-create');
  await firstVisitOpensWhereTheJobsAre(page, shot);
  await visit(page, `${PARENT}/customJobs`, '[data-action=create]:not([hidden])');
  await fillTrainNewModel(page, shot);
  await fillCompute(page, shot);
  const pipeline = await refusedThenFixed(page, shot);
  await pipelineRuns(page, shot, pipeline);
  await jobShowsBothReplicas(page, shot);
  await modelHasItsMetrics(page, shot);
  await hpTuningFromTheForm(page, shot);
  await viewerSeesNoWriteButtons(pipeline, shot);
  await pickerFindsTheOtherLocation(page, shot);
  await widthsAndLabels(page, shot);
} catch (e) {
  state.failures++;
  console.log(`FAIL ${e.stack}`);
  let n = 0;
  for (const c of browser.contexts()) {
    for (const p of c.pages()) {
      await p.screenshot({ path: path.join(outDir, `console-create-failure-${++n}.png`), fullPage: true }).catch(() => {});
    }
  }
} finally {
  await browser.close();
  server.proc.kill('SIGTERM');
  registry?.stop();
}
check(foreign.length === 0, `no request left the server (${foreign.join(', ')})`);
check(consoleErrors.length === 0, `no console errors (${consoleErrors.join(' | ')})`);
console.log(`image: ${image}${why ? ` (containers unavailable: ${why})` : ''}`);
if (state.failures === 0) fs.rmSync(work, { recursive: true, force: true });
console.log(state.failures ? `${state.failures} check(s) failed; server stderr in ${outDir}` : 'all checks passed');
process.exit(state.failures ? 1 : 0);
