// The models that ship in the package, loaded by name: `import brownGpt2 from
// 'attention-wasm/models/brown-gpt2'` gives a ShippedModel, and `loadModel(brownGpt2)` reads its
// files. Each model's module (written by scripts/model_modules.mjs) names every file with one
// literal `new URL('./file', import.meta.url)`, so Vite, webpack and esbuild emit the files and
// rewrite the URLs, and Node reads them from the package folder: nothing to copy by hand.
import { AttentionError } from '../errors.js';
import { show } from '../validate.js';
import { fetchFile } from './file_fetch.js';
import type { FetchContext } from './file_fetch.js';
import type { LoadTasks } from './load_tasks.js';
import { readModelFiles } from './model_files.js';
import type { CheckpointFiles, ReaderFor } from './model_files.js';

/** A model shipped in the package: its name, its type (its family: which class loadModel returns)
 * and the URL of each file it has. */
export interface ShippedModel<T extends string = string> {
  readonly name: string;
  readonly type: T;
  /** File name (as in a Hub folder: 'config.json', 'model.safetensors', ...) -> where it is. */
  readonly files: Readonly<Record<string, URL | string>>;
}

/** The shipped models' names (each `attention-wasm/models/<name>`). */
export const SHIPPED_MODELS = ['brown-gpt2', 'brown-bert', 'g2p-bart', 'brown-llama'] as const;

export function isShippedModel(value: unknown): value is ShippedModel {
  try {
    return typeof value === 'object' && value !== null && !(value instanceof URL) && 'files' in value && 'name' in value
      && typeof (value as ShippedModel).name === 'string' && typeof (value as ShippedModel).files === 'object';
  } catch {
    return false;  // a Proxy or getter that throws: not a shipped model (filesInMemory names it)
  }
}

// The files a model's folder does not have: readModelFiles skips them when optional.
class NotShipped extends AttentionError {}

/** Reads a shipped model's files, each from its own URL (a bundler may have renamed it), with the
 * load's progress, signal and cache. */
export function fetchShippedModelFiles(model: ShippedModel, ctx: FetchContext, readerFor: ReaderFor, tasks: LoadTasks): Promise<CheckpointFiles> {
  return readModelFiles({
    read: (file) => {
      let url: URL | string | undefined;
      try {
        url = Object.prototype.hasOwnProperty.call(model.files, file) ? model.files[file] : undefined;
      } catch (e) {
        return Promise.reject(new AttentionError(`loadModel: the shipped model's files could not be read: ${show((e as Error)?.message ?? e)}`));
      }
      if (url === undefined) return Promise.reject(new NotShipped(`loadModel: the shipped model ${model.name} has no ${file}`));
      return fetchFile(ctx, url, file, String(url));
    },
    isMissing: (e) => e instanceof NotShipped,
    where: (file) => String(model.files[file] ?? `${model.name}/${file}`),
  }, readerFor, tasks);
}
