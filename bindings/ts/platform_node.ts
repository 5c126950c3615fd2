// Node: files are read from disk, the pthreads build is required by path. Only the Node entries
// (dist/index.node.js, dist/index.cjs) include this file, so browser bundles never see fs or os.
import * as fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
// A namespace import: availableParallelism exists from Node 18.14 only (a named import would fail to link).
import * as os from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AttentionError } from './errors.js';
import { nodeHubCache, nodeHubEnvironment, nodeUrlCache } from './hub/hub_cache_node.js';
import { relaxedGlueUrl, threadedUrl } from './runtime/package_files.js';
import { fetchBytes, fetchStream, stoppedReading } from './runtime/platform.js';
import type { ByteStream, Platform, ReadOptions, ThreadedBuild } from './runtime/platform.js';
import type { GlueFactory } from './runtime/wasm_module.js';

/** Read this much at a time: progress and the signal are looked at between reads. */
const CHUNK = 4 << 20;

function fileError(file: string, e: unknown): AttentionError {
  if (e instanceof AttentionError) return e;
  const code = (e as { code?: string }).code;
  if (code === 'ENOENT') return new AttentionError(`file not found: ${file}`);
  if (code === 'EISDIR') return new AttentionError(`${file} is a folder, not a file`);
  return new AttentionError(`could not read ${file}: ${code ?? (e as Error).message}`);
}

/** A file opened for reading (a folder refused), with its size. (fs.promises through its namespace:
 * the read goes through whatever fs.promises.open is at call time.) */
async function openFile(file: string, signal: AbortSignal | undefined): Promise<{ handle: fsp.FileHandle; size: number }> {
  if (signal?.aborted) throw stoppedReading(file, signal);
  let handle: fsp.FileHandle | undefined;
  try {
    handle = await fsp.open(file, 'r');
    const info = await handle.stat();
    if (info.isDirectory()) throw Object.assign(new Error('EISDIR'), { code: 'EISDIR' });
    return { handle, size: info.size };
  } catch (e) {
    await handle?.close().catch(() => {});
    throw fileError(file, e);
  }
}

/** Reads `length` bytes at `position` into `into`; the signal is checked first. */
async function readChunk(file: string, handle: fsp.FileHandle, into: Uint8Array, position: number, signal: AbortSignal | undefined): Promise<number> {
  if (signal?.aborted) throw stoppedReading(file, signal);
  try {
    return (await handle.read(into, 0, into.length, position)).bytesRead;
  } catch (e) {
    throw fileError(file, e);
  }
}

/** A file's bytes, read in chunks (progress, and the signal stops the read between two). */
async function readFileBytes(file: string, options: ReadOptions = {}): Promise<Uint8Array> {
  const { handle, size } = await openFile(file, options.signal);
  try {
    const out = new Uint8Array(size);
    let at = 0;
    while (at < size) {
      const n = await readChunk(file, handle, out.subarray(at, Math.min(size, at + CHUNK)), at, options.signal);
      if (n === 0) break;  // (the file shrank meanwhile)
      at += n;
      options.onProgress?.(at, size);
    }
    return at === size ? out : out.slice(0, at);
  } finally {
    await handle.close().catch(() => {});
  }
}

/** A file on disk as a stream of 4 MiB chunks; the file is opened when the first chunk is asked
 * for and closed when the reader stops (or the signal aborts the read). */
async function fileStream(file: string, signal: AbortSignal | undefined): Promise<ByteStream> {
  if (signal?.aborted) throw stoppedReading(file, signal);
  let size: number;
  try {
    const info = await fsp.stat(file);
    if (info.isDirectory()) throw Object.assign(new Error('EISDIR'), { code: 'EISDIR' });
    size = info.size;
  } catch (e) {
    throw fileError(file, e);
  }
  async function* chunks(): AsyncGenerator<Uint8Array> {
    const { handle } = await openFile(file, signal);
    try {
      for (let at = 0; ;) {
        const chunk = new Uint8Array(CHUNK);
        const n = await readChunk(file, handle, chunk, at, signal);
        if (n === 0) return;
        at += n;
        yield n === CHUNK ? chunk : chunk.slice(0, n);
      }
    } finally {
      await handle.close().catch(() => {});
    }
  }
  return { size, chunks: chunks() };
}

export const nodePlatform: Platform = {
  async readBytes(url, options) {
    const href = url.toString();
    return href.startsWith('file:') ? readFileBytes(fileURLToPath(href), options) : fetchBytes(href, options);
  },

  async openStream(url, options) {
    const href = url.toString();
    return href.startsWith('file:') ? fileStream(fileURLToPath(href), options?.signal) : fetchStream(href, options?.signal);
  },

  openCache: ({ cacheDir, name }) => nodeUrlCache(cacheDir, name),

  folderUrl: (folder) => pathToFileURL(resolve(folder) + '/'),

  relaxedByDefault: false,

  relaxedGlue: async () => createRequire(import.meta.url)(fileURLToPath(relaxedGlueUrl())) as GlueFactory,

  // Node always has worker_threads and shared memory.
  threadsAvailable: () => true,

  cpuCount: () => (typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length),

  async threadedBuild(): Promise<ThreadedBuild> {
    const factory = createRequire(import.meta.url)(fileURLToPath(threadedUrl.glue())) as GlueFactory;
    return { factory, bytes: await readFileBytes(fileURLToPath(threadedUrl.wasm())), worker: fileURLToPath(threadedUrl.worker()), release: () => {} };
  },

  hub: { environment: nodeHubEnvironment, openCache: ({ cacheDir, name }) => nodeHubCache(cacheDir, name) },
};
