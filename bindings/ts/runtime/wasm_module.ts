// The shape of what the Emscripten glue hands back: heap views, malloc/free and the embind
// classes, enums and value_objects of bindings/embind.cpp. Internal: the public API wraps all of it.
// Configs and multi-part calls cross as plain objects (embind value_objects: every field
// required); codes cross as embind enum values, read from the module by name (enumValue).
import { AttentionError } from '../errors.js';

/** A heap address. */
type Address = number;

declare const enumBrand: unique symbol;
/** One value of an embind enum of bindings/embind.cpp: an object holding the C++ value. */
export interface EnumValue<Name extends string> {
  readonly value: number;
  readonly [enumBrand]?: Name;
}
/** An embind enum as the module exposes it: its values by name. */
export type Enum<Name extends string, Key extends string> = { readonly [K in Key]: EnumValue<Name> };

/** A checkpoint's stored dtypes: safetensors' float ones and GGUF's (weight_types.h's stored_name). */
export type DtypeName = 'F32' | 'F16' | 'BF16' | 'Q8_0' | 'Q4_0' | 'Q4_K' | 'Q6_K' | 'Q5_0' | 'Q4_1' | 'Q5_1' | 'Q5_K' | 'Q3_K' | 'Q2_K';
/** How a model holds its weights (loadModel's dtype; tensor_table.h's WeightStorage). */
export type WeightStorageName = 'auto' | 'f32' | 'f16' | 'q8' | 'q4';
/** config.json's activation names ("gelu": erf GELU, "gelu_new": the tanh approximation). */
export type ActivationName = 'gelu' | 'gelu_new' | 'tanh' | 'silu';
export type MaskKindName = 'None' | 'Bool' | 'Float';
/** Trace tensors, in the order the seeds walk through them (embind.cpp's TraceSlot). */
export type TraceSlotName = 'Q' | 'K' | 'V' | 'RawScores' | 'ScaledScores' | 'MaskedScores' | 'Weights' | 'Z' | 'Concat'
  | 'Output' | 'Input' | 'QBeforeRotary' | 'KBeforeRotary' | 'QBeforeNorm' | 'KBeforeNorm'
  // a model's traced block (attention/block_trace.ts)
  | 'BlockInput' | 'BlockAttention' | 'BlockAfterAttention' | 'BlockCross' | 'BlockAfterCross' | 'BlockMlpInput' | 'BlockUp' | 'BlockGate' | 'BlockHidden' | 'BlockMlp' | 'BlockAfterMlp' | 'BlockOutput' | 'Norm1Gain' | 'Norm1Bias' | 'Norm1Eps' | 'Norm2Gain' | 'Norm2Bias' | 'Norm2Eps' | 'Norm3Gain' | 'Norm3Bias' | 'Norm3Eps';
export type PoolingName = 'mean' | 'cls';
/** Which attention of a layer: its self-attention (BART: the encoder's), BART's decoder self-attention, its cross-attention. */
export type AttentionPartName = 'self' | 'decoder' | 'cross';

export type Dtype = EnumValue<'Dtype'>;
export type WeightStorage = EnumValue<'WeightStorage'>;
export type Activation = EnumValue<'Activation'>;
export type MaskKind = EnumValue<'MaskKind'>;
export type TraceSlot = EnumValue<'TraceSlot'>;
export type Pooling = EnumValue<'Pooling'>;
export type AttentionPart = EnumValue<'AttentionPart'>;

/** The value of enum `e` named `name`, if it has one. embind itself does not check what it is given
 * for an enum (it passes `.value` on: a plain number or an unknown name would reach the core as 0),
 * so every name goes through here or enumValue. */
export function findEnum<N extends string, K extends string>(e: Enum<N, K>, name: string): EnumValue<N> | undefined {
  if (!Object.prototype.hasOwnProperty.call(e, name)) return undefined;
  const v = (e as Record<string, EnumValue<N> | undefined>)[name];
  return typeof v === 'object' && v !== null && typeof v.value === 'number' ? v : undefined;
}

