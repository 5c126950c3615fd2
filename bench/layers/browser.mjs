#!/usr/bin/env node
// `node bench/layers/browser.mjs [--quick] [--json] [--workloads tiny,bert,...]`: the layer workloads
// (default all five) in headless Chromium (Debian's /usr/bin/chromium, or $CHROMIUM, via
// playwright-core), pages served from the repository root by scripts/static_server.cjs, which
// sends COOP/COEP so the page is crossOriginIsolated and threads are available.
//
// Thread counts: 1 and N = min(navigator.hardwareConcurrency, 4) as the page reports it. Each
// thread count runs in its own fresh page, because onnxruntime-web's env.wasm.numThreads is
// global and fixed when its wasm starts. Per page and workload: this library (SIMD build at 1
// thread, the threaded build at N) and onnxruntime-web's fused and plain graphs at that thread
// count; engine ids as the Node bench's (ours-simd, ours-simd-2t, ort-fused-1t, ...). Encoder and
// generate stay Node-only. --json prints one JSON line on stdout (used by
// `npm run bench -- --browser`), progress on stderr.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

import { browserSection } from '../report/report.mjs';
import { POLICY } from '../common/timing.mjs';
import { kindOf, REL_TOLERANCE, selectWorkloads, WORKLOADS } from '../common/workloads.mjs';

const require = createRequire(import.meta.url);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const { serve } = require('../../scripts/static_server.cjs');
const { chromium } = require('playwright-core');

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

