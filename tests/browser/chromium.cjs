// Debian's Chromium driven by playwright-core (Playwright cannot download browsers here).
const { chromium } = require('playwright-core');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const executablePath = () => process.env.CHROMIUM || '/usr/bin/chromium';

async function launch() {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: executablePath(),
    headless: true,
    args: CHROMIUM_ARGS,
  });
  // Waits for the page are generous: a busy CI machine may take many times a quiet one's time, and
  // the tests assert no time (the jest timeout, 120 s, still ends a page that never answers).
  context.setDefaultTimeout(90000);
  const close = async () => {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  return { context, close };
}

/** Opens `url`, collecting console errors and uncaught page errors. */
async function open(context, url) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(url);
  return { page, errors };
}

/** The repository (`root`) served over http and one Chromium, started before a test file's tests and
 * closed after them: `{ base, browser }`, filled in by beforeAll. */
function servedRepository(root) {
  const { serve } = require('../../scripts/static_server.cjs');
  const site = {};
  beforeAll(async () => {
    ({ server: site.server, url: site.base } = await serve(root));
    site.browser = await launch();
  });
  afterAll(async () => {
    await site.browser?.close();
    site.server?.close();
  });
  return site;
}

module.exports = { launch, open, servedRepository, CHROMIUM_ARGS, executablePath };
