// The Llama family's types: its model types, the files a model is made from, and config.json as
// read. Apart from llama_model.ts so that the GGUF reader and writer (llama_gguf.ts,
// llama_gguf_save.ts) can name them without importing the model class that uses them.
import type { CheckpointTensors, StreamedTensors } from '../loading/checkpoint.js';
import type { GgufEntry } from '../loading/gguf_writer.js';
import type { SafetensorsWeights } from '../loading/safetensors.js';
import type { HfTokenizer, HfTokenizerFiles } from '../tokenizers/hf_tokenizer.js';

export type LlamaModelType = 'llama' | 'qwen2' | 'qwen3' | 'mistral' | 'phi3' | 'smollm3' | 'gemma3_text' | 'gemma3';

/** A Llama-family checkpoint in memory: parsed config.json, safetensors bytes (or a GGUF file's
 * tensors, models/llama_gguf.ts), and the tokenizer (tokenizer.json with tokenizer_config.json /
 * generation_config.json, or an HfTokenizer). */
export interface LlamaFiles {
  config: Record<string, unknown>;
  weights: SafetensorsWeights | CheckpointTensors | StreamedTensors;
  tokenizer: HfTokenizerFiles | HfTokenizer;
  /** The chat template (Jinja) of a chat_template.jinja file or a GGUF file's
   * tokenizer.chat_template: it wins over tokenizer_config.json's chat_template, as in transformers. */
  chatTemplate?: string;
  /** A GGUF file's tokenizer.* key-values (and this package's), kept for model.save(). */
  ggufKeys?: ReadonlyMap<string, GgufEntry>;
}

/** rope_scaling as the core runs it ('' = none). */
export interface RopeScaling {
  type: '' | 'linear' | 'llama3' | 'longrope';
  factor: number;
  lowFreqFactor: number;
  highFreqFactor: number;
  originalMaxPositionEmbeddings: number;
  /** longrope (Phi-3): frequency i divided by shortFactor[i], or longFactor[i] once a run passes
   * originalMaxPositionEmbeddings; cos and sin times attentionFactor. */
  shortFactor: number[];
  longFactor: number[];
  attentionFactor: number;
}

/** config.json as read, with Hugging Face's defaults filled in. */
export interface LlamaConfig {
  model_type: LlamaModelType;
  vocab_size: number;
  max_position_embeddings: number;
  hidden_size: number;
  intermediate_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  num_key_value_heads: number;
  head_dim: number;
  rms_norm_eps: number;
  rope_theta: number;
  rope_scaling: RopeScaling;
  /** Biases on q_proj, k_proj and v_proj (Qwen2 always; Llama when attention_bias). */
  attention_bias: boolean;
  tie_word_embeddings: boolean;
  /** Mistral's sliding window: each position attends to the latest this-many; 0 for none. */
  sliding_window: number;
  /** Qwen3: each head's Q and K RMSNormed (self_attn.q_norm / k_norm) before the rotation. */
  qk_norm: boolean;
  /** SmolLM3: whether each layer rotates Q and K (its no_rope_layers, 1 = rotates); all true elsewhere. */
  rope_layers: boolean[];
  /** Phi-3: self_attn.qkv_proj and mlp.gate_up_proj, each one matrix as stored. */
  fused_projections: boolean;
  /** The rotated values of each head: head_dim x partial_rotary_factor (Phi-4-mini's 0.75). */
  rotary_dim: number;
  /** Gemma 3: whether each layer attends within sliding_window (its layer_types); all true
   * elsewhere when sliding_window is set. */
  window_layers: boolean[];
  /** Gemma 3: the windowed layers' rope base (rope_local_base_freq); 0 elsewhere. */
  rope_local_theta: number;
  /** The scores' scale: query_pre_attn_scalar^-1/2 (Gemma 3); 0 for 1/sqrt(head_dim). */
  attention_scale: number;
  /** Gemma: logits = cap * tanh(logits / cap); 0 for none. */
  final_logit_softcapping: number;
  /** Gemma: RMSNorm gains are 1 + weight; a norm on the attention's and the MLP's outputs
   * (post_attention_layernorm, pre_/post_feedforward_layernorm); embeddings times
   * sqrt(hidden_size); GeGLU (gelu_pytorch_tanh) for SwiGLU. */
  unit_offset_norms: boolean;
  sandwich_norms: boolean;
  scale_embeddings: boolean;
  gelu_mlp: boolean;
}
