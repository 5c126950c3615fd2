// Finding a model's files: a folder (URL, or a path in Node) laid out as on the Hugging Face Hub,
// read into memory. config.json's model_type says which model class and which tokenizer files.
import { BpeTokenizer } from '../tokenizers/bpe_tokenizer.js';
import type { TokenizerFiles } from '../tokenizers/bpe_tokenizer.js';
import { AttentionError } from '../errors.js';
import { checkRepoPath, HubError } from '../hub/hub.js';
import { checkModelFile, InvalidModelFile } from './model_file_check.js';
import type { Platform } from '../runtime/platform.js';
import { show } from '../validate.js';
import type { SafetensorsWeights } from './safetensors.js';
import type { SymbolTokenizer } from '../tokenizers/symbol_tokenizer.js';
import type { LlamaFiles, LlamaModelType } from '../models/llama_model.js';
import { WordPieceTokenizer } from '../tokenizers/wordpiece_tokenizer.js';
import type { WordPieceFiles } from '../tokenizers/wordpiece_tokenizer.js';

/** The model families this library runs, by config.json's model_type. */
export type ModelType = 'gpt2' | 'bert' | 'bart' | LlamaModelType;
export const MODEL_TYPES: readonly ModelType[] = ['gpt2', 'bert', 'bart', 'llama', 'qwen2', 'mistral'];
/** The model types LlamaModel loads. */
export const LLAMA_TYPES: readonly string[] = ['llama', 'qwen2', 'mistral'];

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

export type ModelFiles = Gpt2Files | BertFiles | BartFiles | LlamaFiles;

/** A model's files given in memory, read once into a plain object: a getter or Proxy that throws
 * is a named error, and nothing is read from the caller's object again. */
export function filesInMemory(source: object): ModelFiles {
  try {
    const { config, weights, tokenizer, sentenceEmbedding } = source as BertFiles;
    return { config, weights, tokenizer, sentenceEmbedding } as ModelFiles;
  } catch (e) {
    throw new AttentionError(`loadModel: the model's files could not be read: ${show((e as Error)?.message ?? e)}`);
  }
}

/** config.json's model_type (GPT-2 configs without one are recognized by n_embd). */
export function modelType(config: unknown): ModelType {
  if (typeof config !== 'object' || config === null) throw new AttentionError('config.json: not an object');
  const c = config as Record<string, unknown>;
  let type: unknown;
  try {
    type = c.model_type ?? ('n_embd' in c ? 'gpt2' : undefined);
  } catch (e) {
    throw new AttentionError(`config.json: model_type could not be read: ${show((e as Error)?.message ?? e)}`);
  }
  if (typeof type !== 'string' || !(MODEL_TYPES as readonly string[]).includes(type))
    throw new AttentionError(`config.json: model_type ${show(type)} is not supported (this library runs: ${MODEL_TYPES.join(', ')})`);
  return type as ModelType;
}

/** A folder URL or path -> URL of a file in it. Node: plain strings are file paths. */
function resolveIn(platform: Platform, base: string | URL, file: string): URL {
  try {
    let baseUrl: URL;
    if (base instanceof URL) baseUrl = base;
    else if (/^[a-z][a-z0-9+.-]*:/i.test(base)) baseUrl = new URL(base);
    else baseUrl = platform.folderUrl(base);
    if (!baseUrl.pathname.endsWith('/')) baseUrl = new URL(baseUrl.href + '/');
    return new URL(file, baseUrl);
  } catch (e) {
    // A URL no file can be resolved against (data:, a malformed one): URL's TypeError, named.
    throw new AttentionError(`loadModel: ${show(String(base))} is not a folder's URL or path (${(e as Error).message})`);
  }
}

/** A file's URL as messages show it: a path for a file on disk. */
function display(url: URL): string {
  return url.protocol === 'file:' ? decodeURIComponent(url.pathname) : url.href;
}

/** The error for a file that is missing, with why it was needed; keeps a HubError's code. */
function missingError(e: unknown, why: string): AttentionError {
  const message = `${(e as Error).message} (${why})`;
  return e instanceof HubError ? new HubError(message, e.code, e.url, e.status) : new AttentionError(message);
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
  /** The file's full URL or path, as messages name it (default: the file's name). */
  where?(file: string): string;
}

/** Reads the files of a folder laid out as on the Hugging Face Hub. */
export async function fetchModelFiles(folder: string | URL, platform: Platform): Promise<ModelFiles> {
  // A failure to read an optional file counts as its absence (a static server's 404, a missing
  // path, a bundler's index.html in its place); a file that is there but wrong does not.
  return readModelFiles({
    read: (f) => platform.readBytes(resolveIn(platform, folder, f)),
    isMissing: (e) => !(e instanceof InvalidModelFile) || e.html,
    where: (f) => display(resolveIn(platform, folder, f)),
  });
}

