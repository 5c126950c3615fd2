// A local stand-in for the Hugging Face Hub, so the Hub tests never touch the internet. It mimics
// the Hub's URL layout and behaviour as seen by a client:
// - GET /{owner}/{name}/resolve/{revision}/{file}: small files answered directly (200), weights
//   (*.safetensors) with a 302 to a file-host path /cdn/..., as the Hub redirects LFS files;
// - the file host sends Content-Length, ETag and Accept-Ranges, and honours Range (206) / If-Range;
// - errors as the Hub sends them: an unknown repository is 401 with X-Error-Code: RepoNotFound (the
//   Hub does not reveal whether a private repository exists), a gated one 401 (no token) or 403
//   (a token without access) with X-Error-Code: GatedRepo, an unknown revision or file 404
//   (RevisionNotFound / EntryNotFound);
// - faults on demand: a connection cut after N bytes of a file, the first `times` times; and per
//   file (repo.faults, a Map a test empties to "fix the server"): an HTML page in its place, a gzip
//   bomb, a stall after some bytes, a connection closed before any answer;
// - CORS, so a page on another origin (the demo's browser test) can use it.
// Every request is logged in `requests`, so tests can count downloads.
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const zlib = require('node:zlib');

// A gzip bomb: 16 MiB of zeros compress to 16 kB; members concatenated unpack one after another.
const BOMB_MEMBER = zlib.gzipSync(Buffer.alloc(16 * 1024 * 1024));
const HTML_PAGE = '<!doctype html>\n<html><head><title>App</title></head><body><div id="app"></div></body></html>\n';

/**
 * A fault for one file, or false when there is none (or its `times` are used up):
 * { kind: 'html' } answers a web page; { kind: 'bomb', mib } sends a gzip body that unpacks to
 * `mib` MiB of zeros; { kind: 'stall', after, announce } sends `after` bytes then nothing, keeping
 * the connection open (its Content-Length is `announce`, default the file's size); { kind: 'hang' }
 * never answers; { kind: 'drop' } closes the connection before answering (as a server closing a
 * kept-alive connection the client was about to reuse). `times` (default Infinity): how many
 * requests it hits.
 */
