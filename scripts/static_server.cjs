// A small static file server for the demo and the browser tests (no dependencies). Sends the
// cross-origin isolation headers (COOP/COEP) so threaded WebAssembly can be used where built.
// Whatever a client sends, it answers (400 / 403 / 404 / 405) and keeps serving: a malformed
// path or a path that leaves the root is refused, never thrown.
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.json': 'application/json',
  '.wasm': 'application/wasm', '.png': 'image/png', '.svg': 'image/svg+xml', '.txt': 'text/plain; charset=utf-8',
  '.safetensors': 'application/octet-stream', '.md': 'text/plain; charset=utf-8', '.map': 'application/json',
};

const inside = (root, file) => file === root || file.startsWith(root + path.sep);

/**
 * The file a request path names under root, or an HTTP status: 400 for a path that does not
 * decode (or holds a NUL), 403 for one that leaves root (also through a symbolic link), 404.
 */
async function resolveFile(root, rawPath, index) {
  let urlPath;
  try {
    urlPath = decodeURIComponent(new URL(rawPath, 'http://x').pathname);
  } catch {
    return 400;
  }
  if (urlPath.includes('\0')) return 400;
  let file = path.resolve(root, '.' + urlPath);
  if (!inside(root, file)) return 403;
  try {
    file = await fs.promises.realpath(file);
    if (!inside(root, file)) return 403;
    if ((await fs.promises.stat(file)).isDirectory()) file = path.join(file, index);
    if (!(await fs.promises.stat(file)).isFile()) return 404;
  } catch {
    return 404;
  }
  return file;
}

/** Serves files under `rootDir`; resolves to { server, url } once listening. */
function serve(rootDir, { port = 0, host = '127.0.0.1', index = 'index.html' } = {}) {
  const root = fs.realpathSync(path.resolve(rootDir));
  const fail = (res, status) => res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' })
    .end(`${status} ${http.STATUS_CODES[status]}\n`);
  const server = http.createServer(async (req, res) => {
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') return fail(res, 405);
      const file = await resolveFile(root, req.url, index);
      if (typeof file === 'number') return fail(res, file);
      const data = await fs.promises.readFile(file);
      res.writeHead(200, {
        'content-type': TYPES[path.extname(file)] || 'application/octet-stream',
        'content-length': data.length,
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-embedder-policy': 'require-corp',
        // Public files: a tutorial on another origin may load the widget, its worker and models.
        'cross-origin-resource-policy': 'cross-origin',
        'access-control-allow-origin': '*',
        'cache-control': 'no-cache',
      });
      res.end(req.method === 'HEAD' ? undefined : data);
    } catch (e) {
      if (!res.headersSent) fail(res, 500); else res.destroy(e);
    }
  });
  // A client that sends garbage gets a 400 from Node; it must not take the server down.
  server.on('clientError', (err, socket) => { if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'); else socket.destroy(); });
  return new Promise((resolve) => server.listen(port, host, () => {
    resolve({ server, url: `http://${host}:${server.address().port}` });
  }));
}

module.exports = { serve };
