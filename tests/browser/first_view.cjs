// One cold load of the demo as a visitor's browser has it (a fresh profile, so nothing cached, in
// a browser that has been running for 3 s: plain_chromium.cjs says why), driven by Playwright:
// when the first view was drawn, whether it came from a partial run, and the bytes the server
// sent for it (the worker's own fetches included: the page cannot see those).
const fs = require('node:fs');
const path = require('node:path');
const { launch, open } = require('./chromium.cjs');

/** Counts the bytes `server` sends per path while `fn` runs; returns [{ file, bytes }]. */
async function bytesSent(server, fn) {
  const sent = new Map();
  // The body as written, whether in one end(data) or streamed through write() (a piped file).
  const count = (req, res) => {
    let bytes = 0;
    const add = (data) => { if (data && typeof data !== 'function') bytes += typeof data === 'string' ? Buffer.byteLength(data) : data.length; };
    const { write, end } = res;
    res.write = function (data, ...rest) { add(data); return write.call(this, data, ...rest); };
    res.end = function (data, ...rest) {
      add(data);
      if (bytes) sent.set(req.url.split('?')[0], bytes);
      return end.call(this, data, ...rest);
    };
  };
  server.on('request', count);
  try {
    await fn();
  } finally {
    server.off('request', count);
  }
  return [...sent].map(([file, bytes]) => ({ file, bytes }));
}

/** One cold load of `${site.base}/index.html`: { ms, partial, modelInfo, transfer }. */
async function coldFirstView(site) {
  const out = {};
  out.transfer = await bytesSent(site.server, async () => {
    const b = await launch();
    try {
      const { page } = await open(b.context, 'about:blank');
      await page.waitForTimeout(3000); // a running browser, as a visitor's is
      await page.goto(`${site.base}/index.html`);
      await page.waitForSelector('html[data-first-view-ms]', { timeout: 30000 });
      out.ms = Number(await page.$eval('html', (h) => h.dataset.firstViewMs));
      await page.waitForFunction(() => document.getElementById('app').dataset.busy === '0');
      out.partial = await page.evaluate(() => window.__metrics.firstViewPartial);
      out.modelInfo = await page.textContent('#model-info');
    } finally {
      await b.close();
    }
  });
  return out;
}

/** The transfer by kind (JS, WASM, model, page) and file, with the build's gzip total. */
function describeTransfer(transfer, siteDir) {
  const total = transfer.reduce((a, f) => a + f.bytes, 0);
  const kind = (f) => (f.endsWith('.js') ? 'js' : f.endsWith('.wasm') ? 'wasm' : f.includes('/models/') ? 'model' : 'page');
  const by = {};
  for (const f of transfer) by[kind(f.file)] = (by[kind(f.file)] ?? 0) + f.bytes;
  const kib = (n) => `${((n ?? 0) / 1024).toFixed(1)} KiB`;
  const info = JSON.parse(fs.readFileSync(path.join(siteDir, 'build-info.json'), 'utf8'));
  return `transferred (uncompressed): ${kib(total)} in ${transfer.length} files: JS ${kib(by.js)}, WASM ${kib(by.wasm)}, model ${kib(by.model)}, HTML+CSS ${kib(by.page)}\n`
    + transfer.map((f) => `  ${f.file} ${kib(f.bytes)}`).join('\n')
    + `\nwith gzip (build-info.json): ${kib(info.total.gzip)}`;
}

module.exports = { coldFirstView, describeTransfer };
