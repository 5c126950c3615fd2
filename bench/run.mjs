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

import { ChildEngine } from './engines/proxy.mjs';
import { prepareEncoder } from './encoder/workload.mjs';
import { logitsDiffText, prepareGenerate, tokenAgreement, tokenAgreementText } from './generate/workload.mjs';
import { generateTargets } from './report/generate.mjs';
import { measureBandwidth, mergeBandwidths } from './peak/bandwidth.mjs';
import { ENGINES, REFERENCE_ID, runsWorkload, selectEngines } from './engines/index.mjs';
import { NativeEngine } from './engines/native.mjs';
import { measurePeak, mergePeaks } from './peak/peak.mjs';
import { checkTargets, computeRatios, formatReport, threadSpeedups } from './report/report.mjs';
import { wasmSizes } from './common/sizes.mjs';
import { POLICY } from './common/timing.mjs';
import { compareOutputs, kindOf, makeData, nominalFlops, REL_TOLERANCE, selectWorkloads, WORKLOADS } from './common/workloads.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
// Relative agreement tolerance (shared with the browser page; see common/workloads.mjs).
const TOLERANCE = REL_TOLERANCE;

const HELP = `usage: npm run bench -- [--quick] [--workloads a,b] [--engines x,y] [--browser] [--out FILE]
  workloads: ${WORKLOADS.map((w) => w.name).join(', ')}
  engines:   ${ENGINES.map((e) => `${e.id}${e.optIn ? ' (only when named)' : ''}`).join(', ')}
  --quick    few repetitions (a smoke run of the harness)
  --browser  also run bench/layers/browser.mjs: the selected layer workloads (encoder and generate are
             Node-only) in headless Chromium at 1 and N threads, each with its own engines
             (ours-simd, ours-simd-Nt, ort-fused/plain-1t/Nt; --engines does not apply there)
  e.g. --workloads encoder: only the encoder (MiniLM-L6-shaped BERT) on the engines that run it;
       --workloads generate: only GPT-2-small text generation (tokens/s, time to first token)
       --workloads generate-families: Qwen3, Gemma 3, SmolLM3 and Phi-3 of SmolLM2-135M's size against its Llama (decode, f32 and q8)`;

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

// Workloads whose data comes from a PyTorch export (cached in build/), by kind.
const PREPARE = { encoder: prepareEncoder, generate: prepareGenerate };

/** Agreement of an output with the reference: max |diff| for workloads with absTolerance, else relative. */
function agreement(wl, ref, out, against) {
  const a = { ...compareOutputs(ref, out), against };
  if (wl.absTolerance != null) return { ...a, kind: 'abs', value: a.maxAbsDiff, tolerance: wl.absTolerance, ok: a.maxAbsDiff <= wl.absTolerance };
  return { ...a, kind: 'rel', value: a.rel, tolerance: TOLERANCE, ok: a.rel <= TOLERANCE };
}

