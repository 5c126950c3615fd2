#!/usr/bin/env node
// `node bench/llama/browser.mjs [--quick] [--json] [--model smollm2|tiny] [--types F32,Q8_0] [--threads 1,2] [--out FILE]`
// (also `npm run bench -- --workloads generate-llama`): Llama decoding in headless Chromium, this
// library against llama.cpp's WebAssembly build (wllama), on one random SmolLM2-135M-shaped model:
// the same 64 prompt ids, 64 greedy new tokens, no prompt cache, at F32/F16/Q8_0/Q4_0 and as
// llama-quantize's Q4_K_M/Q5_K_M/Q6_K mixes (both sides load the same GGUF file; ours also, at
// Q8_0/Q4_0, from a safetensors checkpoint of the same values: 'ours (safetensors)', q8/q4) and 1
// and 2 threads; onnxruntime-web (issue 23's peer; --no-ort: not) at F32 and,
// beside Q8_0, its 8-bit graph (transformers.js's q8: int8 weights per tensor, dynamic activations).
// Greedy tokens are checked against PyTorch's (pytorch.mjs): an F32 engine, or ours at F16,
// whose tokens differ is not timed. Each run gets a fresh page (its renderer's memory is its own).
// GGUF files are written once into build/bench-llama/ (about 1.3 GB for the seven types; the K mixes'
// blocks by the package's encodeWeights, loaded from dist/ in this process), PyTorch's
// tokens once per config into build/bench-llama/pytorch-<model>/ (about 40 s).
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

import { writeGguf } from '../../tools/gguf/gguf_writer.mjs';
import { K_MIXES, llamaGgufTensors, llamaMetadata } from './gguf.mjs';
import { pytorchTokens } from './pytorch.mjs';
import { llamaReport, sameTokens, tokenAgreement } from '../report/llama.mjs';
import { benchPrompt, SMOLLM2_135M, TINY_LLAMA } from './weights.mjs';
import { buildProbe } from '../peak/peak.mjs';
import { rendererMemory } from '../common/renderer_memory.mjs';

const require = createRequire(import.meta.url);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const { serve } = require('../../scripts/static_server.cjs');
const { chromium } = require('playwright-core');

// --expose-gc: the page collects the load's garbage before the generations' memory is measured.
export const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--js-flags=--expose-gc'];
const MODELS = { smollm2: SMOLLM2_135M, tiny: TINY_LLAMA };
const TYPES = ['F32', 'F16', 'Q8_0', 'Q4_0', ...K_MIXES];
// Bump when the writer or the weights change: files made by another version are rewritten.
const GGUF_VERSION = 2;

/** The package from dist/ (its encodeWeights writes the K mixes' blocks), loaded once when needed. */
let codec = null;
async function packageCodec() {
  if (!codec) codec = await (await import(new URL('../../dist/index.node.js', import.meta.url).href)).loadAttention({ simd: true, threads: 1 });
  return codec;
}

/** build/bench-llama/<model>-<type>.gguf, (re)written when missing or made by another version. */
async function ggufFile(model, type, log) {
  const dir = path.join(ROOT, 'build', 'bench-llama');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${model}-${type}.gguf`), stamp = `${file}.version`;
  // The K mixes' blocks are the package's encoders' (a valid encoding; llama.cpp reads any).
  const want = JSON.stringify({ GGUF_VERSION, config: MODELS[model], ...(K_MIXES.includes(type) ? { encoder: 'attention-wasm encodeWeights' } : {}) });
  if (existsSync(file) && existsSync(stamp) && readFileSync(stamp, 'utf8') === want) return file;
  log(`writing ${path.relative(ROOT, file)} ...`);
  const t = Date.now();
  const enc = K_MIXES.includes(type) ? await packageCodec() : null;
  writeGguf(`${file}.part`, llamaMetadata(MODELS[model], type), llamaGgufTensors(MODELS[model], type, undefined, enc));
  renameSync(`${file}.part`, file);
  writeFileSync(stamp, want);
  log(`  ${(Date.now() - t) / 1000} s`);
  return file;
}

/** A copy of dist/ for this run (the machine is shared: dist/ may be rebuilt while the bench runs). */
export function snapshotDist() {
  const to = path.join(ROOT, 'build', 'bench-llama', `dist-${process.pid}`);
  rmSync(to, { recursive: true, force: true });
  cpSync(path.join(ROOT, 'dist'), to, { recursive: true });
  return `/${path.relative(ROOT, to)}/index.js`;
}

/** A fresh page of bench/page/llama/, ready to run. */
async function openPage(context, site, errors) {
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${site.origin}/bench/page/llama/index.html?dist=${encodeURIComponent(site.dist)}`);
  await page.waitForFunction(() => typeof window.loadEngine === 'function', null, { timeout: 60000 });
  return page;
}