/** The files config.json's model_type needs, with the weights in one file or in shards. */
export async function readModelFiles(source: ModelFileSource): Promise<ModelFiles> {
  const where = (f: string) => source.where?.(f) ?? f;
  // Every file is checked (checkModelFile) before use, so its error names its URL or path.
  const bytes = async (f: string) => {
    const read = await source.read(f);
    const view = read instanceof Uint8Array ? read : new Uint8Array(read);
    checkModelFile(f, view, where(f));
    return view;
  };
  const text = async (f: string) => new TextDecoder().decode(await bytes(f));
  const readJson = async (f: string) => {
    const read = await source.read(f);
    return checkModelFile(f, read instanceof Uint8Array ? read : new Uint8Array(read), where(f)) as Record<string, unknown>;
  };
  const optional = <T>(p: Promise<T>) => p.catch((e) => { if (source.isMissing(e)) return undefined; throw e; });
  const optionalJson = (f: string) => optional(readJson(f));
  const config = await readJson('config.json');
  source.checkType?.(config);
  const type = modelType(config);
  const weights = readWeights(bytes, source.isMissing, readJson);
  // Settled by the Promise.all below, or failing with a tokenizer first: never unhandled.
  weights.catch(() => {});
  if (type === 'bert') {
    const [weightBytes, vocab, tokenizerConfig, modules, pooling, sbert] = await Promise.all([
      weights, optional(text('vocab.txt')), optionalJson('tokenizer_config.json'),
      optionalJson('modules.json'), optionalJson('1_Pooling/config.json'), optionalJson('sentence_bert_config.json'),
    ]);
    const tokenizer = vocab !== undefined
      ? { vocab, doLowerCase: tokenizerConfig?.do_lower_case as boolean | undefined, stripAccents: tokenizerConfig?.strip_accents as boolean | null | undefined,
        tokenizeChineseChars: tokenizerConfig?.tokenize_chinese_chars as boolean | undefined }
      : await readJson('tokenizer.json').catch((e) => {
        throw source.isMissing(e) ? missingError(e, 'a BERT needs vocab.txt or tokenizer.json; neither was found') : e;
      });
    return { config, weights: weightBytes, tokenizer, sentenceEmbedding: sentenceTransformersConfig(modules, pooling, sbert) };
  }
  if (LLAMA_TYPES.includes(type)) {
    // tokenizer.json, with the BOS/EOS of tokenizer_config.json and generation_config.json.
    const [weightBytes, tokenizer, tokenizerConfig, generation] = await Promise.all([
      weights, readJson('tokenizer.json'), optionalJson('tokenizer_config.json'), optionalJson('generation_config.json')]);
    return { config, weights: weightBytes, tokenizer: { tokenizer, config: tokenizerConfig, generation } };
  }
  if (type === 'bart') {
    const [weightBytes, vocab, merges] = await Promise.all([weights, readJson('vocab.json'), optional(text('merges.txt'))]);
    return { config, weights: weightBytes, tokenizer: { vocab: vocab as Record<string, number>, merges } };
  }
  // GPT-2: vocab.json + merges.txt (its own files); tokenizer.json only when those are missing.
  const failed = (e: unknown) => ({ failed: e });
  const [weightBytes, vocab, merges] = await Promise.all([weights, readJson('vocab.json').catch(failed), text('merges.txt').catch(failed)]);
  for (const part of [vocab, merges]) if (typeof part === 'object' && 'failed' in part && !source.isMissing(part.failed)) throw part.failed;
  if (typeof merges === 'string' && !('failed' in vocab)) return { config, weights: weightBytes, tokenizer: { vocab: vocab as Record<string, number>, merges } };
  const tokenizerJson = await readJson('tokenizer.json').catch((e) => {
    if (!source.isMissing(e)) throw e;
    // Name the file that is missing: merges.txt beside a vocab.json, else the tokenizer as a whole.
    if (!('failed' in vocab)) throw missingError((merges as { failed: unknown }).failed, "GPT-2's byte-level BPE needs merges.txt beside vocab.json, or a tokenizer.json");
    throw missingError(e, 'a GPT-2 needs vocab.json + merges.txt or tokenizer.json; none was found');
  });
  return { config, weights: weightBytes, tokenizer: BpeTokenizer.fromTokenizerJson(tokenizerJson) };
}

/** model.safetensors, or when there is none, the shards model.safetensors.index.json's weight_map
 * names (each file once, in the order first named). */
async function readWeights(read: (f: string) => Promise<Uint8Array>, isMissing: (e: unknown) => boolean,
  readJson: (f: string) => Promise<Record<string, unknown>>): Promise<SafetensorsWeights> {
  try {
    return await read('model.safetensors');
  } catch (e) {
    if (!isMissing(e)) throw e;
    let index: Record<string, unknown>;
    try {
      index = await readJson('model.safetensors.index.json');
    } catch (e2) {
      if (!isMissing(e2)) throw e2;
      // The first error names model.safetensors, the file one expects.
      throw e;
    }
    const map = index.weight_map;
    if (typeof map !== 'object' || map === null || Array.isArray(map) || !Object.values(map).every((v) => typeof v === 'string'))
      throw new AttentionError('model.safetensors.index.json: weight_map must be an object of tensor name -> shard file name');
    const shards = [...new Set(Object.values(map as Record<string, string>))];
    if (shards.length === 0) throw new AttentionError('model.safetensors.index.json: weight_map names no shard');
    return Promise.all(shards.map((f) => read(checkRepoPath(f))));
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
