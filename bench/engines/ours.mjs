// This library (dist/index.js), one build per engine: SIMD, scalar, or a threaded build when
// dist/ has one. Each engine runs in its own fresh process, so loadMs is a cold instantiate.
const DIST = new URL('../../dist/index.js', import.meta.url);

export async function load({ simd, threads = 1 }) {
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