async function openPage(context, url, errors) {
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${url}/bench/page/layers/index.html`);
  await page.waitForFunction(() => typeof window.runWorkload === 'function', null, { timeout: 30000 });
  return page;
}

/** What a page must be for its thread count: isolated, our threaded build, ORT at N threads. */
function checkPage(threads, info, engines) {
  const problems = [];
  if (threads > 1 && !info.crossOriginIsolated) problems.push(`${threads}-thread page is not crossOriginIsolated (COOP/COEP headers missing?)`);
  for (const e of engines) {
    if (e.role === 'ours' && threads > 1 && (e.variant !== 'simd-threads' || e.libThreads !== threads)) problems.push(`${e.id}: variant ${e.variant} with ${e.libThreads} thread(s), expected simd-threads with ${threads}`);
    if (e.role === 'ours' && threads === 1 && e.variant !== 'simd') problems.push(`${e.id}: variant ${e.variant}, expected simd`);
    if (e.role === 'peer' && e.numThreads !== threads) problems.push(`${e.id}: onnxruntime-web runs numThreads ${e.numThreads}, expected ${threads}`);
  }
  return problems;
}

async function main() {
  const { values } = parseArgs({ options: {
    quick: { type: 'boolean', default: false }, json: { type: 'boolean', default: false }, workloads: { type: 'string' },
  } });
  const log = values.json ? (s) => process.stderr.write(`${s}\n`) : (s) => console.log(s);
  const names = values.workloads ? values.workloads.split(',').map((x) => x.trim()).filter(Boolean) : WORKLOADS.map((w) => w.name);
  const requested = selectWorkloads(names);
  const workloads = requested.filter((w) => kindOf(w) === 'layer');
  const nodeOnly = requested.filter((w) => kindOf(w) !== 'layer').map((w) => w.name);
  if (nodeOnly.length) log(`browser: ${nodeOnly.join(', ')} run in Node only; the browser runs the layer workloads`);
  if (!workloads.length) throw new Error('no layer workload selected (the browser runs tiny, bert, gpt2, long, batch)');

  const result = {
    meta: { date: new Date().toISOString(), cores: os.cpus().length, loadavg: os.loadavg(), quick: values.quick, policy: values.quick ? POLICY.quick : POLICY.full, tolerance: REL_TOLERANCE },
    workloads, nodeOnly, threadCounts: [], pages: [], engines: [], rows: [], problems: [],
  };
  const { server, url } = await serve(ROOT);
  const profile = mkdtempSync(path.join(os.tmpdir(), 'attn-bench-chromium-'));
  let context = null;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, args: FLAGS,
    });
    let errors = [];
    let page = await openPage(context, url, errors);
    const info = await page.evaluate(() => window.pageInfo());
    Object.assign(result, { userAgent: info.userAgent, crossOriginIsolated: info.crossOriginIsolated, hardwareConcurrency: info.hardwareConcurrency });
    const n = info.maxThreads;
    result.threadCounts = n > 1 ? [1, n] : [1];
    log(`browser: ${info.userAgent.match(/HeadlessChrome\/[\d.]+/)?.[0] ?? 'Chromium'}, crossOriginIsolated ${info.crossOriginIsolated}, hardwareConcurrency ${info.hardwareConcurrency}: threads ${result.threadCounts.join(' and ')}; ${workloads.map((w) => w.name).join(', ')}${values.quick ? ' (quick)' : ''}`);
    if (n === 1) result.problems.push('hardwareConcurrency 1: no multi-thread page');

    for (const threads of result.threadCounts) {
      if (!page) { errors = []; page = await openPage(context, url, errors); }
      const pageInfo = await page.evaluate(() => window.pageInfo());
      if (threads > 1 && !pageInfo.crossOriginIsolated) {
        result.problems.push(`${threads}-thread page is not crossOriginIsolated: not run (the static server must send COOP/COEP)`);
        await page.close();
        page = null;
        continue;
      }
      log(`browser: ${threads}-thread page`);
      for (const wl of workloads) {
        let rows;
        try {
          rows = await page.evaluate((o) => window.runWorkload(o), { workload: wl.name, threads, quick: values.quick });
        } catch (e) {
          rows = [{ engine: `page-${threads}t`, workload: wl.name, threads, error: String(e.message ?? e).split('\n')[0] }];
        }
        result.rows.push(...rows);
        for (const r of rows) {
          const agree = r.agreement ? `, agree ${r.agreement.rel.toExponential(1)}${r.agrees ? '' : ' DISAGREES'}` : r.isReference ? ', reference' : '';
          log(r.error ? `  ${wl.name.padEnd(5)} ${r.engine.padEnd(13)} ERROR ${r.error}`
            : `  ${wl.name.padEnd(5)} ${r.engine.padEnd(13)} median ${r.medianMs.toFixed(3)} ms, min ${r.minMs.toFixed(3)} ms, ${r.reps} reps, ${r.gflops.toFixed(2)} GFLOP/s${agree}`);
        }
      }
      const engines = await page.evaluate(() => window.pageEngines());
      result.engines.push(...engines);
      result.problems.push(...checkPage(threads, pageInfo, engines));
      result.pages.push({ threads, crossOriginIsolated: pageInfo.crossOriginIsolated, pageErrors: errors });
      for (const e of errors) result.problems.push(`${threads}-thread page error: ${e}`);
      await page.close();
      page = null;
    }
  } finally {
    if (context) await context.close();
    server.close();
    rmSync(profile, { recursive: true, force: true });
  }
  result.meta.loadavgEnd = os.loadavg();
  for (const r of result.rows.filter((x) => x.error || x.agrees === false)) {
    result.problems.push(`${r.workload} on ${r.engine}: ${r.error ?? `outputs differ from ours-simd (rel ${r.agreement.rel.toExponential(2)} > ${REL_TOLERANCE})`}`);
  }
  if (values.json) console.log(JSON.stringify(result));
  else console.log(`\n${browserSection(result).join('\n')}`);
  if (result.problems.length) process.exitCode = 1;
}

main().catch((e) => {
  if (process.argv.includes('--json')) console.log(JSON.stringify({ error: String(e.message ?? e).split('\n')[0] }));
  else console.error(`bench/layers/browser: ${e.message ?? e}`);
  process.exit(1);
});
