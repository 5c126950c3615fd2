// A model from the Hugging Face Hub: its repository as a source of model files (the registry,
// models/registry.ts, says which files config.json's model_type needs), with the model type
// checked before the weights are asked for, so an unsupported model costs one small download.
import { HubError, HubRepo } from './hub.js';
import type { HubOptions, HubPlatform } from './hub.js';
import { readModelFiles } from '../loading/model_files.js';
import { isGgufName, readGgufFiles } from '../loading/gguf_files.js';
import type { GgufFile } from '../loading/gguf.js';
import type { CheckpointFiles } from '../loading/model_files.js';
import type { LoadTasks } from '../loading/load_tasks.js';
import { MODEL_TYPES, declaredModelType, familyOfType, readerFor } from '../models/registry.js';

/** `source` is what follows "hf:": "owner/name" or "owner/name@revision". */
export async function fetchHubModelFiles(source: string, options: HubOptions, platform: HubPlatform, tasks: LoadTasks): Promise<CheckpointFiles> {
  // Its downloads stop with the load's tasks (the caller's signal, or another file's failure).
  const repo = new HubRepo(source, { ...options, signal: tasks.signal }, platform);
  return readModelFiles({
    read: (file) => repo.file(file),
    isMissing: (e) => HubRepo.isMissing(e),
    missing: (e, why) => (e instanceof HubError ? new HubError(`${e.message} (${why})`, e.code, e.url, e.status) : undefined),
    checkType(config) {
      const type = declaredModelType(config);
      if (!familyOfType(type))
        throw new HubError(`${repo.name} is a ${JSON.stringify(type ?? null)} model (config.json's model_type); this library runs ${MODEL_TYPES.join(', ')}, so its weights were not downloaded`,
          'unsupported-model', repo.url('config.json'));
    },
  }, readerFor, tasks);
}

/** One file of a Hub repository (cached like the model's files): for files a model does not need,
 * such as a demo's heads.json. */
export async function fetchHubFile(source: string, file: string, options: HubOptions, platform: HubPlatform): Promise<Uint8Array> {
  return new HubRepo(source, options, platform).file(file);
}

/** A GGUF model on the Hub: its repository ("owner/name[@revision]") and the file, or the quantization to pick. */
export interface HubGgufSource {
  repo: string;
  file?: string;
  quant?: string;
}

/** What follows "hf:" as a GGUF source: "owner/name[@revision]/path/file.gguf", or a repository with
 * { quant }; undefined for a model in Hugging Face's layout. */
export function hubGgufSource(source: string, options: HubOptions): HubGgufSource | undefined {
  const m = /^([\w.-]+\/[\w.-]+(?:@[^/]+)?)\/(.+)$/.exec(source);
  if (m && isGgufName(m[2])) return { repo: m[1], file: m[2] };
  return options.quant !== undefined ? { repo: source, quant: options.quant } : undefined;
}

/** The quantization a GGUF file's name says, as a pattern: "Q4_K_M" matches "model-Q4_K_M.gguf",
 * "model.q4_k_m.gguf" and "model-Q4_K_M-00001-of-00002.gguf", not "model-Q4_K_S.gguf". */
function quantPattern(quant: string): RegExp {
  return new RegExp(`(^|[-._])${quant.replace(/[^\w]/g, '')}([-._]|$)`, 'i');
}

/** A GGUF model's file (every shard when split) from the Hub: the one named, or the repository's
 * file of the quantization asked for. */
export async function fetchHubGguf(source: HubGgufSource, options: HubOptions, platform: HubPlatform, tasks: LoadTasks): Promise<GgufFile> {
  const repo = new HubRepo(source.repo, { ...options, signal: tasks.signal }, platform);
  let file = source.file;
  if (file === undefined) {
    const ggufs = (await repo.listFiles()).filter(isGgufName);
    const pattern = quantPattern(source.quant ?? '');
    const matches = ggufs.filter((f) => pattern.test(f.slice(f.lastIndexOf('/') + 1).replace(/\.gguf$/i, ''))).sort();
    if (matches.length === 0)
      throw new HubError(`${repo.name} has no GGUF file of quantization ${JSON.stringify(source.quant)}; its GGUF files: ${ggufs.join(', ') || 'none'}`, 'not-found');
    file = matches[0];
  }
  return readGgufFiles(file, (f) => repo.file(f), tasks);
}
