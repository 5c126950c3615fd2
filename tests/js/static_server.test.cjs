// The demo's static server under hostile requests: a path that does not decode, NUL bytes,
// traversal (plain, encoded, into a sibling folder whose name starts with the root's, through a
// symbolic link, the folder's index file as a link out of it), other methods. Each gets its status
// and the server keeps serving; so do new clients while 1,000 others hold connections open.
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const { execFileSync } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');
const { serve } = require('../../scripts/static_server.cjs');

let base, server, dir;

/** A raw GET (http.request sends the path as given: no normalisation of "..", no re-encoding). */
function get(rawPath, method = 'GET') {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/`, { method, path: rawPath }, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-static-'));
  fs.mkdirSync(path.join(dir, 'web', 'models'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'web-secret'));
  fs.writeFileSync(path.join(dir, 'web', 'index.html'), '<p>demo</p>');
  fs.writeFileSync(path.join(dir, 'web', 'models', 'config.json'), '{"a":1}');
  fs.writeFileSync(path.join(dir, 'web-secret', 'key.txt'), 'secret');
  fs.writeFileSync(path.join(dir, 'outside.txt'), 'secret');
  fs.symlinkSync(path.join(dir, 'web-secret'), path.join(dir, 'web', 'link'));
  // A folder whose index.html is a link out of the root, and one whose link stays inside.
  fs.mkdirSync(path.join(dir, 'web', 'd'));
  fs.symlinkSync(path.join(dir, 'outside.txt'), path.join(dir, 'web', 'd', 'index.html'));
  fs.mkdirSync(path.join(dir, 'web', 'e'));
  fs.symlinkSync(path.join(dir, 'web', 'index.html'), path.join(dir, 'web', 'e', 'index.html'));
  ({ server, url: base } = await serve(path.join(dir, 'web')));
});

afterAll(() => {
  server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('serves files with the isolation headers', async () => {
  const index = await get('/');
  expect(index.status).toBe(200);
  expect(index.body).toBe('<p>demo</p>');
  expect(index.headers['cross-origin-embedder-policy']).toBe('require-corp');
  expect(index.headers['cross-origin-opener-policy']).toBe('same-origin');
  const config = await get('/models/config.json');
  expect([config.status, config.headers['content-type'], config.body]).toEqual([200, 'application/json', '{"a":1}']);
  const head = await get('/models/config.json', 'HEAD');
  expect([head.status, head.body, head.headers['content-length']]).toEqual([200, '', '7']);
});

test.each([
  ['/%E0%A4%A', 400, 'a percent-escape that does not decode'],
  ['/%', 400, 'a lone percent'],
  ['/index.html%00.txt', 400, 'a NUL byte'],
  // Dot segments are resolved within the URL, as a browser does: these stay under the root.
  ['/../outside.txt', 404, 'plain traversal'],
  ['/%2e%2e/outside.txt', 404, 'encoded dots'],
  // An encoded slash survives URL parsing, so the decoded path climbs out: refused.
  ['/..%2foutside.txt', 403, 'encoded slash'],
  ['/..%2fweb-secret/key.txt', 403, 'a sibling folder whose name starts with the root\'s'],
  ['/..%5cweb-secret%5ckey.txt', 404, 'backslashes (a file name on POSIX)'],
  ['/link/key.txt', 403, 'a symbolic link out of the root'],
  ['/d/', 403, 'a folder whose index.html is a symbolic link out of the root'],
  ['/d/index.html', 403, 'that index.html asked for by name'],
  ['/missing.js', 404, 'a missing file'],
  ['/models', 404, 'a folder without an index'],
])('%s -> %i (%s), and the server keeps serving', async (p, status) => {
  const r = await get(p);
  expect(r.status).toBe(status);
  expect(r.body).not.toContain('secret');
  expect((await get('/')).status).toBe(200);
});

test('other methods are refused', async () => {
  expect((await get('/', 'POST')).status).toBe(405);
  expect((await get('/', 'DELETE')).status).toBe(405);
  expect((await get('/')).status).toBe(200);
});

test('a folder whose index.html links to a file inside the root is served', async () => {
  const r = await get('/e/');
  expect([r.status, r.body]).toEqual([200, '<p>demo</p>']);
});

/** Opens `count` connections; `send` is written on each once connected; resolves when `ready(socket)`
 * has said so for each. Sockets read what comes (else they would not see the server close them). */
function openMany(port, count, send, ready = (s, done) => { s.resume(); done(); }) {
  const sockets = [];
  const opened = Promise.all(Array.from({ length: count }, () => new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => { s.write(send); ready(s, resolve); });
    s.on('error', resolve);
    sockets.push(s);
  })));
  return { sockets, opened, closed: () => Promise.all(sockets.map((s) => (s.destroyed ? null : new Promise((r) => s.on('close', r))))) };
}

describe('many connections at once', () => {
  let own, ownUrl;
  beforeAll(async () => {
    // Short timeouts, so the test sees the server close what it must close.
    ({ server: own, url: ownUrl } = await serve(path.join(dir, 'web'), { keepAliveTimeout: 300, headersTimeout: 500 }));
  });
  afterAll(() => own.close());
  const port = () => new URL(ownUrl).port;
  const status = () => new Promise((resolve) => http.get(`${ownUrl}/`, { agent: false }, (res) => { res.resume(); resolve(res.statusCode); }).on('error', (e) => resolve(e.code)));

  test('1,000 idle keep-alive and 1,000 half-sent connections: a new client is answered, and the server closes them all', async () => {
    const idle = openMany(port(), 1000, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', (s, done) => s.once('data', done));
    const half = openMany(port(), 1000, 'GET / HTTP/1.1\r\nHost: x\r\n');
    await Promise.all([idle.opened, half.opened]);
    expect(await status()).toBe(200);
    // keepAliveTimeout closes the idle ones, headersTimeout the half-sent ones (jest's timeout bounds the wait).
    await Promise.all([idle.closed(), half.closed()]);
    expect(await status()).toBe(200);
  });

  test('the accept queue holds a burst of 1,000 connections (Node\'s default of 511 drops SYNs: 1-7 s retries)', () => {
    let listing;
    try {
      listing = execFileSync('ss', ['-Hltn', `sport = :${port()}`], { encoding: 'utf8' });
    } catch {
      return; // no ss (not Linux): nothing to read the queue's size from
    }
    // LISTEN  Recv-Q  Send-Q (the backlog, capped by net.core.somaxconn)  address
    const backlog = Number(listing.trim().split(/\s+/)[2]);
    const somaxconn = Number(fs.readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
    expect(backlog).toBe(Math.min(4096, somaxconn));
    expect(backlog).toBeGreaterThanOrEqual(Math.min(1024, somaxconn));
  });
});
