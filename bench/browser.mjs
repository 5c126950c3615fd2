#!/usr/bin/env node
// `node bench/browser.mjs [--quick] [--json]`: the bert workload for this library and
// onnxruntime-web (1 thread) in headless Chromium (Debian's /usr/bin/chromium via
// playwright-core), pages served from the repository root. --json prints one JSON line (used
// by `npm run bench -- --browser`).
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const { serve } = require('../scripts/static_server.cjs');
const { chromium } = require('playwright-core');

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

async function main() {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, json: { type: 'boolean', default: false }, workload: { type: 'string', default: 'bert' } } });
  const { server, url } = await serve(ROOT);
  const profile = mkdtempSync(path.join(os.tmpdir(), 'attn-bench-chromium-'));
  let context = null;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, args: FLAGS,
    });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${url}/bench/browser/index.html`);
    await page.waitForFunction(() => typeof window.runBench === 'function', null, { timeout: 30000 });
    const result = await page.evaluate((o) => window.runBench(o), { workload: values.workload, quick: values.quick });
    if (errors.length) result.pageErrors = errors;
    if (values.json) {
      console.log(JSON.stringify(result));
    } else {
      console.log(`${result.userAgent} (crossOriginIsolated: ${result.crossOriginIsolated})`);
      for (const r of result.rows) {
        console.log(r.error ? `${r.engine.padEnd(13)} ERROR ${r.error}` : `${r.engine.padEnd(13)} ${r.workload} median ${r.medianMs.toFixed(3)} ms, min ${r.minMs.toFixed(3)} ms, ${r.reps} reps, ${r.gflops.toFixed(2)} GFLOP/s${r.rel != null ? `, agree ${r.rel.toExponential(1)}` : ''}`);
      }
    }
  } finally {
    if (context) await context.close();
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((e) => {
  if (process.argv.includes('--json')) console.log(JSON.stringify({ error: String(e.message ?? e).split('\n')[0] }));
  else console.error(e);
  process.exit(1);
});
