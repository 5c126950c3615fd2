// The shape of what the Emscripten glue hands back: heap views, malloc/free and the embind
// classes of bindings/embind.cpp. Internal: the public API wraps all of it.
import type { CheckpointHandle } from '../loading/checkpoint.js';

export interface MultiHeadAttentionHandle {
  configure(dModel: number, numHeads: number, dK: number, dV: number, kdim: number, vdim: number, bias: boolean): string;
  dK(): number;
  dV(): number;
  kdim(): number;
  vdim(): number;
  setWeights(wq: number, wk: number, wv: number, wo: number, bq: number, bk: number, bv: number, bo: number): string;
  forward(query: number, key: number, value: number, batch: number, seqQ: number, seqK: number,
    causal: boolean, keyPadding: number, maskKind: number, mask: number, maskPerHead: boolean,
    scale: number, output: number, weights: number, trace: boolean): string;
  traceData(slot: number): number;
  traceSize(slot: number): number;
  delete(): void;
}

export interface AttentionHandle {
  run(q: number, k: number, v: number, batch: number, heads: number, seqQ: number, seqK: number,
    dK: number, dV: number, causal: boolean, keyPadding: number, maskKind: number, mask: number,
    maskPerHead: boolean, scale: number, output: number, weights: number, trace: boolean): string;
  traceData(slot: number): number;
  traceSize(slot: number): number;
  delete(): void;
}

/** What every model handle shares: loading by tensor name (see checkpoint.ts) and the trace. */
export interface ModelHandle extends CheckpointHandle {
  traceData(slot: number): number;
  traceSize(slot: number): number;
  delete(): void;
}

export interface Gpt2Handle extends ModelHandle {
  configure(vocabSize: number, nPositions: number, nEmbd: number, nLayer: number, nHead: number, eps: number): string;
  forward(tokens: number, n: number, logits: number, attention: number, traceLayer: number, logitRows: number): string;
}

/** A decoder-only model's handle without its configure (bindings/embind.cpp's DecoderHandle). */
export type DecoderModelHandle = Omit<Gpt2DecodingHandle, 'configure'>;

/** The Llama family (bindings/embind.cpp's LlamaHandle); scaling '' for no rope_scaling. */
export interface LlamaHandle extends DecoderModelHandle {
  configure(vocabSize: number, maxPositions: number, hidden: number, intermediate: number, layers: number, heads: number,
    kvHeads: number, headDim: number, eps: number, ropeTheta: number, scaling: string, factor: number, lowFreqFactor: number,
    highFreqFactor: number, originalMaxPositions: number, attentionBias: boolean, tieWordEmbeddings: boolean,
    slidingWindow: number): string;
}

/** Incremental decoding through the KV cache, as GPT-2 and BART offer it. */
export interface DecodingHandle {
  step(tokens: number, n: number, logits: number, ...attention: number[]): string;
  reorderCache(order: number, newBatch: number): string;
  cachedLength(): number;
}

export interface Gpt2DecodingHandle extends Gpt2Handle, DecodingHandle {
  startDecoding(batch: number, capacity: number): string;
  step(tokens: number, n: number, logits: number, attention: number): string;
}

export interface BartHandle extends ModelHandle, DecodingHandle {
  configure(vocabSize: number, maxPositions: number, dModel: number, encoderLayers: number, decoderLayers: number,
    encoderHeads: number, decoderHeads: number, encoderFfn: number, decoderFfn: number, activation: number,
    scaleEmbedding: boolean): string;
  encode(tokens: number, padding: number, batch: number, n: number, memory: number, attention: number, traceLayer: number): string;
  decode(tokens: number, batch: number, T: number, memory: number, padding: number, S: number, logits: number,
    selfAttention: number, crossAttention: number, traceLayer: number, traceCross: boolean): string;
  startDecoding(memory: number, padding: number, batch: number, S: number, capacity: number): string;
  step(tokens: number, n: number, logits: number, selfAttention: number, crossAttention: number): string;
}

export interface BertHandle extends ModelHandle {
  configure(vocabSize: number, maxPositions: number, typeVocabSize: number, hidden: number, layers: number, heads: number,
    intermediate: number, eps: number, activation: number, pooler: boolean, mlmHead: boolean): string;
  forward(tokens: number, tokenTypes: number, padding: number, batch: number, n: number, hidden: number,
    attention: number, traceLayer: number): string;
  mlmLogits(hidden: number, rows: number, logits: number): string;
  pooler(hidden: number, batch: number, n: number, out: number): string;
}

export interface WasmModule {
  HEAPU8: Uint8Array;
  HEAPF32: Float32Array;
  HEAPF64: Float64Array;
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  kernelsName(): string;
  logSumExpRows(logits: number, rows: number, cols: number, out: number): string;
  setNumThreads(n: number): number;
  MultiHeadAttentionHandle: new () => MultiHeadAttentionHandle;
  AttentionHandle: new () => AttentionHandle;
  Gpt2Handle: new () => Gpt2DecodingHandle;
  LlamaHandle: new () => LlamaHandle;
  BartHandle: new () => BartHandle;
  BertHandle: new () => BertHandle;
  /** Sentence embeddings from hidden states: kind 0 = mean over real tokens, 1 = first token. */
  poolHidden(hidden: number, padding: number, batch: number, n: number, dim: number, kind: number, normalize: boolean, out: number): void;
}

/** Trace slots, in the order of bindings/embind.cpp's TraceSlot. */
export const enum Slot { Q, K, V, RawScores, ScaledScores, MaskedScores, Weights, Z, Concat, Output, Input, QBeforeRotary, KBeforeRotary }

export type GlueFactory = (moduleArg: Record<string, unknown>) => Promise<WasmModule>;
