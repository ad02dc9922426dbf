// A development proxy for the console: serves a freshly built `web/dist` at `/` and `/assets/*`
// (with the server's Content-Security-Policy, src/observability/console_routes.cc) and forwards
// every other request (method, headers, body, streamed both ways) to a real `trainyard server`.
// The browser tests use it with --console-dist DIR, so a console can be tested without rebuilding
// the server it is embedded in.
//
//   node web/test/dev_proxy.mjs --console-dist web/dist --upstream http://127.0.0.1:8080 [--port 0]
// prints "console proxy listening on http://127.0.0.1:PORT".
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CSP = "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; " +
  "script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.json': 'application/json; charset=utf-8', '.woff2': 'font/woff2',
};

function notFound(res, what) {
  res.writeHead(404, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify({ error: { code: 404, message: `no such console asset: ${what}`, status: 'NOT_FOUND' } }));
}

// `/` is index.html; `/assets/<file>` a file of dist/assets (no way out of it). Anything else: null.
function staticFile(dist, urlPath) {
  if (urlPath === '/' || urlPath === '/index.html') return path.join(dist, 'index.html');
  if (!urlPath.startsWith('/assets/')) return null;
  const rel = decodeURIComponent(urlPath.slice('/assets/'.length));
  const file = path.resolve(dist, 'assets', rel);
  return file.startsWith(path.resolve(dist, 'assets') + path.sep) ? file : '';
}

function serveStatic(res, file, urlPath) {
  if (!file || !fs.existsSync(file) || !fs.statSync(file).isFile()) { notFound(res, urlPath.slice(1)); return; }
  const headers = { 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream' };
  if (urlPath.startsWith('/assets/')) headers['Cache-Control'] = 'no-cache';
  else Object.assign(headers, { 'Content-Security-Policy': CSP, 'Cache-Control': 'no-cache' });
  res.writeHead(200, headers);
  fs.createReadStream(file).pipe(res);
}

function forward(req, res, upstream) {
  const target = new URL(req.url, upstream);
  const headers = { ...req.headers, host: target.host };
  const out = http.request(target, { method: req.method, headers }, (up) => {
    res.writeHead(up.statusCode ?? 502, up.statusMessage, up.headers);
    up.pipe(res);
  });
  out.on('error', (e) => {
    if (res.headersSent) { res.destroy(); return; }
    res.writeHead(502, { 'Content-Type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ error: { code: 502, message: `console proxy: ${e.message}`, status: 'UNAVAILABLE' } }));
  });
  req.pipe(out);
}

// Starts the proxy on 127.0.0.1:`port` (0: a free one); resolves to {base, close()}.
export function startProxy(dist, upstream, port = 0) {
  const root = path.resolve(dist);
  if (!fs.existsSync(path.join(root, 'index.html'))) throw new Error(`${root}/index.html not found (npm run build in web/)`);
  const server = http.createServer((req, res) => {
    const urlPath = new URL(req.url, 'http://x').pathname;
    const file = req.method === 'GET' || req.method === 'HEAD' ? staticFile(root, urlPath) : null;
    if (file === null) forward(req, res, upstream);
    else serveStatic(res, file, urlPath);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const base = `http://127.0.0.1:${server.address().port}`;
      resolve({ base, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) });
    });
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  const { base } = await startProxy(arg('console-dist', 'dist'), arg('upstream', 'http://127.0.0.1:8080'),
    Number(arg('port', '0')));
  console.log(`console proxy listening on ${base}`);
}
