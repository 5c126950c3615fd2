// Finding a model's files: a folder (URL, or a path in Node) laid out as on the Hugging Face Hub,
// read into memory. config.json's model_type says which model class and which tokenizer files.
import { BpeTokenizer } from './bpe_tokenizer.js';
import type { TokenizerFiles } from './bpe_tokenizer.js';
import { AttentionError } from './errors.js';
import type { Platform } from './platform.js';
import type { SymbolTokenizer } from './symbol_tokenizer.js';
import { WordPieceTokenizer } from './wordpiece_tokenizer.js';
import type { WordPieceFiles } from './wordpiece_tokenizer.js';

/** The model families this library runs, by config.json's model_type. */
export type ModelType = 'gpt2' | 'bert' | 'bart';
export const MODEL_TYPES: readonly ModelType[] = ['gpt2', 'bert', 'bart'];

/** A GPT-2 checkpoint in memory: parsed config.json, safetensors bytes, tokenizer files. */
export interface Gpt2Files {
  config: Record<string, unknown>;
  weights: ArrayBuffer | Uint8Array;
  tokenizer: TokenizerFiles | BpeTokenizer;
}

/** How sentence-transformers turns a BERT's hidden states into one vector per sentence. */
export interface SentenceEmbeddingConfig {
  pooling?: 'mean' | 'cls';
  normalize?: boolean;
  /** Longer inputs are truncated to this many tokens (sentence_bert_config.json's max_seq_length). */
  maxSeqLength?: number;
}

/** A BERT checkpoint in memory. tokenizer: vocab.txt's text (+ options), a tokenizer.json object,
 * or a WordPieceTokenizer. */
export interface BertFiles {
  config: Record<string, unknown>;
  weights: ArrayBuffer | Uint8Array;
  tokenizer: WordPieceFiles | WordPieceTokenizer | Record<string, unknown>;
  sentenceEmbedding?: SentenceEmbeddingConfig;
}

/** A BART checkpoint in memory. tokenizer: vocab.json (symbols: the shipped spelling-to-sound
 * model), with merges.txt for byte-level BPE (Hugging Face's BART checkpoints), or a tokenizer. */
export interface BartFiles {
  config: Record<string, unknown>;
  weights: ArrayBuffer | Uint8Array;
  tokenizer: { vocab: Record<string, number>; merges?: string } | SymbolTokenizer | BpeTokenizer;
}

export type ModelFiles = Gpt2Files | BertFiles | BartFiles;

/** config.json's model_type (GPT-2 configs without one are recognized by n_embd). */
export function modelType(config: unknown): ModelType {
  if (typeof config !== 'object' || config === null) throw new AttentionError('config.json: not an object');
  const c = config as Record<string, unknown>;
  const type = c.model_type ?? ('n_embd' in c ? 'gpt2' : undefined);
  if (typeof type !== 'string' || !(MODEL_TYPES as readonly string[]).includes(type))
    throw new AttentionError(`config.json: model_type ${JSON.stringify(type)} is not supported (this library runs: ${MODEL_TYPES.join(', ')})`);
  return type as ModelType;
}

/** A folder URL or path -> URL of a file in it. Node: plain strings are file paths. */
function resolveIn(platform: Platform, base: string | URL, file: string): URL {
  let baseUrl: URL;
  if (base instanceof URL) baseUrl = base;
  else if (/^[a-z][a-z0-9+.-]*:/i.test(base)) baseUrl = new URL(base);
  else baseUrl = platform.folderUrl(base);
  if (!baseUrl.pathname.endsWith('/')) baseUrl = new URL(baseUrl.href + '/');
  return new URL(file, baseUrl);
}

function parseJson(name: string, content: string): Record<string, unknown> {
  try {
    return JSON.parse(content);
  } catch (e) {
    throw new AttentionError(`${name} is not valid JSON: ${(e as Error).message}`);
  }
}

/** Reads the files of a folder laid out as on the Hugging Face Hub. */
export async function fetchModelFiles(folder: string | URL, platform: Platform): Promise<ModelFiles> {
  const readBytes = (url: URL) => platform.readBytes(url);
  const text = async (url: URL) => new TextDecoder().decode(await readBytes(url));
  const at = async (f: string) => resolveIn(platform, folder, f);
  const readJson = async (f: string) => parseJson(f, await at(f).then(text));
  const optionalJson = (f: string) => readJson(f).catch(() => undefined);
  const config = await readJson('config.json');
  const type = modelType(config);
  const weights = at('model.safetensors').then(readBytes);
  if (type === 'bert') {
    const [bytes, vocab, tokenizerConfig, modules, pooling, sbert] = await Promise.all([
      weights, at('vocab.txt').then(text).catch(() => undefined), optionalJson('tokenizer_config.json'),
      optionalJson('modules.json'), optionalJson('1_Pooling/config.json'), optionalJson('sentence_bert_config.json'),
    ]);
    const tokenizer = vocab !== undefined
      ? { vocab, doLowerCase: tokenizerConfig?.do_lower_case as boolean | undefined, stripAccents: tokenizerConfig?.strip_accents as boolean | null | undefined,
        tokenizeChineseChars: tokenizerConfig?.tokenize_chinese_chars as boolean | undefined }
      : await readJson('tokenizer.json');
    return { config, weights: bytes, tokenizer, sentenceEmbedding: sentenceTransformersConfig(modules, pooling, sbert) };
  }
  if (type === 'bart') {
    const [bytes, vocab, merges] = await Promise.all([weights, readJson('vocab.json'), at('merges.txt').then(text).catch(() => undefined)]);
    return { config, weights: bytes, tokenizer: { vocab: vocab as Record<string, number>, merges } };
  }
  // GPT-2: vocab.json + merges.txt (its own files); tokenizer.json only when those cannot be read.
  const [bytes, files] = await Promise.all([weights,
    Promise.all([at('vocab.json').then(text), at('merges.txt').then(text)]).catch(() => null)]);
  const tokenizer = files
    ? { vocab: parseJson('vocab.json', files[0]) as Record<string, number>, merges: files[1] }
    : BpeTokenizer.fromTokenizerJson(await readJson('tokenizer.json'));
  return { config, weights: bytes, tokenizer };
}

/** sentence-transformers' folder: modules.json lists Pooling (1_Pooling/config.json) and Normalize. */
function sentenceTransformersConfig(modules?: Record<string, unknown>, pooling?: Record<string, unknown>,
  sbert?: Record<string, unknown>): SentenceEmbeddingConfig | undefined {
  if (!modules && !pooling && !sbert) return undefined;
  const out: SentenceEmbeddingConfig = {};
  if (pooling?.pooling_mode_cls_token === true) out.pooling = 'cls';
  else if (pooling?.pooling_mode_mean_tokens === true) out.pooling = 'mean';
  if (Array.isArray(modules)) out.normalize = modules.some((m) => typeof m?.type === 'string' && m.type.endsWith('.Normalize'));
  if (typeof sbert?.max_seq_length === 'number') out.maxSeqLength = sbert.max_seq_length;
  return out;
}
