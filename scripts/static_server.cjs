// A small static file server for the demo and the browser tests (no dependencies). Sends the
// cross-origin isolation headers (COOP/COEP) so threaded WebAssembly can be used where built.
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.json': 'application/json',
  '.wasm': 'application/wasm', '.png': 'image/png', '.svg': 'image/svg+xml', '.txt': 'text/plain; charset=utf-8',
  '.safetensors': 'application/octet-stream', '.md': 'text/plain; charset=utf-8',
};

/** Serves files under `rootDir`; resolves to { server, url } once listening. */
function serve(rootDir, { port = 0, host = '127.0.0.1', index = 'index.html' } = {}) {
  const root = path.resolve(rootDir);
  const server = http.createServer((req, res) => {
    const urlPath = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    let file = path.resolve(root, '.' + urlPath);
    if (!file.startsWith(root)) { res.writeHead(403).end('forbidden'); return; }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, index);
    fs.readFile(file, (err, data) => {
      if (err) { res.writeHead(404, { 'content-type': 'text/plain' }).end('not found'); return; }
      res.writeHead(200, {
        'content-type': TYPES[path.extname(file)] || 'application/octet-stream',
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-embedder-policy': 'require-corp',
        'cache-control': 'no-cache',
      });
      res.end(data);
    });
  });
  return new Promise((resolve) => server.listen(port, host, () => {
    resolve({ server, url: `http://${host}:${server.address().port}` });
  }));
}

module.exports = { serve };