/** An enum's names, in the order embind.cpp declares them. */
export function enumNames<N extends string, K extends string>(e: Enum<N, K>): K[] {
  return Object.keys(e).filter((k) => findEnum(e, k) !== undefined) as K[];
}

/** The value of enum `e` named `name`, or a named AttentionError ("<what> "x" is not one of ..."). */
export function enumValue<N extends string, K extends string>(e: Enum<N, K>, name: string, what: string): EnumValue<N> {
  const v = findEnum(e, name);
  if (v === undefined) throw new AttentionError(`${what} ${JSON.stringify(name)} is not one of ${enumNames(e).join(', ')}`);
  return v;
}

/** A call's masks (embind.cpp's MaskArgs). */
export interface Masks {
  causal: boolean;
  key_padding: Address;
  kind: MaskKind;
  data: Address;
  per_head: boolean;
}

/** Reads the trace tensors of the last traced call. */
export interface TraceHandle {
  traceData(slot: TraceSlot): Address;
  traceSize(slot: TraceSlot): number;
}

/** MultiHeadAttention's config (the core's MhaConfig; 0: the core's default). */
export interface MhaConfig {
  d_model: number;
  num_heads: number;
  d_k: number;
  d_v: number;
  kdim: number;
  vdim: number;
  bias: boolean;
}

export interface MhaWeights {
  wq: Address; wk: Address; wv: Address; wo: Address;
  bq: Address; bk: Address; bv: Address; bo: Address;
}

/** One MultiHeadAttention forward call; scale NaN: 1/sqrt(d_k). */
export interface MhaCall {
  query: Address; key: Address; value: Address;
  batch: number; seq_q: number; seq_k: number;
  scale: number;
  output: Address; weights: Address;
  trace: boolean;
}

export interface MultiHeadAttentionHandle extends TraceHandle {
  configure(config: MhaConfig): string;
  dK(): number;
  dV(): number;
  kdim(): number;
  vdim(): number;
  setWeights(weights: MhaWeights): string;
  forward(call: MhaCall, masks: Masks): string;
  delete(): void;
}

/** One standalone attention call on given Q, K, V. */
export interface AttentionCall {
  q: Address; k: Address; v: Address;
  batch: number; heads: number; seq_q: number; seq_k: number; d_k: number; d_v: number;
  scale: number;
  output: Address; weights: Address;
  trace: boolean;
}

export interface AttentionHandle extends TraceHandle {
  run(call: AttentionCall, masks: Masks): string;
  delete(): void;
}

/** What every model handle of bindings/embind.cpp offers for loading (checkpoint.ts). */
export interface CheckpointHandle {
  tensorCount(): number;
  tensorName(i: number): string;
  tensorShape(i: number): number[];
  tensorOptional(i: number): boolean;
  /** data: the stored bytes in the heap. */
  setTensor(name: string, data: Address, count: number, dtype: Dtype): string;
  /** Elements [first, first + part) of a tensor of `count`, whole stored rows, in order. */
  setTensorPart(name: string, data: Address, count: number, first: number, part: number, dtype: Dtype): string;
  /** Where the core keeps this tensor's bytes as stored (a tied embedding in F16), to write them
   * there directly before setTensor; 0: stage them. */
  storedDestination(name: string, count: number, dtype: Dtype): Address;
  /** How the weights are held; before any tensor is set. */
  setWeightStorage(storage: WeightStorage): void;
  /** The type tensor i is held in ('Q8_0', 'F16', ...; '' before it is set). */
  tensorHeldType(i: number): DtypeName | '';
  finalize(): string;
}

/** One head's weights as embind.cpp's headWeights returns them: heap views (copy at once) or an error. */
export interface HeadWeightsViews {
  error?: string;
  dModel: number; kdim: number; vdim: number; dK: number; dV: number; kvHead: number;
  wQ: Float32Array; wK: Float32Array; wV: Float32Array; wO: Float32Array;
  bQ: Float32Array; bK: Float32Array; bV: Float32Array; bO: Float32Array;
}

/** The boolean mask a layer's last call applied (a heap view: copy at once). */
export interface AppliedMaskView {
  batch: number; seqQ: number; seqK: number; hidden: Uint8Array;
}

