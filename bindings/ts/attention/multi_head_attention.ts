// The public multi-head attention object: validates at the boundary, stages data into the heap,
// calls the core once, and hands back owned Float32Array copies.
import { AttentionError, throwIfError } from '../errors.js';
import { readTrace } from '../runtime/heap.js';
import type { Staging } from '../runtime/heap.js';
import { attnMask, boolArray, checkObject, checkOptions, floatArray, is, positiveInt, show, toBytes } from '../validate.js';
import type { AttnMask, BoolInput, FloatInput, Rule, Rules } from '../validate.js';
import { enumValue } from '../runtime/wasm_module.js';
import type { BlockTrace } from './block_trace.js';
import type { Masks, MaskKindName, MultiHeadAttentionHandle, TraceHandle, TraceSlotName, WasmModule } from '../runtime/wasm_module.js';
import { WasmObject } from '../runtime/wasm_object.js';

/** Sizes of a multi-head attention layer. */
export interface MultiHeadAttentionConfig {
  /** Model (query and output) feature size. */
  dModel: number;
  /** Number of heads h. */
  numHeads: number;
  /** Query/key size per head; default dModel / numHeads (which must then divide). */
  dK?: number;
  /** Value size per head; default dK. */
  dV?: number;
  /** Feature size of the key input (cross-attention); default dModel. */
  kdim?: number;
  /** Feature size of the value input (cross-attention); default dModel. */
  vdim?: number;
  /** Projection biases bQ, bK, bV, bO; default true. */
  bias?: boolean;
}

/**
 * Weights in the paper's row-vector layout, row-major (y = x W + b):
 * - wQ: dModel x (numHeads*dK), head i in column block i (columns i*dK .. (i+1)*dK-1)
 * - wK: kdim x (numHeads*dK)
 * - wV: vdim x (numHeads*dV)
 * - wO: (numHeads*dV) x dModel, head i in row block i
 * - bQ, bK: numHeads*dK; bV: numHeads*dV; bO: dModel (required when bias is true)
 * Use {@link weightsFromPyTorch} to convert an nn.MultiheadAttention state dict.
 */
export interface MultiHeadAttentionWeights {
  wQ: FloatInput;
  wK: FloatInput;
  wV: FloatInput;
  wO: FloatInput;
  bQ?: FloatInput;
  bK?: FloatInput;
  bV?: FloatInput;
  bO?: FloatInput;
}

/** Masking and scaling, shared by multi-head and scaled dot-product attention. */
export interface MaskOptions {
  /** Query i may not attend to key j > i (top-left aligned when S_q != S_k). */
  causal?: boolean;
  /** B x S_k, true/1 = ignore that key (PyTorch's key_padding_mask convention). */
  keyPaddingMask?: BoolInput;
  /** S_q x S_k or B x H x S_q x S_k; boolean (true = masked) or Float32Array (added to scores). */
  attnMask?: AttnMask;
  /** Score scale; default 1/sqrt(dK). */
  scale?: number;
  /** Also return per-head attention weights B x H x S_q x S_k. */
  returnAttention?: boolean;
}

export interface ForwardOptions extends MaskOptions {
  /** Batch size B; default 1. Inputs are batch-first: B x S x features, row-major. */
  batch?: number;
  /** Query sequence length; default inferred from the query's length. */
  seqLen?: number;
  /** Key input B x S_k x kdim for cross-attention; default: the query (self-attention). */
  key?: FloatInput;
  /** Value input B x S_k x vdim; default: the key. */
  value?: FloatInput;
  /** Key/value sequence length; default inferred from the key's length. */
  seqLenKV?: number;
  /** Also return every intermediate of the computation (see {@link MultiHeadTrace}). */
  trace?: boolean;
}

/** Every step of the seeds' walk, each an owned copy, row-major with the shape in `shapes`. */
export interface MultiHeadTrace {
  /** The query input X the walk starts from (in a language model: LayerNorm of the residual): B x S_q x dModel. */
  x: Float32Array;
  /** Per-head projections Q_h = X W_h^Q + b: B x H x S_q x dK. */
  q: Float32Array;
  /** B x H x S_k x dK */
  k: Float32Array;
  /** B x H x S_k x dV */
  v: Float32Array;
  /** Q_h K_h^T: B x H x S_q x S_k */
  rawScores: Float32Array;
  /** Q_h K_h^T / sqrt(dK) (or times `scale`) */
  scaledScores: Float32Array;
  /** Scaled scores plus the mask M (-Infinity where masked) */
  maskedScores: Float32Array;
  /** softmax of each row: every row sums to 1, or is all zeros when every key is masked */
  weights: Float32Array;
  /** Per-head outputs Z_h = weights V_h: B x H x S_q x dV */
  z: Float32Array;
  /** Concat(Z_1..Z_h): B x S_q x (H*dV) */
  concat: Float32Array;
  /** Concat W^O + b^O: B x S_q x dModel */
  output: Float32Array;
  shapes: Record<'x' | 'q' | 'k' | 'v' | 'rawScores' | 'scaledScores' | 'maskedScores' | 'weights' | 'z' | 'concat' | 'output', number[]>;
  /** A model's traced layer only: the rest of its block (the residual stream, the norms, the MLP). */
  block?: BlockTrace;
}

