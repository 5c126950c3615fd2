// Node: files are read from disk, the pthreads build is required by path. Only the Node entries
// (dist/index.node.js, dist/index.cjs) include this file, so browser bundles never see fs or os.
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
// A namespace import: availableParallelism exists from Node 18.14 only (a named import would fail to link).
import * as os from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AttentionError } from './errors.js';
import { nodeHubCache, nodeHubEnvironment } from './hub/hub_cache_node.js';
import { threadedUrl } from './runtime/package_files.js';
import { fetchBytes, fetchStream } from './runtime/platform.js';
import type { ByteStream, Platform, ThreadedBuild } from './runtime/platform.js';
import type { GlueFactory } from './runtime/wasm_module.js';

/** A file's bytes, with Node's error codes turned into named errors. */
async function readFileBytes(file: string): Promise<Uint8Array> {
  try {
    return await readFile(file);
  } catch (e) {
    throw fileError(file, e);
  }
}

function fileError(file: string, e: unknown): AttentionError {
  const code = (e as { code?: string }).code;
  if (code === 'ENOENT') return new AttentionError(`file not found: ${file}`);
  if (code === 'EISDIR') return new AttentionError(`${file} is a folder, not a file`);
  return new AttentionError(`could not read ${file}: ${code ?? (e as Error).message}`);
}

/** A file on disk as a stream of 4 MiB chunks. */
async function fileStream(file: string): Promise<ByteStream> {
  let size: number;
  try {
    const info = await stat(file);
    if (info.isDirectory()) throw Object.assign(new Error('EISDIR'), { code: 'EISDIR' });
    size = info.size;
  } catch (e) {
    throw fileError(file, e);
  }
  async function* chunks(): AsyncGenerator<Uint8Array> {
    const stream = createReadStream(file, { highWaterMark: 4 << 20 });
    try {
      for await (const chunk of stream) yield chunk as Uint8Array;
    } catch (e) {
      throw fileError(file, e);
    } finally {
      stream.destroy();
    }
  }
  return { size, chunks: chunks() };
}

export const nodePlatform: Platform = {
  async readBytes(url) {
    const href = url.toString();
    return href.startsWith('file:') ? readFileBytes(fileURLToPath(href)) : fetchBytes(href);
  },

  async openStream(url) {
    const href = url.toString();
    return href.startsWith('file:') ? fileStream(fileURLToPath(href)) : fetchStream(href);
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