/** What every model handle shares: configure with its family's config, loading by tensor name
 * (checkpoint.ts), the trace, and what a viewer asks of a layer (its heads' weights, its mask). */
export interface ModelHandle<Config> extends CheckpointHandle, TraceHandle {
  configure(config: Config): string;
  weightBytes(): number;
  headWeights(part: AttentionPart, layer: number, head: number): HeadWeightsViews;
  appliedMask(part: AttentionPart, layer: number): AppliedMaskView | null;
  /** Head ablation: n flags (1 = off) for one layer of `part`, read by every later call; n = 0: every head on. */
  setHeadsOff(part: AttentionPart, layer: number, flags: Address, n: number): string;
  delete(): void;
}

/** A batch of token sequences padded to one length (token_types, padding 0: none). */
export interface TokenBatch {
  tokens: Address; token_types: Address; padding: Address;
  batch: number; length: number;
}

/** The encoder's output as the decoder reads it. */
export interface EncoderMemory {
  states: Address; padding: Address; length: number;
}

/** Where a BART decoder call writes (attention 0: not wanted). */
export interface DecoderOutputs {
  logits: Address; self_attention: Address; cross_attention: Address;
}

/** GPT-2's config.json fields the core reads. */
export interface Gpt2Config {
  vocab_size: number; n_positions: number; n_embd: number; n_layer: number; n_head: number;
  layer_norm_epsilon: number;
}

/** config.json's rope_scaling as the core reads it; rope_type '' for none. */
export interface RopeScalingConfig {
  rope_type: string;
  factor: number;
  low_freq_factor: number;
  high_freq_factor: number;
  original_max_position_embeddings: number;
  /** longrope: the short and long factors, the attention factor. */
  short_factor: number[];
  long_factor: number[];
  attention_factor: number;
}

/** The Llama family's config.json fields the core reads. */
export interface LlamaCoreConfig {
  vocab_size: number; max_position_embeddings: number; hidden_size: number; intermediate_size: number;
  num_hidden_layers: number; num_attention_heads: number; num_key_value_heads: number; head_dim: number;
  rms_norm_eps: number; rope_theta: number; rope_scaling: RopeScalingConfig;
  attention_bias: boolean; tie_word_embeddings: boolean; sliding_window: number;
  /** Qwen3's per-head q/k norm; SmolLM3's rotating layers, '1'/'0' a layer ('' = every layer). */
  qk_norm: boolean; rope_layers: string;
  /** Phi-3's qkv_proj and gate_up_proj read as stored; its rotated values per head. */
  fused_projections: boolean; rotary_dim: number;
  /** Gemma 3: windowed layers ('1'/'0' a layer, '' = every layer), their rope base, the scores'
   * scale, the final softcap, (1 + w) norms, sandwich norms, scaled embeddings, GeGLU. */
  window_layers: string; rope_local_theta: number; attention_scale: number; final_logit_softcapping: number;
  unit_offset_norms: boolean; sandwich_norms: boolean; scale_embeddings: boolean; gelu_mlp: boolean;
  /** config.json's model_type: how the core's errors name the model ("qwen2 model: ..."). */
  model_type: string;
}

export interface BartCoreConfig {
  vocab_size: number; max_position_embeddings: number; d_model: number;
  encoder_layers: number; decoder_layers: number; encoder_attention_heads: number; decoder_attention_heads: number;
  encoder_ffn_dim: number; decoder_ffn_dim: number; activation_function: Activation; scale_embedding: boolean;
}

/** pooler / mlm_head: whether the checkpoint has pooler.dense.* / cls.predictions.*. */
export interface BertCoreConfig {
  vocab_size: number; max_position_embeddings: number; type_vocab_size: number; hidden_size: number;
  num_hidden_layers: number; num_attention_heads: number; intermediate_size: number; layer_norm_eps: number;
  hidden_act: Activation; pooler: boolean; mlm_head: boolean;
}

/** Incremental decoding through the KV cache, as GPT-2, Llama and BART offer it. */
export interface DecodingHandle {
  reorderCache(order: Address, newBatch: number): string;
  cachedLength(): number;
}

