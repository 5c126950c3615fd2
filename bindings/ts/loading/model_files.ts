// Reading a model's files from where they are: a folder (URL, or a path in Node) laid out as on the
// Hugging Face Hub, the package's shipped models, or a Hub repository (hub/hub_model.ts). Which
// files a model needs is its family's business (models/registry.ts): readModelFiles reads
// config.json, asks the given readerFor which family's reader to use, and reads the weights (one
// file or shards) meanwhile. Every read is one of the load's tasks (load_tasks.ts): when one fails,
// the others are cancelled and awaited before the load rejects.
import { AttentionError } from '../errors.js';
import { checkModelFile, checkRepoPath, InvalidModelFile } from './model_file_check.js';
import type { Platform } from '../runtime/platform.js';
import { show } from '../validate.js';
import { fetchFile } from './file_fetch.js';
import type { FetchContext } from './file_fetch.js';
import type { LoadTasks } from './load_tasks.js';
import type { SafetensorsWeights } from './safetensors.js';
import { checkWeightMap } from './shard_index.js';
import type { CheckpointTensors, StreamedTensors } from './checkpoint.js';

/** A model's files in memory: parsed config.json, safetensors bytes and the tokenizer (each
 * family's own shape: models/registry.ts's ModelFiles). */
export interface CheckpointFiles {
  config: Record<string, unknown>;
  weights: SafetensorsWeights | CheckpointTensors | StreamedTensors;
  tokenizer: unknown;
  sentenceEmbedding?: unknown;
}

/** A model's files given in memory, read once into a plain object: a getter or Proxy that throws
 * is a named error, and nothing is read from the caller's object again. */
export function filesInMemory(source: object): CheckpointFiles {
  try {
    const { config, weights, tokenizer, sentenceEmbedding } = source as CheckpointFiles;
    return { config, weights, tokenizer, sentenceEmbedding };
  } catch (e) {
    throw new AttentionError(`loadModel: the model's files could not be read: ${show((e as Error)?.message ?? e)}`);
  }
}

/** A folder URL or path -> URL of a file in it. Node: plain strings are file paths. */
export function resolveIn(platform: Platform, base: string | URL, file: string): URL {
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

/** Where a model's files come from: a folder (URL or path), the package or a Hub repository. */
export interface ModelFileSource {
  /** A file's bytes, or a rejection (AttentionError). */
  read(file: string): Promise<ArrayBuffer | Uint8Array>;
  /** Whether read()'s error means "no such file": optional files are skipped then, other errors
   * (a refused token, a cut connection) are not. */
  isMissing(e: unknown): boolean;
  /** Called with config.json before any other file is asked for; throws to stop. */
  checkType?(config: Record<string, unknown>): void;
  /** The file's full URL or path, as messages name it (default: the file's name). */
  where?(file: string): string;
  /** The error for a missing file with why it was needed (default: an AttentionError with read()'s
   * message and the reason; the Hub keeps its HubError's code). */
  missing?(e: unknown, why: string): Error | undefined;
}

/** What a family's reader reads its files with: each file checked (checkModelFile) before use,
 * so its error names its URL or path. */
export interface ModelFileReader {
  bytes(file: string): Promise<Uint8Array>;
  text(file: string): Promise<string>;
  json(file: string): Promise<Record<string, unknown>>;
  /** The promise's value, or undefined when it failed because the file is missing. */
  optional<T>(p: Promise<T>): Promise<T | undefined>;
  isMissing(e: unknown): boolean;
  /** The error for a missing file, with why it was needed. */
  missing(e: unknown, why: string): Error;
}

/** A family's reading of its files beside config.json; `weights` are being read meanwhile. */
export type FilesReader = (files: ModelFileReader, config: Record<string, unknown>, weights: Promise<SafetensorsWeights>) => Promise<CheckpointFiles>;

/** The reader for a config.json's model type (throws, naming it, for one no family runs). */
export type ReaderFor = (config: Record<string, unknown>) => FilesReader;

/** Whether a read failed because the load was stopped (its signal), not because of the file. */
export function isStopped(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'aborted' || code === 'timeout';
}

/** Reads the files of a folder laid out as on the Hugging Face Hub. */
export async function fetchModelFiles(folder: string | URL, ctx: FetchContext, readerFor: ReaderFor, tasks: LoadTasks): Promise<CheckpointFiles> {
  const at = (f: string) => resolveIn(ctx.platform, folder, f);
  // A failure to read an optional file counts as its absence (a static server's 404, a missing
  // path, a bundler's index.html in its place); a file that is there but wrong does not, nor a
  // read the signal stopped.
  return readModelFiles({
    read: (f) => fetchFile(ctx, at(f), f, display(at(f))),
    isMissing: (e) => (!(e instanceof InvalidModelFile) || e.html) && !isStopped(e),
    where: (f) => display(at(f)),
  }, readerFor, tasks);
}

/** config.json, then the files its family's reader asks for, with the weights in one file or in shards. */
export async function readModelFiles(source: ModelFileSource, readerFor: ReaderFor, tasks: LoadTasks): Promise<CheckpointFiles> {
  const where = (f: string) => source.where?.(f) ?? f;
  // Each file's read and check is a task of the load: never left running, never unhandled.
  const bytes = (f: string) => tasks.run(async () => {
    const read = await source.read(f);
    const view = read instanceof Uint8Array ? read : new Uint8Array(read);
    checkModelFile(f, view, where(f));
    return view;
  });
  const json = (f: string) => tasks.run(async () => {
    const read = await source.read(f);
    return checkModelFile(f, read instanceof Uint8Array ? read : new Uint8Array(read), where(f)) as Record<string, unknown>;
  });
  const files: ModelFileReader = {
    bytes, json,
    text: async (f) => new TextDecoder().decode(await bytes(f)),
    optional: (p) => p.catch((e) => { if (source.isMissing(e)) return undefined; throw e; }),
    isMissing: (e) => source.isMissing(e),
    missing: (e, why) => source.missing?.(e, why) ?? new AttentionError(`${(e as Error).message} (${why})`),
  };
  const config = await json('config.json');
  source.checkType?.(config);
  const reader = readerFor(config);
  const weights = tasks.run(() => readWeights(bytes, source.isMissing, json));
  return reader(files, config, weights);
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
    // Every name checked before any shard is asked for.
    const shards = [...new Set(Object.values(map as Record<string, string>))].map((f) => {
      try {
        return checkRepoPath(f);
      } catch (e) {
        throw new AttentionError(`model.safetensors.index.json: weight_map: ${(e as Error).message}`);
      }
    });
    if (shards.length === 0) throw new AttentionError('model.safetensors.index.json: weight_map names no shard');
    const bytes = await Promise.all(shards.map((f) => read(f)));
    checkWeightMap(map as Record<string, string>, shards, bytes);
    return bytes;
  }
}
