#!/usr/bin/env node
// `npm run bench`: every workload on every engine, one engine process at a time (the machine
// has 2 cores; two heavy processes would time each other). Outputs are checked against this
// library's SIMD build before any timing; results go to the terminal and bench/results/latest.json.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

import { ChildEngine } from './engine_proxy.mjs';
import { ENGINES, REFERENCE_ID, selectEngines } from './engines/index.mjs';
import { NativeEngine } from './engines/native.mjs';
import { measurePeak, mergePeaks } from './peak.mjs';
import { checkTargets, computeRatios, formatReport } from './report.mjs';
import { wasmSizes } from './sizes.mjs';
import { POLICY } from './timing.mjs';
import { compareOutputs, makeData, nominalFlops, selectWorkloads, WORKLOADS } from './workloads.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
// float32 results of different summation orders differ by ~1e-6 relative; 1e-3 leaves room for
// D=768 dot products while still catching a wrong mask, scale or layout (those are O(1)).
const TOLERANCE = 1e-3;

const HELP = `usage: npm run bench -- [--quick] [--workloads a,b] [--engines x,y] [--browser] [--out FILE]
  workloads: ${WORKLOADS.map((w) => w.name).join(', ')}
  engines:   ${ENGINES.map((e) => e.id).join(', ')}
  --quick    few repetitions (a smoke run of the harness)
  --browser  also run bench/browser.mjs (bert in headless Chromium)`;

function options() {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      browser: { type: 'boolean', default: false },
      workloads: { type: 'string' },
      engines: { type: 'string' },
      out: { type: 'string', default: `${ROOT}bench/results/latest.json` },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) { console.log(HELP); process.exit(0); }
  const list = (s) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : null);
  return { ...values, workloads: selectWorkloads(list(values.workloads)), engines: selectEngines(list(values.engines)) };
}

/** dist/ is a build product; build it once if missing (without the apt/npm bootstrap). */
function ensureDist() {
  if (existsSync(`${ROOT}dist/index.js`) && existsSync(`${ROOT}dist/attention_simd.wasm`)) return;
  console.log('dist/ is missing: building it (SKIP_BOOTSTRAP=1 bash scripts/build.sh) ...');
  const r = spawnSync('bash', ['scripts/build.sh'], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, SKIP_BOOTSTRAP: '1' } });
  if (r.status !== 0) { console.error('build failed; run `npm run build` and retry'); process.exit(1); }
}

async function runEngine(e, ctx) {
  const runner = e.native ? new NativeEngine(e) : new ChildEngine(e);
  try {
    await measureEngine(e, runner, ctx);
  } finally {
    await runner.close();  // also for skipped engines: a live child keeps the bench from exiting
  }
}

async function measureEngine(e, runner, { workloads, data, refs, policy, timed, res }) {
  const entry = { id: e.id, label: e.label, role: e.role, threads: e.threads, native: !!e.native, status: 'ok' };
  if (timed) res.engines.push(entry);
  try {
    const load = await runner.load();
    if (load.skip) {
      Object.assign(entry, { status: 'skipped', reason: load.skip });
      console.log(`${e.id}: skipped (${load.skip})`);
      return;
    }
    Object.assign(entry, { loadMs: load.loadMs, info: load.info });
    console.log(`${e.id}: loaded${load.loadMs != null ? ` in ${load.loadMs.toFixed(1)} ms` : ''}${timed ? '' : ' (reference outputs only)'}`);
  } catch (err) {
    Object.assign(entry, { status: 'failed to load', reason: String(err.message).split('\n')[0] });
    console.log(`${e.id}: failed to load: ${entry.reason}`);
    return;
  }
  for (const wl of workloads) {
    const row = { workload: wl.name, engine: e.id, nominalFlops: nominalFlops(wl) };
    try {
      const p = await runner.prepare(wl, data.get(wl.name));
      Object.assign(row, { firstCallMs: p.firstCallMs, prepareMs: p.prepareMs, sessionMs: p.sessionMs });
      if (e.id === REFERENCE_ID) { refs.set(wl.name, p.output); row.isReference = true; }
      const ref = refs.get(wl.name);
      if (ref && e.id !== REFERENCE_ID) {
        row.agreement = compareOutputs(ref, p.output);
        row.agrees = row.agreement.rel <= TOLERANCE;
      }
      if (timed) {
        Object.assign(row, await runner.time(policy));
        row.gflops = row.nominalFlops / row.medianMs / 1e6;
      }
      const agree = row.agreement ? `agree ${row.agreement.rel.toExponential(1)}${row.agrees ? '' : ' DISAGREES (excluded from ratios)'}` : ref ? 'reference' : 'no reference';
      console.log(`  ${wl.name.padEnd(5)} ${agree}; first call ${row.firstCallMs.toFixed(2)} ms${timed ? `; median ${row.medianMs.toFixed(3)} ms (${row.reps} reps), ${row.gflops.toFixed(2)} GFLOP/s` : ''}`);
    } catch (err) {
      row.error = String(err.message);
      console.log(`  ${wl.name.padEnd(5)} ERROR ${row.error.split('\n')[0]}`);
    }
    if (timed) res.rows.push(row);
  }
}

