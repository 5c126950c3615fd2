// The demo's static server under hostile requests: a path that does not decode, NUL bytes,
// traversal (plain, encoded, into a sibling folder whose name starts with the root's, through a
// symbolic link), other methods. Each gets its status and the server keeps serving.
const fs = require('node:fs');
const http = require('node:http');
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
