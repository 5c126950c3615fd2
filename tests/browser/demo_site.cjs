// The demo site for the browser tests: built by scripts/build_web.mjs into build/<name>/ (DEMO_MODEL
// and DEMO_BERT swap the models, as for the demo), served on a free port, with one Chromium, and
// the helpers the demo tests share. Screenshots go to tests/browser/screenshots/ (git-ignored) for
// a human to look at.
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { serve } = require('../../scripts/static_server.cjs');
const { launch, open } = require('./chromium.cjs');

const root = path.resolve(__dirname, '../..');
const shots = path.join(__dirname, 'screenshots');

/** Registers beforeAll/afterAll that build and serve the site; returns its helpers. */
function demoSite(name) {
  const dir = path.join(root, 'build', name);
  const s = { dir, server: null, base: null, browser: null };
  beforeAll(async () => {
    execFileSync(process.execPath, [path.join(root, 'scripts/build_web.mjs')], { cwd: root, env: { ...process.env, OUT: dir }, stdio: 'pipe' });
    fs.mkdirSync(shots, { recursive: true });
    ({ server: s.server, url: s.base } = await serve(dir));
    s.browser = await launch();
  });
  afterAll(async () => {
    await s.browser?.close();
    s.server?.close();
  });

  /** Opens the demo (or another page of the site) and waits until it has drawn with no work pending. */
  s.demo = async (query = '', { page: file = 'index.html', width = 1280, height = 900 } = {}) => {
    const { page, errors } = await open(s.browser.context, 'about:blank');
    const dialogs = [];
    page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
    await page.setViewportSize({ width, height });
    await page.goto(`${s.base}/${file}${query}`);
    if (file === 'index.html') await s.settled(page);
    return { page, errors, dialogs };
  };

  s.settled = async (page) => {
    await page.waitForSelector('html[data-first-view-ms]', { timeout: 90000 });
    await page.waitForFunction(() => document.getElementById('app').dataset.busy === '0', null, { timeout: 90000 });
    // One more frame so the last answer is drawn.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
  };

  s.shot = async (page, shotName, options = {}) => {
    await page.screenshot({ path: path.join(shots, `${shotName}.png`), fullPage: true, ...options });
  };
  return s;
}

const rowsOf = (page, selector = '.attn-row') =>
  page.$$eval(selector, (rows) => rows.map((r) => r.getAttribute('data-weights').split(',').map(Number)));
const stepRow = (page, step, row) =>
  page.$eval(`#steps-body [data-step="${step}"] [data-row="${row}"]`, (el) => el.dataset.values.split(',').map(Number));
const sum = (xs) => xs.reduce((a, b) => a + b, 0);

function expectClose(actual, expected, tol, what) {
  expect({ what, length: actual.length }).toEqual({ what, length: expected.length });
  actual.forEach((a, i) => {
    if (!(Math.abs(a - expected[i]) <= tol)) throw new Error(`${what}[${i}] = ${a}, expected ${expected[i]} ± ${tol}`);
  });
}

/** The demo's GPT-2 in Node through the library (dist/): the folder scripts/build_web.mjs serves
 * (DEMO_MODEL, else web/models/brown-gpt2), for expectations computed apart from the page. */
async function referenceGpt2() {
  const { loadAttention } = require(path.join(root, 'dist/index.cjs'));
  const attn = await loadAttention({ threads: 1 });
  return attn.loadModel(path.resolve(root, process.env.DEMO_MODEL ?? 'web/models/brown-gpt2'));
}

module.exports = { demoSite, rowsOf, stepRow, sum, expectClose, referenceGpt2, root, shots, launch, open };
