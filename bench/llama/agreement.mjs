#!/usr/bin/env node
// `node bench/llama/agreement.mjs [--archs llama,qwen3,gemma3,smollm3,phi3] [--saved q8|q4|f16] [--out FILE]`: llama.cpp as a
// second implementation of every architecture both it and this package load from GGUF. Each
// family's tiny random model (weights.mjs TINY_FAMILIES) is written as GGUF F32 (gguf.mjs), then in
// one headless Chromium page (bench/page/llama/, crossOriginIsolated) llama.cpp's WebAssembly build
// (wllama) and ours, both on that file at one thread, generate 64 greedy tokens after the same 64
// prompt ids. Where the tokens first differ, our logits there (top-2 margin, range) say whether
// it is a near-tie. Prints one JSON object (and writes it to --out); timings are not its business.
// With --saved DTYPE, both run instead the file this package's model.save() writes after loading
// the F32 file at that dtype (Q8_0 blocks for q8): llama.cpp reading what this package saves.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

import { writeGguf } from '../../tools/gguf/gguf_writer.mjs';
import { FLAGS, snapshotDist } from './browser.mjs';
import { llamaGgufTensors, llamaMetadata } from './gguf.mjs';
import { tokenAgreement } from '../report/llama.mjs';
import { benchPrompt, TINY_FAMILIES } from './weights.mjs';

const require = createRequire(import.meta.url);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const { serve } = require('../../scripts/static_server.cjs');
const { chromium } = require('playwright-core');

/** The tiny model of each architecture written as GGUF F32 into `dir` (served: under the root). */
function writeFiles(archs, dir) {
  return Object.fromEntries(archs.map((arch) => {
    const config = TINY_FAMILIES[arch], file = path.join(dir, `${arch}-F32.gguf`);
    writeGguf(file, llamaMetadata(config, 'F32'), llamaGgufTensors(config, 'F32'));
    return [arch, `/${path.relative(ROOT, file)}`];
  }));
}

/** Each file loaded by this package at `dtype` and written back by model.save() beside it. */
async function savedFiles(files, dtype) {
  const { loadAttention } = await import('../../dist/index.node.js');
  const attn = await loadAttention({ threads: 1 });
  const out = {};
  for (const [arch, file] of Object.entries(files)) {
    const model = await attn.loadModel(path.join(ROOT, file), { dtype });
    const saved = file.replace(/-F32\.gguf$/, `-saved-${dtype}.gguf`);
    writeFileSync(path.join(ROOT, saved), model.save());
    out[arch] = { file: saved, type: model.dtype };
    model.dispose();
  }
  return out;
}

/** One engine's load and one 64-token generation (after a 4-token warm-up) in the page. */
async function generate(page, engine, args) {
  try {
    await page.evaluate(([e, a]) => window.loadEngine(e, a), [engine, args]);
    return { engine, ...(await page.evaluate((a) => window.generateRuns(a), args)) };
  } catch (e) {
    return { engine, error: String(e.message ?? e).split('\n')[0] };
  }
}

/** Both engines on one architecture's file, their agreement, and our logits where they part. */
async function compare(page, arch, file, newTokens, type = 'F32') {
  const config = TINY_FAMILIES[arch];
  const args = { config, type, threads: 1, promptIds: benchPrompt(config), newTokens, reps: 1, file, kvCache: 'f32' };
  const llama = await generate(page, 'llama.cpp', args);
  const ours = await generate(page, 'ours', args);
  const out = { arch, model_type: config.model_type, llama, ours };
  if (llama.error || ours.error) return out;
  out.agreement = tokenAgreement(llama, ours);
  const k = out.agreement.firstDiff;
  // Up to the first difference both sides saw the same text: their top-2 margins there should match.
  const same = out.agreement.ourTokens.slice(0, k ?? undefined);
  const margins = await page.evaluate((x) => window.ourMargins(x), { ...args, tokens: same });
  out.agreement.margins = margins.map((m, i) => [m.margin, llama.runs[0].margins[i], m.range]);
  out.agreement.marginGap = Math.max(0, ...margins.map((m, i) => Math.abs(m.margin - llama.runs[0].margins[i]) / m.range));
  if (k != null) out.agreement.ours = await page.evaluate((x) => window.ourLogitsAt(x), { ...args, tokens: ours.runs[0].tokens, k, llamaToken: out.agreement.llamaTokens[k] });
  return out;
}

export async function runAgreement({ archs = Object.keys(TINY_FAMILIES), newTokens = 64, saved = null, log = (s) => process.stderr.write(`${s}\n`) } = {}) {
  for (const a of archs) if (!TINY_FAMILIES[a]) throw new Error(`unknown architecture ${a} (known: ${Object.keys(TINY_FAMILIES).join(', ')})`);
  mkdirSync(path.join(ROOT, 'build'), { recursive: true });
  const dir = mkdtempSync(path.join(ROOT, 'build', 'agreement-'));
  const profile = mkdtempSync(path.join(os.tmpdir(), 'attn-agreement-'));
  const res = { wllama: require('@wllama/wllama/package.json').version, newTokens, saved, results: [], pageErrors: [] };
  const { server, url: origin } = await serve(ROOT);
  let context = null;
  try {
    const written = writeFiles(archs, dir);
    const files = saved ? await savedFiles(written, saved)
      : Object.fromEntries(Object.entries(written).map(([arch, file]) => [arch, { file, type: 'F32' }]));
    const dist = snapshotDist();
    context = await chromium.launchPersistentContext(profile, { executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, args: FLAGS });
    const page = await context.newPage();
    page.on('pageerror', (e) => res.pageErrors.push(String(e)));
    await page.goto(`${origin}/bench/page/llama/index.html?dist=${encodeURIComponent(dist)}`);
    await page.waitForFunction(() => typeof window.loadEngine === 'function', null, { timeout: 60000 });
    res.crossOriginIsolated = (await page.evaluate(() => window.pageInfo())).crossOriginIsolated;
    for (const arch of archs) {
      const r = await compare(page, arch, files[arch].file, newTokens, files[arch].type);
      res.results.push(r);
      const a = r.agreement;
      log(`${arch}: ${r.llama.error || r.ours.error ? `ERROR ${r.llama.error ?? r.ours.error}` : a.firstDiff == null ? `all ${a.n} tokens equal` : `first differ at step ${a.firstDiff}`}`);
    }
  } finally {
    if (context) await context.close();
    server.close();
    rmSync(path.join(ROOT, 'build', 'bench-llama', `dist-${process.pid}`), { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
  }
  return res;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const { values } = parseArgs({ options: { archs: { type: 'string' }, out: { type: 'string' }, saved: { type: 'string' } } });
  runAgreement({ archs: values.archs?.split(',').map((s) => s.trim()).filter(Boolean), saved: values.saved ?? null }).then((res) => {
    const text = JSON.stringify(res);
    if (values.out) writeFileSync(values.out, text);
    console.log(text);
  }).catch((e) => {
    console.error(`bench/llama/agreement: ${e.stack ?? e}`);
    process.exit(1);
  });
}
