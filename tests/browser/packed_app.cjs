// A new user's project: `npm pack` of this repository installed into an empty temp folder, as the
// package-in-an-app tests (widget from a CDN, bundlers) need it. Uses what dist/ holds now (packed
// once per test run: packed_tarball.cjs).
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { packedTarball } = require('../packed_tarball.cjs');

const root = path.resolve(__dirname, '../..');

/** Packs and installs; returns { dir: the app folder, pkg: its node_modules/attention-wasm, tarball, remove() }. */
function installPackedApp(prefix) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `attention-wasm-${prefix}-`));
  const { tarball, packed } = packedTarball();
  const dir = path.join(tmp, 'app');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], { cwd: dir, stdio: 'ignore' });
  return { dir, pkg: path.join(dir, 'node_modules/attention-wasm'), tarball, packed, remove: () => fs.rmSync(tmp, { recursive: true, force: true }) };
}

/** Packs and installs, then writes the user's app: src/main.js (`main`) and an index.html that loads it. */
function installModuleApp(prefix, main) {
  const app = installPackedApp(prefix);
  fs.mkdirSync(path.join(app.dir, 'src'));
  fs.writeFileSync(path.join(app.dir, 'src/main.js'), main);
  fs.writeFileSync(path.join(app.dir, 'index.html'), '<!doctype html><link rel="icon" href="data:,"><script type="module" src="/src/main.js"></script>\n');
  return app;
}

/** A plain HTTP server for one author's page: no special headers, as most hosts send. */
function servePage(html) {
  const server = http.createServer((req, res) => {
    if (req.url === '/' || req.url === '/index.html') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    else res.writeHead(404).end();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}` })));
}

/** Runs a command to its end; resolves with its output, rejects with it on a non-zero exit. */
function run(command, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited with ${code}:\n${out}`))));
  });
}

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});

/** Starts a server command (vite, vite preview) on a free port and waits for `ready` in its log;
 * returns { url, log(), stop() }. */
async function startServer(args, cwd, ready) {
  const port = await freePort();
  const child = spawn(process.execPath, [...args, '--port', String(port), '--strictPort', '--host', '127.0.0.1'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => { log += d; });
  child.stderr.on('data', (d) => { log += d; });
  const t0 = Date.now();
  while (!ready.test(log)) {
    if (Date.now() - t0 > 60000 || child.exitCode !== null) {
      child.kill();
      throw new Error(`${args.join(' ')} did not start:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url: `http://127.0.0.1:${port}`, log: () => log, stop: () => child.kill() };
}

// The self-hosting headers README.md lists ("Self-hosting the widget"), and nothing else.
const SELF_HOST_TYPES = { '.js': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json',
  '.txt': 'text/plain', '.safetensors': 'application/octet-stream', '.cjs': 'text/javascript' };

/** A static host for `dir` sending exactly README's self-hosting headers: the type and CORS. */
function serveSelfHosted(dir) {
  const server = http.createServer((req, res) => {
    const file = path.join(dir, decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (!file.startsWith(dir + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': SELF_HOST_TYPES[path.extname(file)] ?? 'application/octet-stream', 'access-control-allow-origin': '*' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}` })));
}

module.exports = { installPackedApp, installModuleApp, servePage, serveSelfHosted, root, run, startServer };
