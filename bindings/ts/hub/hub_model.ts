// A model from the Hugging Face Hub: its repository as a source of model files (the registry,
// models/registry.ts, says which files config.json's model_type needs), with the model type
// checked before the weights are asked for, so an unsupported model costs one small download.
import { HubError, HubRepo } from './hub.js';
import type { HubOptions, HubPlatform } from './hub.js';
import { readModelFiles } from '../loading/model_files.js';
import type { CheckpointFiles } from '../loading/model_files.js';
import { MODEL_TYPES, declaredModelType, familyOfType, readerFor } from '../models/registry.js';

/** `source` is what follows "hf:": "owner/name" or "owner/name@revision". */
export async function fetchHubModelFiles(source: string, options: HubOptions, platform: HubPlatform): Promise<CheckpointFiles> {
  const repo = new HubRepo(source, options, platform);
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
  }, readerFor);
}

/** One file of a Hub repository (cached like the model's files): for files a model does not need,
 * such as a demo's heads.json. */
export async function fetchHubFile(source: string, file: string, options: HubOptions, platform: HubPlatform): Promise<Uint8Array> {
  return new HubRepo(source, options, platform).file(file);
}
