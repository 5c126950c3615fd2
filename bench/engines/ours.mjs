// This library (dist/index.js), one build per engine: SIMD, scalar, or a threaded build when
// dist/ has one. Each engine runs in its own fresh process, so loadMs is a cold instantiate.
const DIST = new URL('../../dist/index.js', import.meta.url);

export async function load({ simd, threads }) {
  const t0 = performance.now();
  const lib = await import(DIST.href);
  const t1 = performance.now();
  const attn = await lib.loadAttention(threads ? { simd, threads } : { simd });
  const t2 = performance.now();
  // A later change adds loadAttention({ threads }); until dist/ has it, the option is ignored
  // and the module reports no `threads`, which is how "not built" is detected.
  if (threads && attn.threads !== threads) {
    return { skip: `not built (dist/ has no ${threads}-thread variant: loadAttention({ threads: ${threads} }) returned threads=${attn.threads})` };
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
