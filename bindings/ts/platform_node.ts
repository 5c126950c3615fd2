// Node: files are read from disk, the pthreads build is required by path. Only the Node entries
// (dist/index.node.js, dist/index.cjs) include this file, so browser bundles never see fs or os.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
// A namespace import: availableParallelism exists from Node 18.14 only (a named import would fail to link).
import * as os from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AttentionError } from './errors.js';
import { nodeHubCache, nodeHubEnvironment } from './hub/hub_cache_node.js';
import { threadedUrl } from './runtime/package_files.js';
import { fetchBytes } from './runtime/platform.js';
import type { Platform, ThreadedBuild } from './runtime/platform.js';
import type { GlueFactory } from './runtime/wasm_module.js';

/** A file's bytes, with Node's error codes turned into named errors. */
async function readFileBytes(file: string): Promise<Uint8Array> {
  try {
    return await readFile(file);
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ENOENT') throw new AttentionError(`file not found: ${file}`);
    if (code === 'EISDIR') throw new AttentionError(`${file} is a folder, not a file`);
    throw new AttentionError(`could not read ${file}: ${code ?? (e as Error).message}`);
  }
}

export const nodePlatform: Platform = {
  async readBytes(url) {
    const href = url.toString();
    return href.startsWith('file:') ? readFileBytes(fileURLToPath(href)) : fetchBytes(href);
  },

  folderUrl: (folder) => pathToFileURL(resolve(folder) + '/'),

  // Node always has worker_threads and shared memory.
  threadsAvailable: () => true,

  cpuCount: () => (typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length),

  async threadedBuild(): Promise<ThreadedBuild> {
    const factory = createRequire(import.meta.url)(fileURLToPath(threadedUrl.glue())) as GlueFactory;
    return { factory, bytes: await readFileBytes(fileURLToPath(threadedUrl.wasm())), worker: fileURLToPath(threadedUrl.worker()), release: () => {} };
  },

  hub: { environment: nodeHubEnvironment, openCache: ({ cacheDir }) => nodeHubCache(cacheDir) },
};