function applyFault(req, res, repo, file, bytes) {
  const fault = repo.faults?.get(file);
  if (!fault || (fault.times ?? Infinity) <= 0) return false;
  if (fault.times !== undefined) fault.times--;
  if (fault.kind === 'drop') {
    req.socket.destroy();
  } else if (fault.kind === 'hang') {
    // No answer; the socket stays open until the client gives up.
  } else if (fault.kind === 'html') {
    res.writeHead(200, { ...CORS, 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': Buffer.byteLength(HTML_PAGE) });
    res.end(HTML_PAGE);
  } else if (fault.kind === 'bomb') {
    res.writeHead(200, { ...CORS, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    let left = fault.mib / 16;
    // Written as the client reads, so the server holds one member at a time.
    const more = () => { while (left > 0) { left--; if (!res.write(BOMB_MEMBER)) return res.once('drain', more); } res.end(); };
    res.on('error', () => {});
    more();
  } else if (fault.kind === 'stall') {
    res.writeHead(200, { ...CORS, 'Content-Type': 'application/octet-stream', 'Content-Length': fault.announce ?? bytes.length, ETag: etagOf(bytes) });
    res.write(bytes.subarray(0, fault.after ?? 0));
    fault.stalled = (fault.stalled ?? 0) + 1; // the socket stays open until the client gives up
  }
  return true;
}

/** All files under `dir` (relative names with '/'), read into Buffers. */
function readFolder(dir, skip = () => false) {
  const files = new Map();
  const walk = (sub) => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (skip(rel)) continue;
      if (entry.isDirectory()) walk(rel);
      else files.set(rel, fs.readFileSync(path.join(dir, rel)));
    }
  };
  walk('');
  return files;
}

/** Splits one safetensors file into `count` shards plus model.safetensors.index.json, as
 * transformers' save_pretrained(max_shard_size=...) lays them out. */
function shardSafetensors(bytes, count) {
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8'));
  const data = bytes.subarray(8 + headerLength);
  const names = Object.keys(header).filter((n) => n !== '__metadata__');
  const per = Math.ceil(names.length / count);
  const files = new Map();
  const weightMap = {};
  for (let s = 0; s < count; s++) {
    const shardName = `model-${String(s + 1).padStart(5, '0')}-of-${String(count).padStart(5, '0')}.safetensors`;
    const shardHeader = { __metadata__: { format: 'pt' } };
    const parts = [];
    let offset = 0;
    for (const name of names.slice(s * per, (s + 1) * per)) {
      const [begin, end] = header[name].data_offsets;
      shardHeader[name] = { ...header[name], data_offsets: [offset, offset + end - begin] };
      parts.push(data.subarray(begin, end));
      offset += end - begin;
      weightMap[name] = shardName;
    }
    let json = JSON.stringify(shardHeader);
    json += ' '.repeat((8 - (json.length % 8)) % 8);
    const head = Buffer.alloc(8);
    head.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
    files.set(shardName, Buffer.concat([head, Buffer.from(json), ...parts]));
  }
  const index = { metadata: { total_size: data.length }, weight_map: weightMap };
  files.set('model.safetensors.index.json', Buffer.from(JSON.stringify(index, null, 2)));
  return files;
}

const etagOf = (bytes) => `"${crypto.createHash('sha256').update(bytes).digest('hex')}"`;

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'ETag, Content-Length, Content-Range, Accept-Ranges, X-Error-Code, X-Repo-Commit',
  // Pages that are cross-origin isolated (COEP require-corp) may still read these answers.
  'Cross-Origin-Resource-Policy': 'cross-origin',
};

/**
 * repos: { 'owner/name': { files: Map<name, Buffer>, revisions?: string[] (default ['main']),
 *   token?: string (gated: only "Bearer <token>" gets in), cut?: { file, after, times },
 *   noRanges?: true (a server that ignores Range and sends the whole file),
 *   faults?: Map<file, fault> (see applyFault) } }
 * Resolves to { url, requests, repos, close() }.
 */
async function startHubServer(repos) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://hub.local');
    requests.push({ method: req.method, path: decodeURIComponent(url.pathname), headers: { ...req.headers } });
    const send = (status, headers = {}, body = '') => {
      res.writeHead(status, { ...CORS, ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (req.method === 'OPTIONS') {
      return send(204, { 'Access-Control-Allow-Methods': 'GET, HEAD', 'Access-Control-Allow-Headers': 'Authorization, Range, If-Range', 'Access-Control-Max-Age': '600' });
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405);
    const parts = url.pathname.split('/').slice(1).map(decodeURIComponent);

    // The file host: /cdn/{owner}/{name}/{revision}/{file...}
    if (parts[0] === 'cdn') {
      const repo = repos[`${parts[1]}/${parts[2]}`];
      const file = parts.slice(4).join('/');
      const bytes = repo?.files.get(file);
      if (!bytes) return send(404, {}, 'no such blob');
      return serveBytes(req, res, repo, file, bytes);
    }

    // The Hub: /{owner}/{name}/resolve/{revision}/{file...}
    // The file list of a revision (GET /api/models/{id}/tree/{revision}), as the Hub answers it.
    if (parts[0] === 'api' && parts[1] === 'models' && parts[4] === 'tree') {
      const repo = repos[`${parts[2]}/${parts[3]}`];
      if (!repo) return send(401, { 'X-Error-Code': 'RepoNotFound' }, '{"error":"Repository not found"}');
      const list = [...repo.files].map(([file, bytes]) => ({ type: 'file', path: file, size: bytes.length }));
      return send(200, { 'Content-Type': 'application/json' }, JSON.stringify(list));
    }

    const at = parts.indexOf('resolve');
    if (at < 1 || parts.length < at + 3) return send(404, { 'Content-Type': 'text/plain' }, 'Not Found');
    const id = parts.slice(0, at).join('/');
    const revision = parts[at + 1];
    const file = parts.slice(at + 2).join('/');
    const repo = repos[id];
    const error = (status, code, message) => send(status, { 'X-Error-Code': code, 'X-Error-Message': message, 'Content-Type': 'application/json' }, JSON.stringify({ error: message }));
    if (!repo) return error(401, 'RepoNotFound', 'Repository not found');
    if (repo.token) {
      const auth = req.headers.authorization;
      if (!auth) return error(401, 'GatedRepo', 'Access to model is restricted. You must have access to it and be authenticated to access it. Please log in.');
      if (auth !== `Bearer ${repo.token}`) return error(403, 'GatedRepo', 'Access to model is restricted and you are not in the authorized list.');
    }
    if (!(repo.revisions ?? ['main']).includes(revision)) return error(404, 'RevisionNotFound', `Invalid rev id: ${revision}`);
    const bytes = repo.files.get(file);
    if (!bytes) return error(404, 'EntryNotFound', `${file} does not exist on "${revision}"`);
    if (file.endsWith('.safetensors')) {
      // As the Hub does for LFS files: a redirect to the file host, with the file's ETag and size.
      const location = `/cdn/${id}/${revision}/${file}`;
      return send(302, { Location: location, 'X-Linked-Etag': etagOf(bytes), 'X-Linked-Size': String(bytes.length), 'Content-Length': '0' });
    }
    return serveBytes(req, res, repo, file, bytes);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sockets = new Set();
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    repos,
    /** GETs of the Hub's address of a file (/{id}/resolve/{rev}/...`file`): one per download. */
    count: (file) => requests.filter((r) => r.method === 'GET' && r.path.includes('/resolve/') && r.path.endsWith(`/${file}`)).length,
    close: () => new Promise((resolve) => { for (const s of sockets) s.destroy(); server.close(resolve); }),
  };
}

/** Content-Length, ETag, Range / If-Range, and the configured connection cut or fault. */
function serveBytes(req, res, repo, file, bytes) {
  if (applyFault(req, res, repo, file, bytes)) return undefined;
  const etag = etagOf(bytes);
  const headers = { ...CORS, ETag: etag, 'Accept-Ranges': 'bytes', 'Content-Type': 'application/octet-stream' };
  let start = 0;
  let status = 200;
  const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
  if (range && !repo.noRanges && (!req.headers['if-range'] || req.headers['if-range'] === etag)) {
    start = Number(range[1]);
    if (start >= bytes.length) {
      res.writeHead(416, { ...headers, 'Content-Range': `bytes */${bytes.length}` });
      return res.end();
    }
    status = 206;
    headers['Content-Range'] = `bytes ${start}-${bytes.length - 1}/${bytes.length}`;
  }
  const body = bytes.subarray(start);
  headers['Content-Length'] = String(body.length);
  res.writeHead(status, headers);
  if (req.method === 'HEAD') return res.end();
  const cut = repo.cut;
  if (cut && cut.file === file && cut.times > 0) {
    // Announce the whole length, send part of it, then drop the connection.
    cut.times--;
    res.write(body.subarray(0, Math.max(0, cut.after - start)), () => res.socket.destroy());
    return undefined;
  }
  return res.end(body);
}

module.exports = { startHubServer, readFolder, shardSafetensors };