/** A decoder-only model's handle (bindings/embind.cpp's DecoderHandle). */
export interface DecoderModelHandle<Config = unknown> extends ModelHandle<Config>, DecodingHandle {
  forward(tokens: Address, n: number, logits: Address, attention: Address, traceLayer: number, logitRows: number): string;
  startDecoding(batch: number, capacity: number): string;
  step(tokens: Address, n: number, logits: Address, attention: Address): string;
}

export type Gpt2Handle = DecoderModelHandle<Gpt2Config>;
export interface LlamaHandle extends DecoderModelHandle<LlamaCoreConfig> {
  /** Tensor i as held (after loading), to save it: its type and bytes (out x in rows; a view of
   * the handle's copy, valid until the next call), or the core's error. */
  heldTensor(i: number): { error: string } | { type: DtypeName; bytes: Uint8Array };
}

export interface BartHandle extends ModelHandle<BartCoreConfig>, DecodingHandle {
  encode(input: TokenBatch, memory: Address, attention: Address, traceLayer: number): string;
  /** traceCross: the trace is the cross-attention's walk (else the decoder self-attention's). */
  decode(input: TokenBatch, memory: EncoderMemory, out: DecoderOutputs, traceLayer: number, traceCross: boolean): string;
  startDecoding(memory: EncoderMemory, batch: number, capacity: number): string;
  step(tokens: Address, n: number, out: DecoderOutputs): string;
}

export interface BertHandle extends ModelHandle<BertCoreConfig> {
  forward(input: TokenBatch, hidden: Address, attention: Address, traceLayer: number): string;
  mlmLogits(hidden: Address, rows: number, logits: Address): string;
  pooler(hidden: Address, batch: number, n: number, out: Address): string;
}

/** Hidden states to pool (batch x length x dim) and where the batch x dim result goes. */
export interface PoolArgs {
  hidden: Address; padding: Address; batch: number; length: number; dim: number; out: Address;
}

export interface WasmModule {
  HEAPU8: Uint8Array;
  HEAPF32: Float32Array;
  HEAPF64: Float64Array;
  _malloc(bytes: number): number;
  _free(ptr: number): void;
  kernelsName(): string;
  /** Tests: C (M x N) = A (M x K floats) B^T (N rows of `type`'s bytes) by the build's kernels
   * ('default') or the scalar twins ('scalar'). "" or why not. */
  quantProduct(type: Dtype, kernels: 'default' | 'scalar', a: Address, M: number, K: number, b: Address, N: number, c: Address): string;
  /** Bytes malloc has handed out and not taken back (mallinfo's uordblks). */
  heapBytesInUse(): number;
  logSumExpRows(logits: Address, rows: number, cols: number, out: Address): string;
  encodeRows(type: Dtype, values: Address, rows: number, cols: number, out: Address): string;
  decodeRows(type: Dtype, bytes: Address, rows: number, cols: number, out: Address): string;
  setNumThreads(n: number): number;
  Dtype: Enum<'Dtype', DtypeName>;
  WeightStorage: Enum<'WeightStorage', WeightStorageName>;
  Activation: Enum<'Activation', ActivationName>;
  MaskKind: Enum<'MaskKind', MaskKindName>;
  TraceSlot: Enum<'TraceSlot', TraceSlotName>;
  Pooling: Enum<'Pooling', PoolingName>;
  AttentionPart: Enum<'AttentionPart', AttentionPartName>;
  MultiHeadAttentionHandle: new () => MultiHeadAttentionHandle;
  AttentionHandle: new () => AttentionHandle;
  Gpt2Handle: new () => Gpt2Handle;
  LlamaHandle: new () => LlamaHandle;
  BartHandle: new () => BartHandle;
  BertHandle: new () => BertHandle;
  /** Sentence embeddings from hidden states: mean over real tokens, or the first token. */
  poolHidden(args: PoolArgs, kind: Pooling, normalize: boolean): void;
}

export type GlueFactory = (moduleArg: Record<string, unknown>) => Promise<WasmModule>;