async function measureEngine(e, runner, { workloads, data, expected, refs, policy, timed, res }) {
  const entry = { id: e.id, label: e.label, role: e.role, threads: e.threads, native: !!e.native, dtype: e.dtype, lossy: !!e.lossy, status: 'ok' };
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
  // An untimed reference skips generate: those outputs are checked against PyTorch, not it.
  for (const wl of workloads.filter((w) => runsWorkload(e, w) && (timed || kindOf(w) !== 'generate'))) {
    const row = { workload: wl.name, engine: e.id, nominalFlops: nominalFlops(wl) };
    try {
      const p = await runner.prepare(wl, data.get(wl.name));
      Object.assign(row, { firstCallMs: p.firstCallMs, prepareMs: p.prepareMs, sessionMs: p.sessionMs });
      // Generated token ids: every engine against PyTorch's own continuation.
      if (kindOf(wl) === 'generate') row.agreement = tokenAgreement(wl, expected.get(wl.name), p.output, { lossy: !!e.lossy, dtype: e.dtype, logits: p.prefillLogits });
      // The reference is checked against PyTorch's own output where the workload has one.
      else if (e.id === REFERENCE_ID) {
        refs.set(wl.name, p.output);
        row.isReference = true;
        if (expected.has(wl.name)) row.agreement = agreement(wl, expected.get(wl.name), p.output, 'pytorch');
      }
      const ref = refs.get(wl.name);
      if (ref && e.id !== REFERENCE_ID && kindOf(wl) !== 'generate') row.agreement = agreement(wl, ref, p.output, REFERENCE_ID);
      if (row.agreement) row.agrees = row.agreement.ok;
      const agree = row.agreement?.kind === 'tokens'
        ? `tokens ${tokenAgreementText(row.agreement, wl.newTokens)}${row.agrees ? '' : ` DISAGREES (${row.agreement.tolerance} must)`}; prefill logits vs PyTorch ${logitsDiffText(row.agreement)}`
        : row.agreement
        ? `${row.agreement.kind === 'abs' ? 'max|diff|' : 'agree'} ${row.agreement.value.toExponential(1)}${row.agreement.against === 'pytorch' ? ' vs PyTorch' : ''}${row.agrees ? '' : ` DISAGREES (tolerance ${row.agreement.tolerance})`}`
        : ref ? 'reference' : 'no reference';
      if (row.agrees === false && wl.strict) {
        // Timing a different function would be meaningless: stop here and fail the run.
        row.error = row.agreement.why ?? (row.agreement.kind === 'tokens'
          ? (row.agreement.complete ? `only the first ${row.agreement.value} of ${wl.newTokens} tokens equal PyTorch's (${row.agreement.tolerance} must)` : `generated ${p.output.length} of ${wl.newTokens} tokens (stopped at end-of-text)`)
          : `outputs differ from ${row.agreement.against}: max |diff| ${row.agreement.maxAbsDiff.toExponential(2)} > ${row.agreement.tolerance}`);
        res.failures.push(`${wl.name} on ${e.id}: ${row.error}`);
        console.log(`  ${wl.name.padEnd(5)} ${agree}: NOT TIMED, the bench will fail`);
        if (timed) res.rows.push(row);
        continue;
      }
      if (timed) {
        // A generation takes seconds and its first call (checked above) already warmed it up.
        Object.assign(row, await runner.time(kindOf(wl) === 'generate' ? { ...policy, warmupMinCalls: 0 } : policy));
        row.gflops = row.nominalFlops / row.medianMs / 1e6;
        if (kindOf(wl) === 'encoder') row.sentencesPerSec = (wl.batch * 1000) / row.medianMs;
        if (kindOf(wl) === 'generate') {
          row.tokensPerSec = (wl.newTokens * 1000) / row.medianMs;
          row.decodeTokensPerSec = ((wl.newTokens - 1) * 1000) / row.decodeMs;
        }
      }
      const units = row.sentencesPerSec ? `, ${row.sentencesPerSec.toFixed(1)} sentences/s`
        : row.tokensPerSec ? `, decode ${row.decodeTokensPerSec.toFixed(1)} tokens/s, first token ${row.ttftMs.toFixed(0)} ms, prefill ${row.prefillMs?.toFixed(0)} ms` : '';
      const speed = timed ? `; median ${row.medianMs.toFixed(3)} ms (${row.reps} reps), ${row.gflops.toFixed(2)} GFLOP/s${units}` : '';
      console.log(`  ${wl.name.padEnd(5)} ${row.agrees === false ? `${agree} (excluded from ratios)` : agree}; first call ${row.firstCallMs.toFixed(2)} ms${speed}`);
    } catch (err) {
      row.error = String(err.message);
      console.log(`  ${wl.name.padEnd(5)} ERROR ${row.error.split('\n')[0]}`);
    }
    if (timed) res.rows.push(row);
  }
}

