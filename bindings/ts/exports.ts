// The public API both entry points share (index.ts for browsers and bundlers, index_node.ts for
// Node); only loadAttention() differs between them, by the Platform it passes.
export { AttentionError } from './errors.js';
export { simdSupported, MAX_THREADS } from './loader.js';
export type { LoadOptions, Variant } from './loader.js';
export { MultiHeadAttention } from './multi_head_attention.js';
export type { ForwardOptions, ForwardResult, ForwardResultFor, MultiHeadAttentionConfig, MultiHeadAttentionWeights, MultiHeadTrace, ResolvedConfig } from './multi_head_attention.js';
export type { AttentionTrace, ScaledDotProductAttentionOptions, ScaledDotProductAttentionResult, ScaledDotProductAttentionResultFor } from './scaled_dot_product_attention.js';
export { weightsFromPyTorch } from './pytorch.js';
export { Gpt2Model, Gpt2Model as LanguageModel } from './gpt2_model.js';
export type { GenerateOptions, GenerateResult, Gpt2Config, RunOptions, RunResult, TokenEvent } from './gpt2_model.js';
export { BartModel, MAX_PRONOUNCE_WORDS, MAX_LENGTH_PENALTY } from './bart_model.js';
export type { BartConfig, Pronunciation, Seq2SeqOptions, Seq2SeqResult, Seq2SeqRunResult } from './bart_model.js';
export { arpabetToIpa } from './arpabet.js';
export { SymbolTokenizer } from './symbol_tokenizer.js';
export { MAX_BEAMS } from './decoding.js';
export type { SamplingOptions } from './decoding.js';
export { BertModel, cosineSimilarity, similarityMatrix, MAX_EMBED_BATCH, MAX_SIMILARITY_COUNT } from './bert_model.js';
export type { BertConfig, BertInput, BertRunOptions, BertRunResult, EmbedOptions, Embeddings, FillMaskResult } from './bert_model.js';
export { MODEL_TYPES } from './model_files.js';
export { SHIPPED_MODELS } from './shipped_models.js';
export type { ShippedModel } from './shipped_models.js';
export { HubError, DEFAULT_HUB_URL, DEFAULT_MAX_BYTES, hubFileUrl } from './hub.js';
export type { HubErrorCode, HubOptions, HubProgress } from './hub.js';
export { BROWSER_CACHE_NAME } from './hub_cache_browser.js';
export type { BartFiles, BertFiles, Gpt2Files, ModelFiles, ModelType, SentenceEmbeddingConfig } from './model_files.js';
export type { Prediction } from './predictions.js';
export { BpeTokenizer } from './bpe_tokenizer.js';
export type { TokenizerFiles } from './bpe_tokenizer.js';
export { WordPieceTokenizer } from './wordpiece_tokenizer.js';
export type { Encoding, WordPieceFiles } from './wordpiece_tokenizer.js';
export { parseSafetensors, parseWeights } from './safetensors.js';
export type { SafetensorsEntry, SafetensorsFile, SafetensorsWeights } from './safetensors.js';
export type { PyTorchMultiheadAttentionState } from './pytorch.js';
export type { AttnMask, BoolInput, FloatInput } from './validate.js';

export { AttentionModule } from './attention_module.js';
export type { Model } from './attention_module.js';