function runBrowser(quick) {
  console.log('browser: running bench/browser.mjs ...');
  const r = spawnSync(process.execPath, [`${ROOT}bench/browser.mjs`, '--json', ...(quick ? ['--quick'] : [])], { encoding: 'utf8', maxBuffer: 16 << 20 });
  const last = r.stdout.trim().split('\n').pop();
  try { return JSON.parse(last); } catch { return { error: (r.stderr || r.stdout || `exit ${r.status}`).trim().split('\n').slice(-3).join(' | ') }; }
}

async function main() {
  let opt;
  try {
    opt = options();
  } catch (e) {
    console.error(`bench: ${e.message}\n${HELP}`);
    process.exit(2);
  }
  ensureDist();
  const policy = opt.quick ? POLICY.quick : POLICY.full;
  const res = {
    meta: { date: new Date().toISOString(), node: process.version, cpu: os.cpus()[0]?.model, cores: os.cpus().length, loadavg: os.loadavg(), quick: opt.quick, policy, tolerance: TOLERANCE, workloads: opt.workloads },
    engines: [], rows: [],
  };
  console.log(`attention-wasm bench: ${opt.workloads.map((w) => w.name).join(', ')} on ${opt.engines.map((e) => e.id).join(', ')}${opt.quick ? ' (quick)' : ''}`);

  res.peak = await measurePeak({ quick: opt.quick });
  console.log(res.peak.skip ? `peak: skipped (${res.peak.skip})` : `peak: WASM f32x4 mul+add ${res.peak.gflops.toFixed(1)} GFLOP/s (one thread)`);
  res.sizes = wasmSizes();

  const data = new Map(opt.workloads.map((w) => [w.name, makeData(w)]));
  const refs = new Map();
  // The reference runs first; when it is not among the selected engines it still runs, untimed.
  const ref = ENGINES.find((e) => e.id === REFERENCE_ID);
  const ordered = [ref, ...opt.engines.filter((e) => e.id !== REFERENCE_ID)];
  for (const e of ordered) {
    await runEngine(e, { workloads: opt.workloads, data, refs, policy, timed: opt.engines.includes(e), res });
  }

  if (!res.peak.skip) res.peak = mergePeaks(res.peak, await measurePeak({ quick: opt.quick }));
  if (opt.browser) res.browser = runBrowser(opt.quick);
  res.ratios = computeRatios(res.rows, res.engines);
  res.targets = checkTargets(res.rows, res.ratios, res.peak);

  console.log(formatReport(res));
  const outFile = path.resolve(opt.out);
  mkdirSync(path.dirname(outFile), { recursive: true });
  writeFileSync(outFile, JSON.stringify(res, null, 2));
  console.log(`\nwritten: ${path.relative(process.cwd(), outFile)}`);
}

main().catch((e) => { console.error(e); process.exit(1); });