/**
 * fn(page, phase) in a fresh page, with the renderers' peak RSS while it ran. fn calls
 * phase() between loading and generating: the peak so far is the load's, and the one after it
 * (a garbage collection first, so the load's garbage is not counted) the generation's.
 */
async function inPage(context, site, memory, fn) {
  const errors = [];
  let page;
  try {
    page = await openPage(context, site, errors);
  } catch (e) {
    return { error: `page did not start: ${String(e.message ?? e).split('\n')[0]}; ${errors.join('; ')}`, pageErrors: errors };
  }
  memory.reset();
  let loadPeak = null;
  const phase = async () => {
    loadPeak = memory.peak();
    await page.evaluate(() => globalThis.gc?.());
    memory.reset();
  };
  try {
    const result = await fn(page, phase);
    const peak = memory.peak();
    return { ...result, rendererPeakBytes: Math.max(peak, loadPeak ?? 0), rendererRunPeakBytes: loadPeak == null ? null : peak, pageErrors: errors };
  } catch (e) {
    return { error: String(e.message ?? e).split('\n')[0], pageErrors: errors };
  } finally {
    await page.close();
    await new Promise((r) => setTimeout(r, 500));  // let the renderer exit before the next page
  }
}

/**
 * One engine's load and generations in a fresh page. With args.expect the page first checks a
 * whole generation against those ids and does not time an engine that differs (an error here).
 */
async function runEngine(context, site, memory, engine, args) {
  const r = await inPage(context, site, memory, async (page, phase) => {
    const { loadMs } = await page.evaluate(([e, a]) => window.loadEngine(e, a), [engine, args]);
    await phase();
    return { loadMs, ...(await page.evaluate((a) => window.generateRuns(a), args)) };
  });
  if (!r.refused) return r;
  const { step, got, expected } = r.refused;
  return { ...r, error: `greedy tokens differ from PyTorch's at step ${step} (${got} vs ${expected}): not timed` };
}

/**
 * The engines run at a GGUF type: llama.cpp and ours on the file, ours from safetensors at Q8_0 and
 * Q4_0 (issue 33: the GGUF load no slower than that), at 1 thread ours' relaxed-SIMD build on the
 * file (issue 35; it has no threaded build), and onnxruntime-web at the same precision.
 */
function enginesAt(type, ort, threads) {
  const peer = ort ? { F32: ['onnxruntime-web'], Q8_0: ['onnxruntime-web 8-bit'] }[type] ?? [] : [];
  return ['llama.cpp', 'ours', ...(type === 'Q8_0' || type === 'Q4_0' ? ['ours (safetensors)'] : []), ...(threads === 1 ? ['ours (relaxed)'] : []), ...peer];
}

/** PyTorch's ids an engine must give before it is timed: F32 engines the float64 model's, ours at F16 its f16 weights'. */
function expectedIds(pytorch, type, engine) {
  if (!pytorch || pytorch.skip) return undefined;
  if (type === 'F32') return pytorch.f64.ids;
  if (type === 'F16' && (engine === 'ours' || engine === 'ours (relaxed)')) return pytorch.f16.ids;
  return undefined;
}

/** Which PyTorch variant an engine's tokens are compared with (the report's "tokens vs PyTorch"). */
const referenceOf = (type, engine) => (engine === 'onnxruntime-web 8-bit' ? 'int8' : type === 'F16' ? 'f16' : 'f64');

