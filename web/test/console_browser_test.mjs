// Browser test of the web console (ctest console_browser_test, label integration): starts the
// real `trainyard server` on 127.0.0.1 port 0 with the local executor, runs a /bin/sh job that
// writes TensorBoard event files and logs, and an HP-tuning job; drives Debian's chromium through
// playwright-core: finds the job, sees its logs and a curve with points, opens the study and its
// trials, cancels the running job from the UI. Every request the page makes must go to the
// server (nothing leaves 127.0.0.1). Screenshots go to --out (build/test-artifacts/).
//
//   node web/test/console_browser_test.mjs --trainyard build/tools/trainyard --out DIR
// Prints "SKIPPED: <reason>" and exits 0 when chromium or playwright-core is missing.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const trainyard = path.resolve(arg('trainyard', 'build/tools/trainyard'));
const outDir = path.resolve(arg('out', 'build/test-artifacts'));
const chromiumPath = arg('chromium', '/usr/bin/chromium');

let chromium;
try {
  ({ chromium } = await import('playwright-core'));
} catch (e) {
  console.log(`SKIPPED: playwright-core is not installed (npm ci in web/): ${e.message}`);
  process.exit(0);
}
if (!fs.existsSync(chromiumPath)) {
  console.log(`SKIPPED: ${chromiumPath} not found (apt-get install chromium; scripts/install-deps.sh --test)`);
  process.exit(0);
}
fs.mkdirSync(outDir, { recursive: true });

// --- TensorBoard event records (TFRecord framing, masked CRC32C, Event/Summary protobuf) ---
const CRC_TABLE = Array.from({ length: 256 }, (_, i) => {
  let c = i;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  return c >>> 0;
});
function maskedCrc(buf) {
  let crc = 0xffffffff;
  for (const b of buf) crc = CRC_TABLE[(crc ^ b) & 0xff] ^ (crc >>> 8);
  crc = (crc ^ 0xffffffff) >>> 0;
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
}
const varint = (v) => { const out = []; while (v >= 0x80) { out.push((v & 0x7f) | 0x80); v = Math.floor(v / 128); } out.push(v); return Buffer.from(out); };
const field = (n, bytes) => Buffer.concat([varint((n << 3) | 2), varint(bytes.length), bytes]);
function scalarEvent(step, tag, value) {
  const f32 = Buffer.alloc(4); f32.writeFloatLE(value);
  const val = Buffer.concat([field(1, Buffer.from(tag)), Buffer.from([(2 << 3) | 5]), f32]);
  const wall = Buffer.alloc(8); wall.writeDoubleLE(Date.now() / 1000);
  return Buffer.concat([Buffer.from([(1 << 3) | 1]), wall, varint(2 << 3), varint(step), field(5, field(1, val))]);
}
function record(payload) {
  const len = Buffer.alloc(8); len.writeBigUInt64LE(BigInt(payload.length));
  const c1 = Buffer.alloc(4); c1.writeUInt32LE(maskedCrc(len));
  const c2 = Buffer.alloc(4); c2.writeUInt32LE(maskedCrc(payload));
  return Buffer.concat([len, c1, payload, c2]);
}

// --- the server ---
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'trainyard-console-test-'));
const stage = path.join(work, 'stage');
fs.mkdirSync(stage);
for (let i = 1; i <= 8; i++) {  // one file per "step" the job appends, every 0.3 s
  fs.writeFileSync(path.join(stage, `chunk${String(i).padStart(2, '0')}`),
    Buffer.concat([record(scalarEvent(i * 10, 'train/loss', 2 / i)), record(scalarEvent(i * 10, 'train/accuracy', 1 - 0.5 / i))]));
}
// --allow-root-replicas: the job runs in mkdtemp's 0700 dir, which `nobody` (a root server's
// default replica user) cannot enter; unprivileged replicas are tested in security_e2e_test.
const server = spawn(trainyard, ['server', '--port', '0', '--data-dir', path.join(work, 'server'), '--allow-root-replicas'], {
  env: { ...process.env, TRAINYARD_BUCKET_ROOT: path.join(work, 'buckets') },
  stdio: ['ignore', 'pipe', fs.openSync(path.join(outDir, 'console_browser_test.server.err'), 'w')],
});
const base = await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    const m = out.match(/listening on (http:\/\/[^\s]+)/);
    if (m) resolve(m[1]);
  });
  server.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  setTimeout(() => reject(new Error('server did not start in 20 s')), 20000);
});
const PARENT = 'projects/local/locations/us-central1';
let failures = 0;
const check = (ok, what) => { console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`); if (!ok) failures++; };
// Polls `fn` in the page until it returns true (30 s). page.waitForFunction compiles its predicate
// with eval inside the page, which the console's Content-Security-Policy (script-src 'self')
// rightly forbids; page.evaluate goes through the DevTools protocol instead.
async function waitInPage(page, fn, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await page.evaluate(fn)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${fn}`);
}

async function rest(method, p, body) {
  const r = await fetch(base + p, { method, body: body && JSON.stringify(body), headers: body ? { 'Content-Type': 'application/json' } : {} });
  const j = await r.json();
  if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(j)}`);
  return j;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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

const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
         '--disable-component-update', '--no-first-run'],
});
const foreign = [];
const consoleErrors = [];
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.on('request', (r) => { if (!r.url().startsWith(base + '/') && !r.url().startsWith('data:')) foreign.push(r.url()); });
  // 404s are expected: the error-state check opens a job that does not exist.
  page.on('console', (m) => { if (m.type() === 'error' && !m.text().includes('status of 404')) consoleErrors.push(m.text()); });
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
  await waitInPage(page, () => Number(document.querySelector('.chart[data-tag="train/loss"]')?.dataset.points ?? 0) >= 8);
  check(true, 'train/loss chart has 8 points');
  await page.waitForSelector('.logbox .line.err');
  await page.click('text=Jump to first error');
  check((await page.textContent('.logbox .focus')).includes('ERROR: a sample error line'), 'jump to error focuses the error line');
  const steps = await page.$$eval('ol.timeline li b', (bs) => bs.map((b) => b.textContent).join(' '));
  check(/^QUEUED (PENDING )?RUNNING$/.test(steps), `timeline shows the states entered (${steps})`);
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
  await page.goto(`${base}/#/projects/nobody/locations/nowhere/customJobs`);
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
