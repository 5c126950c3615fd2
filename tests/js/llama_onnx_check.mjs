// Child of llama_onnx.test.cjs (Jest runs CommonJS; bench/ and onnxruntime-web are ES modules).
// On the tiny random Llama: onnxruntime-web (in Node, one thread) running bench/llama/onnx.mjs's
// float32 and int8 graphs, and this library at f32 on the same weights, against PyTorch's greedy
// tokens and prompt logits (tests/fixtures/llama_onnx/pytorch_tiny.json, from bench/llama/reference.py:
// float64, float32, and onnxruntime's dynamic int8 quantization simulated). Writes one JSON object
// of facts to OUT; the test asserts on them.
//   node tests/js/llama_onnx_check.mjs OUT
import { readFileSync, writeFileSync } from 'node:fs';

import * as ort from 'onnxruntime-web';

import { llamaOnnxModel, ortGenerate } from '../../bench/llama/onnx.mjs';
import { idsOnlyTokenizer, safetensorsF32, TINY_LLAMA } from '../../bench/llama/weights.mjs';
import { loadAttention } from '../../dist/index.node.js';
import { tinyTensors, tinyWeightsDigest } from './llama_onnx_weights.mjs';

const C = TINY_LLAMA;
const ref = JSON.parse(readFileSync(new URL('../fixtures/llama_onnx/pytorch_tiny.json', import.meta.url), 'utf8'));
const { prompt, newTokens: N } = ref;
const maxAbs = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
const lead = (a, b) => { let i = 0; while (i < a.length && a[i] === b[i]) i++; return i; };

/** onnxruntime-web on one graph: its prompt logits and greedy tokens. */
async function runOrt(weights) {
  const session = await ort.InferenceSession.create(llamaOnnxModel(C, { weights }), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const { tokens, promptLogits } = await ortGenerate(ort, session, C, prompt, N);
  await session.release();
  return { logits: promptLogits, tokens };
}

/** This library at f32 on the same weights: its prompt logits and greedy tokens. */
async function runOurs() {
  const mod = await loadAttention({ simd: true, threads: 1 });
  const model = await mod.loadModel({ config: C, weights: safetensorsF32(tinyTensors()), tokenizer: idsOnlyTokenizer() });
  const out = { logits: model.run(prompt, { logitsToKeep: 1 }).logits, tokens: (await model.generate(prompt, { maxNewTokens: N, temperature: 0 })).tokens };
  model.dispose();
  return out;
}

ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';
const float = await runOrt('float32'), int8 = await runOrt('int8'), ours = await runOurs();
const part = lead(int8.tokens, ref.int8.ids);
writeFileSync(process.argv[2], JSON.stringify({
  fixture: { sameConfig: JSON.stringify(ref.config) === JSON.stringify(C), sameWeights: ref.weights_sha256 === tinyWeightsDigest() },
  pytorch: { distinct: new Set(ref.f64.ids).size, f32Equal: lead(ref.f32.ids, ref.f64.ids), int8VsFloat: maxAbs(ref.int8.logits0, ref.f64.logits0) },
  ortFloat: { equal: lead(float.tokens, ref.f64.ids), logits: maxAbs(float.logits, ref.f64.logits0) },
  ortInt8: {
    equal: part, logits: maxAbs(int8.logits, ref.int8.logits0), logitsVsFloat: maxAbs(int8.logits, ref.f64.logits0),
    parts: part < N ? { got: int8.tokens[part], runnerUp: ref.int8.second[part], margin: ref.int8.margin[part] } : null,
  },
  ours: { equal: lead(ours.tokens, ref.f64.ids), logits: maxAbs(ours.logits, ref.f64.logits0) },
}));
