// This library (dist/index.node.js, the Node entry), one build per engine: SIMD, scalar, or a threaded build when
// dist/ has one. Each engine runs in its own fresh process, so loadMs is a cold instantiate.
// Layer workloads: createMultiHeadAttention + forward. Encoder: loadModel (config.json,
// model.safetensors, vocab.txt from bench/encoder/workload.mjs's folder) + embed(token ids). Generate:
// loadModel (GPT-2 files from bench/generate/workload.mjs's folder, weights held as the engine's dtype) +
// generate(token ids), greedy.
import { readFileSync } from 'node:fs';

const DIST = new URL('../../dist/index.node.js', import.meta.url);

async function prepareEncoder(attn, wl, d) {
  const t = performance.now();
  const model = await attn.loadModel({
    config: JSON.parse(readFileSync(`${d.dir}/config.json`, 'utf8')),
    weights: readFileSync(`${d.dir}/model.safetensors`),
    tokenizer: { vocab: readFileSync(`${d.dir}/vocab.txt`, 'utf8') },
  });
  const sessionMs = performance.now() - t;
  // One { tokens } per sentence, without its trailing padding (embed pads each batch itself).
  const S = wl.seqLen;
  const inputs = Array.from({ length: wl.batch }, (_, b) => {
    let n = 0;
    while (n < S && d.mask[b * S + n]) n++;
    return { tokens: Array.from(d.ids.subarray(b * S, b * S + n)) };
  });
  const opts = { pooling: 'mean', normalize: true, batchSize: wl.batch };
  return {
    isAsync: false,
    sessionMs,
    run: () => model.embed(inputs, opts).data,
    dispose: () => model.dispose(),
  };
}

async function prepareGenerate(attn, wl, d, dtype) {
  const files = {
    config: JSON.parse(readFileSync(`${d.dir}/config.json`, 'utf8')),
    weights: readFileSync(`${d.dir}/model.safetensors`),
    tokenizer: { vocab: JSON.parse(readFileSync(`${d.dir}/vocab.json`, 'utf8')), merges: readFileSync(`${d.dir}/merges.txt`, 'utf8') },
  };
  const t = performance.now();
  let model;
  try {
    // f32 engines pass no dtype: the checkpoint is F32, and a dist/ from before issue 22 runs them too.
    model = await attn.loadModel(files, dtype ? { dtype } : {});
  } catch (e) {
    if (dtype && /unknown option 'dtype'/.test(e.message)) throw new Error(`not built: this dist/ has no loadModel dtype option yet (${e.message})`);
    throw e;
  }
  const sessionMs = performance.now() - t;
  const prompt = Array.from(d.prompt);
  const firstToken = [];  // per call: the library's own time to first token, and the whole call
  return {
    isAsync: true,
    sessionMs,
    firstToken,
    run: async () => {
      const t0 = performance.now();
      const r = await model.generate(prompt, { maxNewTokens: wl.newTokens, temperature: 0 });
      firstToken.push({ ttftMs: r.timeToFirstTokenMs, runMs: performance.now() - t0 });
      return r.tokens;
    },
    // Prefill alone: the prompt through every layer and the LM head on its last position.
    prefill: () => model.run(prompt, { logitsToKeep: 1 }).logits,
    // heapBytes: the WebAssembly memory (it grows with the largest call and never shrinks);
    // weightBytes: the parameters as held, when the core reports it (issue 22).
    stats: () => ({ heapBytes: attn.memoryBytes, weightBytes: typeof model.weightBytes === 'number' ? model.weightBytes : undefined }),
    dispose: () => model.dispose(),
  };
}

export async function load({ simd, threads = 1, dtype }) {
  const t0 = performance.now();
  const lib = await import(DIST.href);
  const t1 = performance.now();
  // threads is always explicit: in Node the library's default is its threaded build, and the
  // 1-thread engines must stay on one thread.
  let attn;
  try {
    attn = await lib.loadAttention({ simd, threads });
  } catch (e) {
    if (threads > 1) return { skip: `not built (loadAttention({ threads: ${threads} }) failed: ${e.message})` };
    throw e;
  }
  const t2 = performance.now();
  // A dist/ without a threaded build ignores the option and reports no `threads`: "not built".
  if ((attn.threads ?? 1) !== threads) {
    const why = threads > 1 ? 'not built (dist/ has no threaded variant' : 'could not force one thread (';
    return { skip: `${why}: loadAttention({ threads: ${threads} }) returned threads=${attn.threads})` };
  }
  return {
    loadMs: t2 - t0,
    info: { importMs: t1 - t0, instantiateMs: t2 - t1, variant: attn.variant, threads: attn.threads ?? 1 },
    prepare(wl, d) {
      if (wl.kind === 'encoder') return prepareEncoder(attn, wl, d);
      if (wl.kind === 'generate') return prepareGenerate(attn, wl, d, dtype);
      const mha = attn.createMultiHeadAttention({ dModel: wl.dModel, numHeads: wl.numHeads, bias: true });
      mha.setWeights({ wQ: d.wQ, wK: d.wK, wV: d.wV, wO: d.wO, bQ: d.bQ, bK: d.bK, bV: d.bV, bO: d.bO });
      const opts = { batch: wl.batch, seqLen: wl.seqLen, causal: wl.causal };
      return {
        isAsync: false,
        run: () => mha.forward(d.x, opts).output,
        dispose: () => mha.dispose(),
      };
    },
  };
}
