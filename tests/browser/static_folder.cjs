// A plain static host for a folder, as most sites are served: each file's type and nothing else
// (no CORS, no COOP/COEP), `/` being index.html. For the tutorial pages widget_package.test.cjs
// builds (the packed package's own "CDN" is packed_app.cjs's serveSelfHosted).
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.json': 'application/json' };

/** Serves `dir` on a free port of 127.0.0.1: resolves to { server, url }. */
function serveFolder(dir) {
  const server = http.createServer((req, res) => {
    const pathname = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = path.join(dir, pathname === '/' ? 'index.html' : pathname);
    if (!file.startsWith(dir + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}` })));
}

module.exports = { serveFolder };