export interface ForwardResult {
  /** B x S_q x dModel */
  output: Float32Array;
  /** B x H x S_q x S_k, when returnAttention was set */
  attention?: Float32Array;
  trace?: MultiHeadTrace;
  batch: number;
  seqLen: number;
  seqLenKV: number;
}

/** ForwardResult as the options make it: `attention` is there with `returnAttention: true`,
 * `trace` with `trace: true` (no `?.` needed on what was asked for). */
export type ForwardResultFor<O> = ForwardResult
  & (O extends { returnAttention: true } ? { attention: Float32Array } : unknown)
  & (O extends { trace: true } ? { trace: MultiHeadTrace } : unknown);

export type ResolvedConfig = Required<MultiHeadAttentionConfig>;

/** A positive integer size, in the wording of the layer's messages (shown with show(): never
 * throws while describing an object without a prototype or a Proxy). */
export const size: Rule = (v, name) => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 0x7fffffff)
    throw new AttentionError(`${name} must be a positive integer${typeof v === 'number' && v > 0x7fffffff ? ' below 2^31' : ''}, got ${show(v)}`);
};

/** The config's keys (dModel and numHeads are also required: checked after). Shared with weightsFromPyTorch. */
export const CONFIG_RULES: Rules<MultiHeadAttentionConfig> = {
  dModel: size, numHeads: size, dK: size, dV: size, kdim: size, vdim: size, bias: is.boolean,
};

const WEIGHT_RULES: Rules<MultiHeadAttentionWeights> = {
  wQ: is.any, wK: is.any, wV: is.any, wO: is.any, bQ: is.any, bK: is.any, bV: is.any, bO: is.any,  // lengths: below
};

/** Masking and scaling options, shared with scaledDotProductAttention (masks: checked against the shape). */
export const MASK_RULES: Rules<MaskOptions> = {
  causal: is.boolean, keyPaddingMask: is.any, attnMask: is.any, scale: is.number(), returnAttention: is.boolean,
};

const FORWARD_RULES: Rules<ForwardOptions> = {
  ...MASK_RULES, batch: size, seqLen: size, key: is.any, value: is.any, seqLenKV: size, trace: is.boolean,
};

export class MultiHeadAttention extends WasmObject<MultiHeadAttentionHandle> {
  /** The configuration with every default filled in. */
  readonly config: ResolvedConfig;

  /** @internal use AttentionModule.createMultiHeadAttention */
  constructor(mod: WasmModule, config: MultiHeadAttentionConfig) {
    const where = 'createMultiHeadAttention';
    config = checkOptions(where, checkObject(where, 'config', config, 'like { dModel: 512, numHeads: 8 }'), CONFIG_RULES, 'config key');
    const dModel = positiveInt(`${where}: dModel`, config.dModel);
    const numHeads = positiveInt(`${where}: numHeads`, config.numHeads);
    const opt = (v: number | undefined) => v ?? 0;  // 0: the core's default
    const handle = new mod.MultiHeadAttentionHandle();
    const status = handle.configure({ d_model: dModel, num_heads: numHeads, d_k: opt(config.dK), d_v: opt(config.dV), kdim: opt(config.kdim),
      vdim: opt(config.vdim), bias: config.bias ?? true });
    if (status) {
      handle.delete();
      throwIfError(status, 'createMultiHeadAttention');
    }
    super(mod, handle, 'MultiHeadAttention');
    this.config = Object.freeze({
      dModel, numHeads, dK: handle.dK(), dV: handle.dV(), kdim: handle.kdim(), vdim: handle.vdim(),
      bias: config.bias ?? true,
    });
  }

