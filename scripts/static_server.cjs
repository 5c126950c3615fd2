// A small static file server for the demo and the browser tests (no dependencies). Sends the
// cross-origin isolation headers (COOP/COEP) so threaded WebAssembly can be used where built.
// Whatever a client sends, it answers (400 / 403 / 404 / 405) and keeps serving: a malformed
// path or a path that leaves the root is refused, never thrown. Many clients at once are served
// too: files stream (a slow reader holds 64 kB, not the file), the accept queue takes a burst of
// 1,000 connections (Node's default of 511 drops the rest, whose clients retry after 1, 3, 7 s),
// and idle or half-sent connections are closed after bounded timeouts.
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

/** A path's real location if it is under root (symbolic links resolved), else 403; 404 if absent. */
async function realInside(root, file) {
  const real = await fs.promises.realpath(file);
  return inside(root, real) ? real : 403;
}

/**
 * The file a request path names under root, or an HTTP status: 400 for a path that does not
 * decode (or holds a NUL), 403 for one that leaves root (also through a symbolic link, the
 * folder's or its index file's), 404.
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
    file = await realInside(root, file);
    if (typeof file === 'number') return file;
    // The index file the folder adds is resolved too: it may be a link out of the root.
    if ((await fs.promises.stat(file)).isDirectory()) file = await realInside(root, path.join(file, index));
    if (typeof file === 'number') return file;
    const stat = await fs.promises.stat(file);
    return stat.isFile() ? { file, size: stat.size } : 404;
  } catch {
    return 404;
  }
}

// How long a connection may stay idle between requests, take to send its headers, or go without
// any traffic: bounded, so idle and half-sent connections cannot pile up.
const TIMEOUTS = { keepAliveTimeout: 5000, headersTimeout: 10000, idleTimeout: 60000 };

/** Serves files under `rootDir`; resolves to { server, url } once listening. The timeouts
 * (milliseconds, TIMEOUTS by default) may be shortened, e.g. in tests. */
function serve(rootDir, { port = 0, host = '127.0.0.1', index = 'index.html', ...timeouts } = {}) {
  const t = { ...TIMEOUTS, ...timeouts };
  const root = fs.realpathSync(path.resolve(rootDir));
  const fail = (res, status) => res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' })
    .end(`${status} ${http.STATUS_CODES[status]}\n`);
  // connectionsCheckingInterval: how often Node looks for connections past headersTimeout.
  const server = http.createServer({ connectionsCheckingInterval: Math.min(1000, t.headersTimeout) }, async (req, res) => {
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') return fail(res, 405);
      const found = await resolveFile(root, req.url, index);
      if (typeof found === 'number') return fail(res, found);
      const { file, size } = found;
      res.writeHead(200, {
        'content-type': TYPES[path.extname(file)] || 'application/octet-stream',
        'content-length': size,
        'cross-origin-opener-policy': 'same-origin',
        'cross-origin-embedder-policy': 'require-corp',
        // Public files: a tutorial on another origin may load the widget, its worker and models.
        'cross-origin-resource-policy': 'cross-origin',
        'access-control-allow-origin': '*',
        'cache-control': 'no-cache',
      });
      if (req.method === 'HEAD') return res.end();
      // Streamed with backpressure; a read error ends the connection (the length was promised).
      fs.createReadStream(file).on('error', (e) => res.destroy(e)).pipe(res);
    } catch (e) {
      if (!res.headersSent) fail(res, 500); else res.destroy(e);
    }
  });
  // A client that sends garbage gets a 400 from Node; it must not take the server down.
  server.on('clientError', (err, socket) => { if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'); else socket.destroy(); });
  server.keepAliveTimeout = t.keepAliveTimeout;
  server.headersTimeout = t.headersTimeout;
  server.requestTimeout = Math.max(t.headersTimeout, 30000);
  server.setTimeout(t.idleTimeout); // with no 'timeout' listener, Node destroys the socket
  // The accept queue (the kernel caps it at net.core.somaxconn).
  return new Promise((resolve) => server.listen({ port, host, backlog: 4096 }, () => {
    resolve({ server, url: `http://${host}:${server.address().port}` });
  }));
}

module.exports = { serve };
