// Finding a model's files: a folder (URL, or a path in Node) laid out as on the Hugging Face Hub,
// read into memory. config.json's model_type says which model class and which tokenizer files.
import { BpeTokenizer } from './bpe_tokenizer.js';
import type { TokenizerFiles } from './bpe_tokenizer.js';
import { AttentionError } from './errors.js';
import { checkRepoPath } from './hub.js';
import type { Platform } from './platform.js';
import type { SafetensorsWeights } from './safetensors.js';
import type { SymbolTokenizer } from './symbol_tokenizer.js';
import { WordPieceTokenizer } from './wordpiece_tokenizer.js';
import type { WordPieceFiles } from './wordpiece_tokenizer.js';

/** The model families this library runs, by config.json's model_type. */
export type ModelType = 'gpt2' | 'bert' | 'bart';
export const MODEL_TYPES: readonly ModelType[] = ['gpt2', 'bert', 'bart'];

/** A GPT-2 checkpoint in memory: parsed config.json, safetensors bytes, tokenizer files. */
export interface Gpt2Files {
  config: Record<string, unknown>;
  weights: SafetensorsWeights;
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
  weights: SafetensorsWeights;
  tokenizer: WordPieceFiles | WordPieceTokenizer | Record<string, unknown>;
  sentenceEmbedding?: SentenceEmbeddingConfig;
}

/** A BART checkpoint in memory. tokenizer: vocab.json (symbols: the shipped spelling-to-sound
 * model), with merges.txt for byte-level BPE (Hugging Face's BART checkpoints), or a tokenizer. */
export interface BartFiles {
  config: Record<string, unknown>;
  weights: SafetensorsWeights;
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

/** Where a model's files come from: a folder (URL or path) or a Hub repository (hub.ts). */
export interface ModelFileSource {
  /** A file's bytes, or a rejection (AttentionError). */
  read(file: string): Promise<ArrayBuffer | Uint8Array>;
  /** Whether read()'s error means "no such file": optional files are skipped then, other errors
   * (a refused token, a cut connection) are not. */
  isMissing(e: unknown): boolean;
  /** Called with config.json's model_type before any other file is asked for; throws to stop. */
  checkType?(config: Record<string, unknown>): void;
}

/** Reads the files of a folder laid out as on the Hugging Face Hub. */
export async function fetchModelFiles(folder: string | URL, platform: Platform): Promise<ModelFiles> {
  // Any failure of an optional file counts as its absence (a static server's 404, a missing path).
  return readModelFiles({ read: (f) => platform.readBytes(resolveIn(platform, folder, f)), isMissing: () => true });
}

/** The files config.json's model_type needs, with the weights in one file or in shards. */
export async function readModelFiles(source: ModelFileSource): Promise<ModelFiles> {
  const text = async (f: string) => new TextDecoder().decode(await source.read(f));
  const readJson = async (f: string) => parseJson(f, await text(f));
  const optional = <T>(p: Promise<T>) => p.catch((e) => { if (source.isMissing(e)) return undefined; throw e; });
  const optionalJson = (f: string) => optional(readJson(f));
  const config = await readJson('config.json');
  source.checkType?.(config);
  const type = modelType(config);
  const weights = readWeights(source, readJson);
  // Settled by the Promise.all below, or failing with a tokenizer first: never unhandled.
  weights.catch(() => {});
  if (type === 'bert') {
    const [bytes, vocab, tokenizerConfig, modules, pooling, sbert] = await Promise.all([
      weights, optional(text('vocab.txt')), optionalJson('tokenizer_config.json'),
      optionalJson('modules.json'), optionalJson('1_Pooling/config.json'), optionalJson('sentence_bert_config.json'),
    ]);
    const tokenizer = vocab !== undefined
      ? { vocab, doLowerCase: tokenizerConfig?.do_lower_case as boolean | undefined, stripAccents: tokenizerConfig?.strip_accents as boolean | null | undefined,
        tokenizeChineseChars: tokenizerConfig?.tokenize_chinese_chars as boolean | undefined }
      : await readJson('tokenizer.json');
    return { config, weights: bytes, tokenizer, sentenceEmbedding: sentenceTransformersConfig(modules, pooling, sbert) };
  }
  if (type === 'bart') {
    const [bytes, vocab, merges] = await Promise.all([weights, readJson('vocab.json'), optional(text('merges.txt'))]);
    return { config, weights: bytes, tokenizer: { vocab: vocab as Record<string, number>, merges } };
  }
  // GPT-2: vocab.json + merges.txt (its own files); tokenizer.json only when those are missing.
  const [bytes, files] = await Promise.all([weights,
    Promise.all([text('vocab.json'), text('merges.txt')]).catch((e) => { if (source.isMissing(e)) return null; throw e; })]);
  const tokenizer = files
    ? { vocab: parseJson('vocab.json', files[0]) as Record<string, number>, merges: files[1] }
    : BpeTokenizer.fromTokenizerJson(await readJson('tokenizer.json'));
  return { config, weights: bytes, tokenizer };
}

/** model.safetensors, or when there is none, the shards model.safetensors.index.json's weight_map
 * names (each file once, in the order first named). */
async function readWeights(source: ModelFileSource, readJson: (f: string) => Promise<Record<string, unknown>>): Promise<SafetensorsWeights> {
  try {
    return await source.read('model.safetensors');
  } catch (e) {
    if (!source.isMissing(e)) throw e;
    let index: Record<string, unknown>;
    try {
      index = await readJson('model.safetensors.index.json');
    } catch (e2) {
      if (!source.isMissing(e2)) throw e2;
      // The first error names model.safetensors, the file one expects.
      throw e;
    }
    const map = index.weight_map;
    if (typeof map !== 'object' || map === null || Array.isArray(map) || !Object.values(map).every((v) => typeof v === 'string'))
      throw new AttentionError('model.safetensors.index.json: weight_map must be an object of tensor name -> shard file name');
    const shards = [...new Set(Object.values(map as Record<string, string>))];
    if (shards.length === 0) throw new AttentionError('model.safetensors.index.json: weight_map names no shard');
    return Promise.all(shards.map((f) => source.read(checkRepoPath(f))));
  }
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