  /** Copies the weights into WASM memory (layout: see {@link MultiHeadAttentionWeights}). */
  setWeights(weights: MultiHeadAttentionWeights): void {
    const handle = this.live();
    weights = checkOptions('setWeights', checkObject('setWeights', 'weights', weights, '{ wQ, wK, wV, wO, bQ, bK, bV, bO }'), WEIGHT_RULES, 'weight');
    const { dModel, numHeads: h, dK, dV, kdim, vdim, bias } = this.config;
    const arrays: Array<[string, unknown, number, string]> = [
      ['wQ', weights.wQ, dModel * h * dK, `dModel*numHeads*dK = ${dModel}*${h}*${dK}`],
      ['wK', weights.wK, kdim * h * dK, `kdim*numHeads*dK = ${kdim}*${h}*${dK}`],
      ['wV', weights.wV, vdim * h * dV, `vdim*numHeads*dV = ${vdim}*${h}*${dV}`],
      ['wO', weights.wO, h * dV * dModel, `numHeads*dV*dModel = ${h}*${dV}*${dModel}`],
    ];
    if (bias) {
      arrays.push(
        ['bQ', weights.bQ, h * dK, `numHeads*dK = ${h}*${dK}`],
        ['bK', weights.bK, h * dK, `numHeads*dK = ${h}*${dK}`],
        ['bV', weights.bV, h * dV, `numHeads*dV = ${h}*${dV}`],
        ['bO', weights.bO, dModel, `dModel`]);
    } else {
      for (const name of ['bQ', 'bK', 'bV', 'bO'] as const)
        if (weights[name] !== undefined) throw new AttentionError(`setWeights: ${name} given but the layer was created with bias: false`);
    }
    const checked = arrays.map(([name, value, n, formula]) => floatArray(`setWeights: ${name}`, value, n, formula));
    const regions = checked.map((a) => this.staging.plan(a.length * 4));
    try {
      this.staging.commit();
      checked.forEach((a, i) => this.staging.writeF32(regions[i], a));
      const [wq, wk, wv, wo, bq = 0, bk = 0, bv = 0, bo = 0] = regions.map((r) => r.ptr);
      throwIfError(handle.setWeights({ wq, wk, wv, wo, bq, bk, bv, bo }), 'setWeights');
    } finally {
      this.staging.release();
    }
  }

  /**
   * Runs the layer. `query` is B x S_q x dModel (row-major, batch first); for self-attention it
   * is also the key and value. Returns owned copies.
   */
  forward<O extends ForwardOptions = ForwardOptions>(query: FloatInput, opts?: O): ForwardResultFor<O> {
    const handle = this.live();
    const options: ForwardOptions = checkOptions('forward', opts, FORWARD_RULES);
    const { dModel, numHeads: h, dK, dV, kdim, vdim } = this.config;
    const batch = options.batch ?? 1;
    const seqLen = inferLength('seqLen', options.seqLen, query, batch, dModel, 'query', 'dModel');
    const q = floatArray('forward: query', query, batch * seqLen * dModel, `batch*seqLen*dModel = ${batch}*${seqLen}*${dModel}`);
    const self = options.key === undefined && options.value === undefined;
    if (self && (kdim !== dModel || vdim !== dModel))
      throw new AttentionError(`forward: this layer has kdim ${kdim} / vdim ${vdim} != dModel ${dModel}: pass key and value`);
    const keySrc = options.key ?? query;
    const seqLenKV = self ? seqLen : inferLength('seqLenKV', options.seqLenKV, keySrc, batch, kdim, 'key', 'kdim');
    const k = self ? q : floatArray('forward: key', keySrc, batch * seqLenKV * kdim, `batch*seqLenKV*kdim = ${batch}*${seqLenKV}*${kdim}`);
    const valueSrc = options.value ?? keySrc;
    const v = self ? q : floatArray('forward: value', valueSrc, batch * seqLenKV * vdim, `batch*seqLenKV*vdim = ${batch}*${seqLenKV}*${vdim}`);
    const scale = options.scale ?? NaN;  // NaN: the core's 1/sqrt(dK)
    const nOut = batch * seqLen * dModel;
    const nWeights = batch * h * seqLen * seqLenKV;
    const wantWeights = options.returnAttention === true;

    const st = this.staging;
    const rq = st.plan(q.length * 4);
    const rk = k === q ? rq : st.plan(k.length * 4);
    const rv = v === q ? rq : v === k ? rk : st.plan(v.length * 4);
    const masks = stageMasks(st, options, batch, h, seqLen, seqLenKV);
    const rout = st.plan(nOut * 4);
    const rw = st.plan(wantWeights ? nWeights * 4 : 0);
    try {
      st.commit();
      st.writeF32(rq, q);
      if (rk !== rq) st.writeF32(rk, k);
      if (rv !== rq && rv !== rk) st.writeF32(rv, v);
      masks.write();
      throwIfError(handle.forward({ query: rq.ptr, key: rk.ptr, value: rv.ptr, batch, seq_q: seqLen, seq_k: seqLenKV, scale,
        output: rout.ptr, weights: rw.ptr, trace: options.trace === true }, masks.args(this.mod, options.causal === true)), 'forward');
      const result: ForwardResult = { output: st.readF32(rout, nOut), batch, seqLen, seqLenKV };
      if (wantWeights) result.attention = st.readF32(rw, nWeights);
      if (options.trace === true) result.trace = readMhaTrace(this.mod, handle, this.config, batch, seqLen, seqLenKV);
      return result as ForwardResultFor<O>;
    } finally {
      st.release();
    }
  }
}

