// Browser test of the web console (ctest console_browser_test, label integration): starts the
// real `trainyard server` on 127.0.0.1 port 0 with the local executor, runs a /bin/sh job that
// writes TensorBoard event files and logs, and an HP-tuning job; drives Debian's chromium through
// playwright-core: finds the job, sees its logs and a curve with points, opens the study and its
// trials, cancels the running job from the UI. Every request the page makes must go to the
// server (nothing leaves 127.0.0.1). Screenshots go to --out (build/test-artifacts/).
//
//   node web/test/console_browser_test.mjs --trainyard build/tools/trainyard --out DIR
// Prints "SKIPPED: <reason>" and exits 0 when chromium or playwright-core is missing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { arg, chromiumOrSkip, launchOptions, record, restClient, scalarEvent, sleep, startServer, waitInPage, watch } from './harness.mjs';

const trainyard = path.resolve(arg('trainyard', 'build/tools/trainyard'));
const outDir = path.resolve(arg('out', 'build/test-artifacts'));
const chromiumPath = arg('chromium', '/usr/bin/chromium');
const chromium = await chromiumOrSkip(chromiumPath);
fs.mkdirSync(outDir, { recursive: true });

// --- the server ---
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'trainyard-console-test-'));
fs.mkdirSync(path.join(work, 'buckets', 'console-test'), { recursive: true });  // the job's bucket
const stage = path.join(work, 'stage');
fs.mkdirSync(stage);
for (let i = 1; i <= 8; i++) {  // one file per "step" the job appends, every 0.3 s
  fs.writeFileSync(path.join(stage, `chunk${String(i).padStart(2, '0')}`),
    Buffer.concat([record(scalarEvent(i * 10, 'train/loss', 2 / i)), record(scalarEvent(i * 10, 'train/accuracy', 1 - 0.5 / i))]));
}
// --allow-root-replicas: the job runs in mkdtemp's 0700 dir, which `nobody` (a root server's
// default replica user) cannot enter; unprivileged replicas are tested in security_e2e_test.
const { base, proc: server } = await startServer(trainyard,
  ['--data-dir', path.join(work, 'server'), '--allow-root-replicas'],
  { TRAINYARD_BUCKET_ROOT: path.join(work, 'buckets') }, path.join(outDir, 'console_browser_test.server.err'));