/** bench/layers/browser.mjs on the selected layer workloads (its progress goes straight to stderr). */
function runBrowser(quick, workloads) {
  const layer = workloads.filter((w) => kindOf(w) === 'layer').map((w) => w.name);
  const nodeOnly = workloads.filter((w) => kindOf(w) !== 'layer').map((w) => w.name);
  if (!layer.length) return { error: `no layer workload selected (${nodeOnly.join(', ')} run in Node only)` };
  console.log(`browser: running bench/layers/browser.mjs on ${layer.join(', ')}${nodeOnly.length ? ` (${nodeOnly.join(', ')}: Node only)` : ''} ...`);
  const r = spawnSync(process.execPath, [`${ROOT}bench/layers/browser.mjs`, '--json', '--workloads', layer.join(','), ...(quick ? ['--quick'] : [])],
    { encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'inherit'] });
  const last = (r.stdout ?? '').trim().split('\n').pop();
  try { return JSON.parse(last); } catch { return { error: `bench/layers/browser.mjs printed no result (${r.error?.message ?? `exit ${r.status}`})` }; }
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
  // generate-llama (Chromium, wllama) and generate-families are their own programs; the rest runs after them.
  for (const [kind, program] of [['generate-llama', 'bench/llama/browser.mjs'], ['generate-families', 'bench/llama/families.mjs']]) {
    if (!opt.workloads.some((w) => kindOf(w) === kind)) continue;
    const r = spawnSync(process.execPath, [`${ROOT}${program}`, ...(opt.quick ? ['--quick'] : [])], { stdio: 'inherit' });
    if (r.status !== 0) process.exitCode = 1;
    opt.workloads = opt.workloads.filter((w) => kindOf(w) !== kind);
  }
  if (!opt.workloads.length) return;
  const policy = opt.quick ? POLICY.quick : POLICY.full;
  const res = {
    meta: { date: new Date().toISOString(), node: process.version, cpu: os.cpus()[0]?.model, cores: os.cpus().length, loadavg: os.loadavg(), quick: opt.quick, policy, tolerance: TOLERANCE, workloads: opt.workloads },
    engines: [], rows: [], failures: [], skippedWorkloads: [],
  };

  // Workload data. The encoder's and generate's files come from PyTorch exports (made once,
  // cached in build/); without PyTorch those workloads are skipped, loudly.
  const data = new Map();
  const expected = new Map();
  for (const w of opt.workloads) {
    const prepare = PREPARE[kindOf(w)];
    if (!prepare) { data.set(w.name, makeData(w)); continue; }
    const got = prepare(w);
    if (got.skip) {
      console.log(`${w.name}: SKIPPED: ${got.skip}`);
      res.skippedWorkloads.push({ workload: w.name, reason: got.skip });
      continue;
    }
    data.set(w.name, got.data);
    expected.set(w.name, got.expected);
  }
  const workloads = opt.workloads.filter((w) => data.has(w.name));
  if (!workloads.length) { console.error('bench: no workload left to run'); process.exit(1); }
  res.meta.workloads = workloads;
  // Engines that run none of the selected workloads are not started at all.
  const engines = opt.engines.filter((e) => workloads.some((w) => runsWorkload(e, w)));
  console.log(`attention-wasm bench: ${workloads.map((w) => w.name).join(', ')} on ${engines.map((e) => e.id).join(', ')}${opt.quick ? ' (quick)' : ''}`);

  res.peak = await measurePeak({ quick: opt.quick });
  console.log(res.peak.skip ? `peak: skipped (${res.peak.skip})` : `peak: WASM f32x4 mul+add ${res.peak.gflops.toFixed(1)} GFLOP/s (one thread)`);
  // Decoding is bound by memory: its GB/s of weights are quoted against this (generate only).
  const generating = workloads.some((w) => kindOf(w) === 'generate');
  if (generating) {
    res.bandwidth = await measureBandwidth({ quick: opt.quick });
    console.log(res.bandwidth.skip ? `bandwidth: skipped (${res.bandwidth.skip})` : `bandwidth: memory.copy ${res.bandwidth.copyGBs.toFixed(1)} GB/s, v128.load stream ${res.bandwidth.readGBs.toFixed(1)} GB/s (one thread), ${res.bandwidth.read2GBs?.toFixed(1) ?? '-'} GB/s (two)`);
  }
  res.sizes = wasmSizes();

  const refs = new Map();
  // The reference runs first; when it is not among the selected engines it still runs, untimed,
  // unless every workload is checked against PyTorch alone (generate).
  const ref = ENGINES.find((e) => e.id === REFERENCE_ID);
  const needRef = engines.includes(ref) || workloads.some((w) => kindOf(w) !== 'generate');
  const ordered = [...(needRef ? [ref] : []), ...engines.filter((e) => e.id !== REFERENCE_ID)];
  for (const e of ordered) {
    await runEngine(e, { workloads, data, expected, refs, policy, timed: engines.includes(e), res });
  }

  if (!res.peak.skip) res.peak = mergePeaks(res.peak, await measurePeak({ quick: opt.quick }));
  if (res.bandwidth && !res.bandwidth.skip) res.bandwidth = mergeBandwidths(res.bandwidth, await measureBandwidth({ quick: opt.quick }));
  if (opt.browser) res.browser = runBrowser(opt.quick, workloads);
  res.ratios = computeRatios(res.rows, res.engines);
  res.targets = checkTargets(res.rows, res.ratios, res.peak);
  for (const wl of workloads.filter((w) => kindOf(w) === 'generate')) res.targets.push(...generateTargets(res, wl));
  res.speedups = threadSpeedups(res.rows, res.engines);

  console.log(formatReport(res));
  const outFile = path.resolve(opt.out);
  mkdirSync(path.dirname(outFile), { recursive: true });
  writeFileSync(outFile, JSON.stringify(res, null, 2));
  console.log(`\nwritten: ${path.relative(process.cwd(), outFile)}`);
  if (res.failures.length) {
    console.error(`\nbench FAILED: outputs differ, so those engines were not timed:\n${res.failures.map((f) => `  ${f}`).join('\n')}`);
    process.exitCode = 1;
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