/** validate.ts's attnMask kinds (0, 1, 2) by the core's names. */
const MASK_KINDS: readonly MaskKindName[] = ['None', 'Bool', 'Float'];

/** The masks of a call, checked against its shape and planned into the staging block;
 * `write()` copies them in once the block is committed. */
export function stageMasks(st: Staging, options: MaskOptions, batch: number, heads: number, seqQ: number, seqK: number) {
  const kpm = options.keyPaddingMask == null ? null
    : toBytes(boolArray('keyPaddingMask', options.keyPaddingMask, batch * seqK, `batch*seqLenKV = ${batch}*${seqK}`));
  const mask = attnMask(options.attnMask, batch, heads, seqQ, seqK);
  const keyPadding = st.plan(kpm ? kpm.length : 0);
  const maskRegion = st.plan(mask.data ? mask.data.length * (mask.kind === 2 ? 4 : 1) : 0);
  return {
    /** The masks as the core takes them (after commit: the regions' addresses). */
    args(mod: WasmModule, causal: boolean): Masks {
      return { causal, key_padding: keyPadding.ptr, kind: enumValue(mod.MaskKind, MASK_KINDS[mask.kind], 'mask kind'),
        data: maskRegion.ptr, per_head: mask.perHead };
    },
    write() {
      if (kpm) st.writeU8(keyPadding, kpm);
      if (mask.data) (mask.kind === 2 ? st.writeF32(maskRegion, mask.data) : st.writeU8(maskRegion, mask.data));
    },
  };
}

/** Owned copies of the core's trace buffers, named and shaped. */
export function readMhaTrace(mod: WasmModule, handle: TraceHandle,
  config: Pick<ResolvedConfig, 'numHeads' | 'dK' | 'dV' | 'dModel'>, B: number, Sq: number, Sk: number): MultiHeadTrace {
  const { numHeads: H, dK, dV, dModel } = config;
  const read = (slot: TraceSlotName) => readTrace(mod, handle, slot);
  const plane = [B, H, Sq, Sk];
  return {
    x: read('Input'), q: read('Q'), k: read('K'), v: read('V'),
    rawScores: read('RawScores'), scaledScores: read('ScaledScores'),
    maskedScores: read('MaskedScores'), weights: read('Weights'),
    z: read('Z'), concat: read('Concat'), output: read('Output'),
    shapes: {
      x: [B, Sq, dModel], q: [B, H, Sq, dK], k: [B, H, Sk, dK], v: [B, H, Sk, dV], rawScores: plane,
      scaledScores: plane, maskedScores: plane, weights: plane, z: [B, H, Sq, dV],
      concat: [B, Sq, H * dV], output: [B, Sq, dModel],
    },
  };
}

/** A sequence length given, or inferred from an array's length; either way it must fit. */
export function inferLength(name: string, given: number | undefined, data: unknown, batch: number,
  width: number, dataName: string, widthName: string): number {
  if (given !== undefined) return positiveInt(name, given);
  // Only what floatArray accepts has its length read (an object's `length` may be anything).
  if (!(data instanceof Float32Array) && !Array.isArray(data))
    throw new AttentionError(`${dataName} must be a Float32Array (or an array of numbers), got ${show(data)}`);
  const length = data.length;
  if (length === 0) throw new AttentionError(`${dataName} is empty: ${name} must be >= 1`);
  if (length % (batch * width) !== 0)
    throw new AttentionError(`${dataName} has ${length} elements, not a multiple of batch*${widthName} = ${batch}*${width} = ${batch * width}`);
  return length / (batch * width);
}