function options() {
  const { values } = parseArgs({ options: {
    quick: { type: 'boolean', default: false }, json: { type: 'boolean', default: false },
    model: { type: 'string', default: 'smollm2' }, types: { type: 'string' }, threads: { type: 'string' },
    'new-tokens': { type: 'string', default: '64' }, 'no-ort': { type: 'boolean', default: false }, engines: { type: 'string' }, 'llama-types': { type: 'string' }, out: { type: 'string', default: path.join(ROOT, 'bench', 'results', 'llama_browser.json') },
  } });
  const list = (s, all) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : all);
  const types = list(values.types, TYPES);
  for (const t of types) if (!TYPES.includes(t)) throw new Error(`unknown type ${t} (known: ${TYPES.join(', ')})`);
  if (!MODELS[values.model]) throw new Error(`unknown model ${values.model} (known: ${Object.keys(MODELS).join(', ')})`);
  const engines = values.engines ? list(values.engines, []) : null;
  const known = ['llama.cpp', 'ours', 'ours (safetensors)', 'ours (relaxed)', 'onnxruntime-web', 'onnxruntime-web 8-bit'];
  for (const e of engines ?? []) if (!known.includes(e)) throw new Error(`unknown engine ${e} (known: ${known.join(', ')})`);
  if (engines && !engines.includes('ours')) throw new Error('--engines must include ours');
  const llamaTypes = values['llama-types'] ? list(values['llama-types'], []) : null;
  return { ...values, types, engines, llamaTypes, threads: list(values.threads, ['1', '2']).map(Number), newTokens: Number(values['new-tokens']), reps: values.quick ? 1 : 3 };
}

