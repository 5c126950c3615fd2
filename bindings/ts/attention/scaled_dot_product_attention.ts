// softmax(Q K^T * scale + M) V on caller-given Q, K, V (no projections).
import { throwIfError } from '../errors.js';
import { Staging, readTrace } from '../runtime/heap.js';
import { MASK_RULES, inferLength, size, stageMasks } from './multi_head_attention.js';
import type { MaskOptions } from './multi_head_attention.js';
import { checkObject, checkOptions, floatArray, is, positiveInt } from '../validate.js';
import type { FloatInput, Rules } from '../validate.js';
import type { AttentionHandle, TraceSlotName, WasmModule } from '../runtime/wasm_module.js';

export interface ScaledDotProductAttentionOptions extends MaskOptions {
  /** Size of each query/key vector. Required: the other sizes are inferred from lengths. */
  dK: number;
  /** Batch B; default 1. */
  batch?: number;
  /** Heads H; default 1. Tensors are B x H x S x d, row-major. */
  heads?: number;
  /** Also return raw, scaled and masked scores and the weights. */
  trace?: boolean;
}

export interface AttentionTrace {
  rawScores: Float32Array;
  scaledScores: Float32Array;
  maskedScores: Float32Array;
  weights: Float32Array;
}

/** The result as the options make it: `attention` with `returnAttention: true`, `trace` with `trace: true`. */
export type ScaledDotProductAttentionResultFor<O> = ScaledDotProductAttentionResult
  & (O extends { returnAttention: true } ? { attention: Float32Array } : unknown)
  & (O extends { trace: true } ? { trace: AttentionTrace } : unknown);

export interface ScaledDotProductAttentionResult {
  /** B x H x S_q x dV */
  output: Float32Array;
  /** B x H x S_q x S_k, when returnAttention was set */
  attention?: Float32Array;
  trace?: AttentionTrace;
  seqQ: number;
  seqK: number;
  dV: number;
}

const SDPA_RULES: Rules<ScaledDotProductAttentionOptions> = { ...MASK_RULES, dK: size, batch: size, heads: size, trace: is.boolean };

/** @internal one per module: scratch and trace buffers are reused across calls. */
export class ScaledDotProductAttention {
  private readonly handle: AttentionHandle;
  private readonly staging: Staging;

  constructor(private readonly mod: WasmModule) {
    this.handle = new mod.AttentionHandle();
    this.staging = new Staging(mod);
  }

  run<O extends ScaledDotProductAttentionOptions>(q: FloatInput, k: FloatInput, v: FloatInput, opts: O): ScaledDotProductAttentionResultFor<O> {
    const where = 'scaledDotProductAttention';
    const options = checkOptions(where, checkObject(where, 'options', opts, 'like { dK: 64 }'), SDPA_RULES);
    const dK = positiveInt(`${where}: dK`, options.dK);
    const batch = options.batch ?? 1, heads = options.heads ?? 1;
    const bh = batch * heads;
    const seqQ = inferLength('seqQ', undefined, q, bh, dK, 'q', 'heads*dK');
    const seqK = inferLength('seqK', undefined, k, bh, dK, 'k', 'heads*dK');
    const dV = inferLength('dV', undefined, v, bh, seqK, 'v', 'heads*seqK');
    const qa = floatArray(`${where}: q`, q, bh * seqQ * dK, 'batch*heads*seqQ*dK');
    const ka = floatArray(`${where}: k`, k, bh * seqK * dK, 'batch*heads*seqK*dK');
    const va = floatArray(`${where}: v`, v, bh * seqK * dV, 'batch*heads*seqK*dV');
    const scale = options.scale ?? NaN;  // NaN: the core's 1/sqrt(dK)
    const nOut = bh * seqQ * dV, nW = bh * seqQ * seqK;
    const st = this.staging;
    const [rq, rk, rv] = [qa, ka, va].map((a) => st.plan(a.length * 4));
    const masks = stageMasks(st, options, batch, heads, seqQ, seqK);
    const rout = st.plan(nOut * 4);
    const rw = st.plan(options.returnAttention ? nW * 4 : 0);
    try {
      st.commit();
      st.writeF32(rq, qa);
      st.writeF32(rk, ka);
      st.writeF32(rv, va);
      masks.write();
      throwIfError(this.handle.run({ q: rq.ptr, k: rk.ptr, v: rv.ptr, batch, heads, seq_q: seqQ, seq_k: seqK, d_k: dK, d_v: dV,
        scale, output: rout.ptr, weights: rw.ptr, trace: options.trace === true },
      masks.args(this.mod, options.causal === true)), 'scaledDotProductAttention');
      const result: ScaledDotProductAttentionResult = { output: st.readF32(rout, nOut), seqQ, seqK, dV };
      if (options.returnAttention) result.attention = st.readF32(rw, nW);
      if (options.trace) {
        const read = (slot: TraceSlotName) => readTrace(this.mod, this.handle, slot);
        result.trace = {
          rawScores: read('RawScores'), scaledScores: read('ScaledScores'),
          maskedScores: read('MaskedScores'), weights: read('Weights'),
        };
      }
      return result as ScaledDotProductAttentionResultFor<O>;
    } finally {
      st.release();
    }
  }
}
