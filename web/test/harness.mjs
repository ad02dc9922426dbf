// What the console's browser tests share: arguments, chromium through playwright-core (or a
// SKIPPED line), the real `trainyard server` on 127.0.0.1 port 0, REST calls, polling in the page
// (CSP forbids page.waitForFunction's eval), checks, and TensorBoard event records.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startProxy } from './dev_proxy.mjs';

export const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};

// playwright-core's chromium, or a SKIPPED line and exit 0 when it or the browser is missing.
export async function chromiumOrSkip(chromiumPath) {
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
  return chromium;
}

export const launchOptions = (chromiumPath) => ({
  executablePath: chromiumPath,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--no-first-run'],
});

// Starts `trainyard server --port 0 ...args`; resolves to {base, proc} once it listens. With
// --console-dist DIR on the test's command line, `base` is a dev proxy (dev_proxy.mjs) that serves
// the console from DIR and forwards everything else to the server (its own URL is `serverBase`);
// the proxy closes when the server exits.
export async function startServer(trainyard, args, env, stderrPath) {
  const started = await startServerOnly(trainyard, args, env, stderrPath);
  const dist = arg('console-dist', '');
  if (!dist) return started;
  const proxy = await startProxy(dist, started.base);
  started.proc.on('exit', () => proxy.close());
  console.log(`console from ${path.resolve(dist)} through ${proxy.base} (server ${started.base})`);
  return { ...started, base: proxy.base, serverBase: started.base };
}

async function startServerOnly(trainyard, args, env, stderrPath) {
  const proc = spawn(trainyard, ['server', '--port', '0', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', fs.openSync(stderrPath, 'w')],
  });
  const base = await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/[^\s]+)/);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (code) => reject(new Error(`server exited with ${code}; see ${stderrPath}`)));
    setTimeout(() => reject(new Error('server did not start in 20 s')), 20000);
  });
  return { base, proc };
}

// A token made with `trainyard auth create-token` for the server's data dir.
export function createToken(trainyard, dataDir, project, role) {
  const r = spawnSync(trainyard, ['auth', 'create-token', '--data-dir', dataDir, '--project', project, '--role', role],
    { encoding: 'utf8' });
  const token = (r.stdout.match(/ty1_[0-9a-f_]+/) ?? [])[0];
  if (!token) throw new Error(`create-token failed: ${r.stdout} ${r.stderr}`);
  return token;
}

// REST calls to the server (JSON in and out); throws on a non-2xx answer.
export function restClient(base, token) {
  return async (method, p, body) => {
    const headers = body ? { 'Content-Type': 'application/json' } : {};
    if (token) headers.Authorization = `Bearer ${token}`;
    const r = await fetch(base + p, { method, body: body && JSON.stringify(body), headers });
    const j = await r.json();
    if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(j)}`);
    return j;
  };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls `fn` in the page until it returns true (page.evaluate goes through the DevTools protocol,
// which the console's Content-Security-Policy allows, unlike waitForFunction's eval).
export async function waitInPage(page, fn, timeoutMs = 30000, arg = undefined) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await page.evaluate(fn, arg)) return;
    await sleep(200);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${fn}`);
}

// Polls `fn` (async, in node) until it returns a truthy value, which it returns.
export async function waitFor(what, fn, timeoutMs = 120000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    last = await fn();
    if (last) return last;
    await sleep(500);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

export function checker() {
  const state = { failures: 0 };
  state.check = (ok, what) => { console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`); if (!ok) state.failures++; };
  return state;
}

// Records every request that leaves `base` and every console error of `page`.
export function watch(page, base, foreign, consoleErrors, ignore = /status of 404/) {
  page.on('request', (r) => { if (!r.url().startsWith(base + '/') && !r.url().startsWith('data:')) foreign.push(r.url()); });
  page.on('console', (m) => { if (m.type() === 'error' && !ignore.test(m.text())) consoleErrors.push(m.text()); });
}

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
export function scalarEvent(step, tag, value) {
  const f32 = Buffer.alloc(4); f32.writeFloatLE(value);
  const val = Buffer.concat([field(1, Buffer.from(tag)), Buffer.from([(2 << 3) | 5]), f32]);
  const wall = Buffer.alloc(8); wall.writeDoubleLE(Date.now() / 1000);
  return Buffer.concat([Buffer.from([(1 << 3) | 1]), wall, varint(2 << 3), varint(step), field(5, field(1, val))]);
}
export function record(payload) {
  const len = Buffer.alloc(8); len.writeBigUInt64LE(BigInt(payload.length));
  const c1 = Buffer.alloc(4); c1.writeUInt32LE(maskedCrc(len));
  const c2 = Buffer.alloc(4); c2.writeUInt32LE(maskedCrc(payload));
  return Buffer.concat([len, c1, payload, c2]);
}

// True when nothing on the page is wider than the viewport (no horizontal scrolling).
export const fitsWidth = (page) => page.evaluate(() =>
  document.documentElement.scrollWidth <= window.innerWidth && document.body.scrollWidth <= window.innerWidth);

// The form controls on the page that have no label (neither <label for>/wrapping nor aria-label).
export const unlabelled = (page) => page.evaluate(() => [...document.querySelectorAll('input, select, textarea')]
  .filter((el) => el.type !== 'hidden' && !(el.labels && el.labels.length) && !el.getAttribute('aria-label'))
  .map((el) => el.outerHTML.slice(0, 120)));

// Numbered full-page screenshots. After one, Chromium drops the next click on a scrolled page
// until it scrolls again, so the page is scrolled back to the top.
export function screenshotter(page, outDir, prefix) {
  let n = 0;
  return async (name, fullPage = true) => {
    await page.screenshot({ path: path.join(outDir, `${prefix}-${String(++n).padStart(2, '0')}-${name}.png`), fullPage });
    await page.evaluate(() => window.scrollTo(0, 0));
  };
}