/** Everything the bench measures, as one object (the report and the tests read it). */
export async function runLlamaBench(opt, log = (s) => process.stderr.write(`${s}\n`)) {
  const config = MODELS[opt.model];
  const files = {};
  for (const t of opt.types) files[t] = await ggufFile(opt.model, t, log);
  const bwSkip = buildProbe(`${ROOT}bench/peak/bandwidth.cpp`, `${ROOT}build/bench-peak/bandwidth.wasm`, ['-mbulk-memory', '-sALLOW_MEMORY_GROWTH=1', '-sMAXIMUM_MEMORY=1GB']);
  // The same 64 prompt ids on every side.
  const promptIds = benchPrompt(config);
  const res = {
    meta: { date: new Date().toISOString(), cores: os.cpus().length, cpu: os.cpus()[0]?.model, loadavg: os.loadavg(), model: opt.model, config, quick: opt.quick, reps: opt.reps, newTokens: opt.newTokens, wllama: require('@wllama/wllama/package.json').version },
    promptIds, runs: [], agreement: [], ortAgreement: [], pytorchAgreement: [], problems: [],
  };
  const pytorch = pytorchTokens(opt.model, config, promptIds, opt.newTokens, log);
  // The ids, runner-ups and margins only (the logits stay in build/).
  res.pytorch = pytorch.skip ? { skip: pytorch.skip }
    : Object.fromEntries(Object.entries(pytorch).map(([v, { ids, second, margin }]) => [v, { ids, second, margin }]));
  if (pytorch.skip) log(`PyTorch check skipped: ${pytorch.skip}`);
  const { server, url: origin } = await serve(ROOT);
  const site = { origin, dist: snapshotDist() };
  const removeSnapshot = () => rmSync(path.join(ROOT, path.dirname(site.dist)), { recursive: true, force: true });
  const profile = mkdtempSync(path.join(os.tmpdir(), 'attn-llama-bench-'));
  const memory = rendererMemory();
  let context = null;
  try {
    context = await chromium.launchPersistentContext(profile, { executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, args: FLAGS });
    // What a renderer holds before any model: the floor under every run's peak.
    res.idleRendererBytes = (await inPage(context, site, memory, () => new Promise((r) => setTimeout(() => r({}), 1000)))).rendererPeakBytes;
    const bandwidth = async () => {
      if (bwSkip) return { skip: bwSkip };
      const b = await inPage(context, site, memory, (page) => page.evaluate(() => window.bandwidth()));
      return b.error || b.skip ? { skip: b.error ?? b.skip } : { copyGBs: b.copyGBs, readGBs: b.readGBs, read2GBs: b.read2GBs };
    };
    const info = await inPage(context, site, memory, (page) => page.evaluate(() => window.pageInfo()));
    info.bandwidth = await bandwidth();
    Object.assign(res, { userAgent: info.userAgent, crossOriginIsolated: info.crossOriginIsolated, bandwidth: info.bandwidth });
    log(`browser: ${info.userAgent?.match(/HeadlessChrome\/[\d.]+/)?.[0]}, crossOriginIsolated ${info.crossOriginIsolated}; bandwidth ${JSON.stringify(info.bandwidth)}`);
    if (!info.crossOriginIsolated) res.problems.push('the page is not crossOriginIsolated (COOP/COEP headers missing?)');
    for (const threads of opt.threads) {
      for (const type of opt.types) {
        const args = { config, type, threads, promptIds, newTokens: opt.newTokens, reps: opt.reps, file: `/${path.relative(ROOT, files[type])}` };
        const pair = {};
        const wanted = (e) => (!opt.engines || opt.engines.includes(e)) && (e !== 'llama.cpp' || !opt.llamaTypes || opt.llamaTypes.includes(type));
        for (const engine of enginesAt(type, !opt['no-ort'], threads).filter(wanted)) {
          const r = await runEngine(context, site, memory, engine, { ...args, expect: expectedIds(pytorch, type, engine) });
          pair[engine] = { ...r, engine, type, threads };
          res.runs.push(pair[engine]);
          log(r.error ? `${type} ${threads}t ${engine}: ERROR ${r.error}`
            : `${type} ${threads}t ${engine}: prefill ${r.prefillMs.toFixed(0)} ms, decode ${r.decodeTokPerS.toFixed(1)} tok/s, renderer peak ${(r.rendererPeakBytes / 2 ** 20).toFixed(0)} MiB`);
          const tokens = r.runs?.[0]?.tokens ?? r.refused?.tokens;
          const vs = referenceOf(type, engine);
          if (tokens && !pytorch.skip) res.pytorchAgreement.push({ type, threads, engine, vs, ...sameTokens(tokens, pytorch[vs].ids), floatEqual: sameTokens(tokens, pytorch.f64.ids).equal });
        }
        if (pair.ours.error || !pair['llama.cpp'] || pair['llama.cpp'].error) continue;
        const a = tokenAgreement(pair['llama.cpp'], pair.ours);
        if (a.firstDiff != null) {
          a.ours = (await inPage(context, site, memory, (page) => page.evaluate((x) => window.ourLogitsAt(x), { ...args, tokens: pair.ours.runs[0].tokens, k: a.firstDiff, llamaToken: a.llamaTokens[a.firstDiff] })));
        }
        res.agreement.push({ type, threads, ...a });
        for (const engine of ['onnxruntime-web', 'onnxruntime-web 8-bit']) {
          const ort = pair[engine];
          if (!ort || ort.error) continue;
          const o = { type, threads, engine, ...sameTokens(ort.runs[0].tokens, pair.ours.runs[0].tokens), ortTokens: ort.runs[0].tokens, ourTokens: pair.ours.runs[0].tokens, repeatable: ort.runs.every((x) => sameTokens(x.tokens, ort.runs[0].tokens).firstDiff == null) };
          // Where the 8-bit peer parts from our q8: our logits there (and the same weights as float32).
          if (o.firstDiff != null) o.ours = await inPage(context, site, memory, (page) => page.evaluate((x) => window.ourLogitsAt(x), { ...args, tokens: pair.ours.runs[0].tokens, k: o.firstDiff, llamaToken: o.ortTokens[o.firstDiff] }));
          res.ortAgreement.push(o);
        }
        log(`${type} ${threads}t tokens: ${a.firstDiff == null ? `all ${a.n} equal` : `first differ at step ${a.firstDiff} (${a.equal} of ${a.n} equal)`}`);
      }
    }
    // Bandwidth again at the end; the better of the two (other work on the machine only lowers it).
    const end = await bandwidth();
    if (!end.skip && !res.bandwidth.skip) {
      const top = (k) => Math.max(end[k] ?? 0, res.bandwidth[k] ?? 0) || null;
      res.bandwidth = { copyGBs: top('copyGBs'), readGBs: top('readGBs'), read2GBs: top('read2GBs'), runs: [res.bandwidth, end] };
    }
  } finally {
    memory.stop();
    if (context) await context.close();
    server.close();
    removeSnapshot();
    rmSync(profile, { recursive: true, force: true });
  }
  res.meta.loadavgEnd = os.loadavg();
  return res;
}

async function main() {
  const opt = options();
  const log = opt.json ? (s) => process.stderr.write(`${s}\n`) : (s) => console.log(s);
  const res = await runLlamaBench(opt, log);
  const report = llamaReport(res);
  res.problems.push(...report.problems);
  if (opt.json) console.log(JSON.stringify(res));
  else console.log(`\n${report.lines.join('\n')}`);
  const out = path.resolve(opt.out);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(res, null, 2));
  if (!opt.json) console.log(`\nwritten: ${path.relative(process.cwd(), out)}`);
  if (res.problems.length) process.exitCode = 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((e) => {
    if (process.argv.includes('--json')) console.log(JSON.stringify({ error: String(e.message ?? e).split('\n')[0] }));
    else console.error(`bench/llama/browser: ${e.stack ?? e}`);
    process.exit(1);
  });
}
