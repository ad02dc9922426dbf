// Shared by the Node client tests: finds the installed clients, starts a real `trainyard server`
// on 127.0.0.1 port 0 with a fresh data dir and bucket root, and stops it and the replicas it
// leaves running at exit.
'use strict';
const {spawn} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const SKIP = 77;  // ctest SKIP_RETURN_CODE

// require() of an npm client, or exit "skipped" naming the install script.
function requireClient(name) {
  try {
    return require(name);
  } catch (e) {
    console.log(`SKIPPED: ${name} is not installed (${e.code}); run scripts/install-node-clients.sh`);
    process.exit(SKIP);
  }
}

// `env` is added to this process's environment for the server.
// Replicas outlive a stopped server (its next start re-adopts them): a test that stopped before
// undeploying or cancelling would leave them holding the host's cores. Each running one has
// attempt-N.pid ({"pid", "start_ticks"}) and no attempt-N.status yet in its job's
// replicas/<task>/ (src/executor/job_dir_layout.h); its pid is its process group.
function endReplicas(dataDir) {
  const list = d => { try { return fs.readdirSync(d); } catch { return []; } };
  const jobs = path.join(dataDir, 'jobs');
  for (const job of list(jobs)) {
    for (const task of list(path.join(jobs, job, 'replicas'))) {
      const taskDir = path.join(jobs, job, 'replicas', task);
      for (const name of list(taskDir).filter(n => /^attempt-\d+\.pid$/.test(n))) {
        if (fs.existsSync(path.join(taskDir, name.replace(/pid$/, 'status')))) continue;
        try {
          const replica = JSON.parse(fs.readFileSync(path.join(taskDir, name), 'utf8'));
          const stat = fs.readFileSync(`/proc/${replica.pid}/stat`, 'utf8');
          const startTicks = Number(stat.slice(stat.lastIndexOf(')') + 1).trim().split(/\s+/)[19]);
          // The same start ticks: not another process that reused the pid.
          if (startTicks === replica.start_ticks) process.kill(-replica.pid, 'SIGKILL');
        } catch {}  // gone already, or a pid file half written
      }
    }
  }
}

async function startServer(extraArgs = [], env = {}) {
  const bin = path.join(process.env.TRAINYARD_BINARY_DIR || 'build', 'tools', 'trainyard');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trainyard-node-'));
  const buckets = path.join(dir, 'buckets');
  fs.mkdirSync(buckets);
  // --allow-root-replicas: mkdtemp's dir is 0700, which `nobody` (a root server's default replica
  // user) cannot enter; unprivileged replicas are tested in security_e2e_test.
  const child = spawn(bin, ['server', '--port', '0', '--data-dir', path.join(dir, 'server'),
                            '--allow-root-replicas', ...extraArgs],
                      {env: {...process.env, TRAINYARD_BUCKET_ROOT: buckets, ...env},
                       stdio: ['ignore', 'pipe', 'pipe']});
  let stderr = '';
  child.stderr.on('data', d => { stderr += d; });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', d => {
      out += d;
      const m = out.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', code => reject(new Error(`trainyard server exited with ${code}: ${stderr}`)));
  });
  process.on('exit', () => {
    child.kill('SIGKILL');
    endReplicas(path.join(dir, 'server'));
    fs.rmSync(dir, {recursive: true, force: true});
  });
  // SIGTERM and wait, so that requests in flight finish; SIGKILL if it has not exited in 10 s.
  const stop = () => new Promise(resolve => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
    child.once('exit', () => {
      clearTimeout(timer);
      endReplicas(path.join(dir, 'server'));
      resolve();
    });
    child.kill('SIGTERM');
  });
  return {port, dir, buckets, endpoint: `http://127.0.0.1:${port}`, child, stop,
          stderr: () => stderr};
}

// Runs `main`; any failure prints the error and exits 1.
function run(main) {
  main().then(() => process.exit(0), err => {
    console.error('FAILED:', err && err.stack ? err.stack : err);
    process.exit(1);
  });
}

// No Google credentials: requests go out without an Authorization header.
const noAuth = {
  getRequestHeaders: async () => new Headers(),
  fetch: (url, init) => fetch(url, {method: init.method, headers: init.headers, body: init.body,
                                    signal: init.signal}),
};

// Trains a small BERT classifier on two texts with `bert` (trainyard-bert) into `modelDir` and
// returns the labels `trainyard-bert predict` gives `texts`.
function trainModel(bert, dir, modelDir, texts) {
  const {execFileSync} = require('child_process');
  fs.writeFileSync(path.join(dir, 'vocab.txt'),
                   '[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\ngood\nbad\nmovie\nthe\n');
  fs.writeFileSync(path.join(dir, 'train.csv'),
                   'bodyText,Target\n' + 'good movie,1\nthe bad movie,0\n'.repeat(32));
  const data = path.join(dir, 'train.csv');
  execFileSync(bert, ['train', '--training-file', data, '--validation-file', data,
                      '--vocab', path.join(dir, 'vocab.txt'), '--job-dir', modelDir,
                      '--epochs', '10', '--batch-size', '8', '--learning-rate', '5e-4',
                      '--threads', '1'], {stdio: ['ignore', 'ignore', 'pipe']});
  const out = execFileSync(bert, ['predict', '--model-dir', modelDir, '--threads', '1',
                                  ...texts.flatMap(t => ['--text', t])], {encoding: 'utf8'});
  return out.trim().split('\n').map(line => JSON.parse(line).label);
}

module.exports = {requireClient, startServer, run, SKIP, noAuth, trainModel};
