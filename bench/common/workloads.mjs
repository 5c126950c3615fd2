// The benchmark's workloads and their deterministic data. Browser-safe.
// d_k = d_v = D / H for all of them.
//  - kind 'layer' (the default, issue 5): one multi-head attention layer, weights and input below.
//  - kind 'encoder': a whole random-weight BERT (MiniLM-L6 shape) embedding `batch` sentences of
//    `seqLen` tokens; its files come from bench/encoder/workload.mjs (PyTorch export), not from makeData.
//    Its outputs (L2-normalized embeddings) must agree within absTolerance (max |diff|), and
//    `strict` makes a disagreement fail the bench instead of only leaving the engine out.
//  - kind 'generate' (issue 9): a random-weight GPT-2 small (12 layers, 768, 12 heads, vocabulary
//    50257) continuing a `promptLen`-token prompt by `newTokens` greedy tokens through its KV
//    cache; files from bench/generate/workload.mjs. Its output is the new token ids, which must equal
//    PyTorch's for at least the first `agreeTokens` of them.

export const WORKLOADS = [
  { name: 'tiny', batch: 1, seqLen: 8, dModel: 64, numHeads: 4, causal: false },
  { name: 'bert', batch: 1, seqLen: 128, dModel: 768, numHeads: 12, causal: false },
  { name: 'gpt2', batch: 1, seqLen: 512, dModel: 768, numHeads: 12, causal: true },
  { name: 'long', batch: 1, seqLen: 2048, dModel: 256, numHeads: 4, causal: true },
  { name: 'batch', batch: 8, seqLen: 64, dModel: 256, numHeads: 8, causal: false },
  { name: 'encoder', kind: 'encoder', batch: 32, seqLen: 128, dModel: 384, numHeads: 12, causal: false, layers: 6, ffn: 1536,
    vocab: 1000, positions: 512, seed: 20261122, opset: 17, absTolerance: 1e-4, strict: true },
  { name: 'generate', kind: 'generate', batch: 1, dModel: 768, numHeads: 12, layers: 12, vocab: 50257, positions: 1024,
    promptLen: 64, newTokens: 64, seed: 20261123, opset: 17, agreeTokens: 64, strict: true },
  // Issue 28: a SmolLM2-135M-shaped Llama against llama.cpp (wllama) in headless Chromium, run by
  // bench/llama/browser.mjs on its own (about 15 min); only when named.
  { name: 'generate-llama', kind: 'generate-llama', optIn: true },
  // Issue 34: Qwen3-, Gemma-3- and SmolLM3-shaped models of SmolLM2-135M's size against a Llama of
  // that size, decode tokens/s at f32 and q8 in Node, run by bench/llama/families.mjs; only when named.
  { name: 'generate-families', kind: 'generate-families', optIn: true },
];

export const kindOf = (w) => w.kind ?? 'layer';

// Relative agreement tolerance for layer outputs (max |diff| / max |reference|). float32 results
// of different summation orders differ by ~1e-6 relative; 1e-3 leaves room for D=768 dot
// products while still catching a wrong mask, scale or layout (those are O(1)).
export const REL_TOLERANCE = 1e-3;

/**
 * Nominal FLOPs of one forward: four D x D projections (2·B·S·D² each) plus QKᵀ and PV
 * (2·B·H·S²·d_k each). Causal workloads count the full square on purpose: the nominal number
 * is the same for every engine, so skipping masked work shows up as higher GFLOP/s.
 * An encoder adds the FFN's two D x F matmuls (2·B·S·D·F each) per layer; embeddings,
 * LayerNorm, GELU and pooling are not counted.
 */
export function nominalFlops(w) {
  if (kindOf(w) === 'generate') return generateFlops(w);
  const dk = w.dModel / w.numHeads;
  const attention = 2 * w.batch * w.seqLen * w.dModel * w.dModel * 4 + 4 * w.batch * w.numHeads * w.seqLen * w.seqLen * dk;
  if (kindOf(w) !== 'encoder') return attention;
  return w.layers * (attention + 4 * w.batch * w.seqLen * w.dModel * w.ffn);
}

/**
 * One generate run: the prompt's positions and every new token but the last go through all
 * layers (QKV, output projection and the 4x FFN: 24·D² per position and layer; QKᵀ and PV: 4·D
 * per position and key it sees, the prompt counted as a full square), and each new token costs
 * one LM head row block (2·D·V). Embeddings, LayerNorm, GELU and argmax are not counted.
 */
function generateFlops(w) {
  const D = w.dModel, S = w.promptLen, steps = w.newTokens - 1;
  const positions = S + steps;
  const keysSeen = S * S + steps * S + (steps * (steps + 1)) / 2;
  return w.layers * (24 * D * D * positions + 4 * D * keysSeen) + 2 * D * w.vocab * w.newTokens;
}

export function selectWorkloads(names) {
  if (!names) return WORKLOADS.filter((w) => !w.optIn);
  return names.map((n) => {
    const w = WORKLOADS.find((x) => x.name === n);
    if (!w) throw new Error(`unknown workload "${n}" (known: ${WORKLOADS.map((x) => x.name).join(', ')})`);
    return w;
  });
}

// mulberry32: tiny, fast, and identical everywhere JS runs, so every engine and the browser
// page see bit-identical weights for a given seed.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function uniform(next, n, scale) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = (next() * 2 - 1) * scale;
  return a;
}

/**
 * Weights in the library's layout (y = x W + b, W row-major D x D, head i in column block i)
 * and an input x (B x S x D). Weights ~ U(±1/√D) keep activations O(1) at every D, so one
 * relative tolerance fits all workloads.
 */
export function makeData(w, seed = 20261122) {
  if (kindOf(w) !== 'layer') throw new Error(`makeData: ${w.name} is an ${kindOf(w)} workload (its data comes from bench/${kindOf(w)}/workload.mjs)`);
  const next = rng(seed + w.seqLen * 7919 + w.dModel * 31 + w.batch);
  const D = w.dModel;
  const ws = 1 / Math.sqrt(D);
  return {
    wQ: uniform(next, D * D, ws), wK: uniform(next, D * D, ws), wV: uniform(next, D * D, ws), wO: uniform(next, D * D, ws),
    bQ: uniform(next, D, 0.1), bK: uniform(next, D, 0.1), bV: uniform(next, D, 0.1), bO: uniform(next, D, 0.1),
    x: uniform(next, w.batch * w.seqLen * D, 1),
  };
}

/** Max |a-b| and the reference's max |ref|, for the relative agreement check. */
export function compareOutputs(ref, out) {
  if (!out || out.length !== ref.length) return { maxAbsDiff: Infinity, refScale: 0, rel: Infinity, note: `length ${out?.length} != ${ref.length}` };
  let maxAbsDiff = 0, refScale = 0;
  for (let i = 0; i < ref.length; i++) {
    const d = Math.abs(ref[i] - out[i]);
    if (!(d <= maxAbsDiff)) maxAbsDiff = Number.isNaN(d) ? Infinity : d; // NaN counts as disagreement
    const r = Math.abs(ref[i]);
    if (r > refScale) refScale = r;
  }
  return { maxAbsDiff, refScale, rel: maxAbsDiff / (refScale || 1) };
}
