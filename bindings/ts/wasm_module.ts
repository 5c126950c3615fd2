// The shape of what the Emscripten glue hands back: heap views, malloc/free and the embind
// classes of bindings/embind.cpp. Internal: the public API wraps all of it.

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

export interface Gpt2Handle {
  configure(vocabSize: number, nPositions: number, nEmbd: number, nLayer: number, nHead: number, eps: number): string;
  setTensor(tensor: number, layer: number, data: number, count: number): string;
  finalize(): string;
  forward(tokens: number, n: number, logits: number, attention: number, traceLayer: number): string;
  traceData(slot: number): number;
  traceSize(slot: number): number;
  delete(): void;
}

export interface WasmModule {
  HEAPU8: Uint8Array;
  HEAPF32: Float32Array;
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  kernelsName(): string;
  setNumThreads(n: number): number;
  MultiHeadAttentionHandle: new () => MultiHeadAttentionHandle;
  AttentionHandle: new () => AttentionHandle;
  Gpt2Handle: new () => Gpt2Handle;
}

/** Trace slots, in the order of bindings/embind.cpp's TraceSlot. */
export const enum Slot { Q, K, V, RawScores, ScaledScores, MaskedScores, Weights, Z, Concat, Output, Input }

export type GlueFactory = (moduleArg: Record<string, unknown>) => Promise<WasmModule>;