const PARENT = 'projects/local/locations/us-central1';
let failures = 0;
const check = (ok, what) => { console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`); if (!ok) failures++; };
const rest = restClient(base, null);

const script = `
dir="$TRAINYARD_BUCKET_ROOT/\${AIP_TENSORBOARD_LOG_DIR#gs://}"
mkdir -p "$dir"
for f in "$STAGE"/chunk*; do
  cat "$f" >> "$dir/events.out.tfevents.1.sh.1"
  echo "step \${f##*chunk} appended"
  sleep 0.3
done
echo "ERROR: a sample error line for jump-to-error" >&2
echo "training done; waiting to be cancelled"
exec sleep 600`;
const job = await rest('POST', `/v1/${PARENT}/customJobs`, {
  displayName: 'console-curves', labels: { suite: 'browser' },
  jobSpec: {
    baseOutputDirectory: { outputUriPrefix: 'gs://console-test/out' },
    workerPoolSpecs: [{ machineSpec: { machineType: 'n1-standard-4' }, replicaCount: '1',
      containerSpec: { imageUri: 'local', command: ['sh', '-c', script], env: [{ name: 'STAGE', value: stage }] } }],
  },
});
const study = await rest('POST', `/v1/${PARENT}/hyperparameterTuningJobs`, {
  displayName: 'console-study', maxTrialCount: 3, parallelTrialCount: 3,
  studySpec: {
    metrics: [{ metricId: 'accuracy', goal: 'MAXIMIZE' }], algorithm: 'RANDOM_SEARCH',
    parameters: [{ parameterId: 'lr', doubleValueSpec: { minValue: 0.01, maxValue: 0.9 }, scaleType: 'UNIT_LINEAR_SCALE' },
                 { parameterId: 'layers', integerValueSpec: { minValue: 1, maxValue: 4 } }],
  },
  trialJobSpec: { workerPoolSpecs: [{ machineSpec: { machineType: 'n1-standard-4' }, replicaCount: '1',
    containerSpec: { imageUri: 'local', command: ['sh', '-c',
      'for a in "$@"; do case $a in --lr=*) lr=${a#--lr=};; esac; done; echo "accuracy=$lr"', 'trial'] } }] },
});

const browser = await chromium.launch(launchOptions(chromiumPath));
const foreign = [];
const consoleErrors = [];
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  // 404s are expected: the error-state check opens a job that does not exist.
  watch(page, base, foreign, consoleErrors);
  page.setDefaultTimeout(30000);
  const jobId = job.name.split('/').pop();

  // Jobs list: the job is there with its state badge.
  await page.goto(`${base}/`);
  await page.waitForSelector(`tr[data-job="${jobId}"]`);
  check((await page.textContent(`tr[data-job="${jobId}"]`)).includes('console-curves'), 'jobs list shows the job');
  await page.screenshot({ path: path.join(outDir, 'console-jobs.png') });

  // Job page: logs and a curve with points, growing while the job runs.
  await page.click(`tr[data-job="${jobId}"] a`);
  await page.waitForSelector('.logbox .line');
  // train/loss is the "train" series of the loss chart (curves.ts: train and validation share one).
  await waitInPage(page, () => Number(document.querySelector('.chart[data-tag="loss"]')?.dataset.points ?? 0) >= 8);
  check(true, 'the loss chart has 8 points');
  await page.waitForSelector('.logbox .line.err');
  await page.click('text=Jump to first error');
  check((await page.textContent('.logbox .focus')).includes('ERROR: a sample error line'), 'jump to error focuses the error line');
  const steps = await page.$$eval('ol.timeline li b', (bs) => bs.map((b) => b.textContent).join(' '));
  // NOTE: what the host does otherwise than asked (the job's machine is larger than a CI host).
  check(/^QUEUED (NOTE )*(PENDING )?RUNNING$/.test(steps), `timeline shows the states entered (${steps})`);
  await page.screenshot({ path: path.join(outDir, 'console-job.png'), fullPage: true });

  // Cancel from the UI.
  page.once('dialog', (d) => d.accept());
  await page.click('button:has-text("Cancel job")');
  await waitInPage(page, () => /CANCELL(ED|ING)/.test(document.querySelector('.job-header .badge')?.textContent ?? ''));
  let state = '';
  for (let i = 0; i < 60 && state !== 'JOB_STATE_CANCELLED'; i++) { state = (await rest('GET', `/v1/${job.name}`)).state; await sleep(500); }
  check(state === 'JOB_STATE_CANCELLED', `job cancelled from the UI (${state})`);
  await waitInPage(page, () => /CANCELLED$/.test([...document.querySelectorAll('ol.timeline li b')].map((b) => b.textContent).join(' ')));
  check(true, 'timeline ends with CANCELLING then CANCELLED');

  // Phone width.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${base}/#/${PARENT}/customJobs`);
  await page.waitForSelector(`tr[data-job="${jobId}"]`);
  await page.screenshot({ path: path.join(outDir, 'console-jobs-phone.png') });
  await page.setViewportSize({ width: 1280, height: 800 });

  // Study: wait for its trials, then the table with the best trial and the charts.
  for (let i = 0; i < 120; i++) {
    const s = await rest('GET', `/v1/${study.name}`);
    if ((s.trials ?? []).filter((t) => t.finalMeasurement).length >= 3 || s.state === 'JOB_STATE_FAILED') break;
    await sleep(500);
  }
  await page.goto(`${base}/#/${PARENT}/hyperparameterTuningJobs`);
  await page.click(`tr[data-study="${study.name.split('/').pop()}"] a`);
  await page.waitForSelector('table.trials tr.best');
  check((await page.$$('table.trials tr[data-trial]')).length === 3, 'study page lists 3 trials');
  await page.waitForSelector('[data-chart=pcp] canvas');
  check(true, 'parallel-coordinates chart drawn');
  await page.click('table.trials th:has-text("accuracy")');
  await page.screenshot({ path: path.join(outDir, 'console-study.png'), fullPage: true });

  // Empty and error states.
  await page.goto(`${base}/#/projects/nobody/locations/asia-east1/customJobs`);
  await page.waitForSelector('.state-msg-empty');
  await page.goto(`${base}/#/${PARENT}/customJobs/999999`);
  await page.waitForSelector('.state-msg-error');
  await page.screenshot({ path: path.join(outDir, 'console-error.png') });
} catch (e) {
  failures++;
  console.log(`FAIL ${e.stack}`);
} finally {
  await browser.close();
  server.kill('SIGTERM');
}
check(foreign.length === 0, `no request left the server (${foreign.join(', ')})`);
check(consoleErrors.length === 0, `no console errors (${consoleErrors.join(' | ')})`);
if (failures === 0) fs.rmSync(work, { recursive: true, force: true });
console.log(failures ? `${failures} check(s) failed; server stderr in ${outDir}` : 'all checks passed');
process.exit(failures ? 1 : 0);
