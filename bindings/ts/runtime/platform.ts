// What differs between Node and browsers, behind one interface. The shared code never imports a
// Node module: the Node entry (index_node.ts) hands it platform_node.ts, the browser entry
// (index.ts) hands it platform_browser.ts, so bundlers for browsers never see fs, path or os.
import { AttentionError } from '../errors.js';
import { ByteSink } from './byte_sink.js';
import type { GlueFactory } from './wasm_module.js';

/** The pthreads build, ready to instantiate: its glue's factory, its .wasm bytes and where its
 * worker script is (and, in browsers, the glue itself as a blob: URL for the workers). */
export interface ThreadedBuild {
  factory: GlueFactory;
  bytes: ArrayBuffer | Uint8Array;
  worker: string;
  main?: string;
  /** Called once the pool's workers have started (browsers revoke the blob: URLs). */
  release(): void;
}

/** A file's bytes as they arrive: its size when known, and its chunks in order. */
export interface ByteStream {
  size: number | undefined;
  chunks: AsyncIterable<Uint8Array>;
}

/** How a file is read: a signal that stops it (the request cancelled, the file closed; an
 * AttentionError with code 'aborted', or 'timeout' for AbortSignal.timeout()), and its progress
 * as bytes arrive (total: the file's size when known). */
export interface ReadOptions {
  signal?: AbortSignal;
  onProgress?: (loaded: number, total: number | undefined) => void;
}

export interface Platform {
  /** Bytes of a file: URL (Node only) or an http(s)/blob:/data: URL. Fails with an AttentionError. */
  readBytes(url: URL | string, options?: ReadOptions): Promise<ArrayBuffer | Uint8Array>;
  /** The same file read as a stream (a model loaded tensor by tensor needs no copy of the whole file). */
  openStream(url: URL | string, options?: { signal?: AbortSignal }): Promise<ByteStream>;
  /** A cache of files by URL (browsers: the Cache API; Node: a folder), or null where there is none:
   * `name` picks a cache of its own (a Cache API name; in Node a folder under cacheDir). */
  openCache(options: CacheOptions): FileCache | null;
  /** A model folder given as a string that is not a URL: a path in Node, relative to the page in browsers. */
  folderUrl(folder: string): URL;
  /** Whether loadAttention's 'auto' may pick the relaxed-SIMD build where the engine validates it.
   * Browsers: yes (Chromium checked by the tests). Node: no: the relaxed dot product may compute
   * differently per engine outside the range the kernels use, and no Node here runs relaxed SIMD
   * without a flag to check them on ({ simd: 'relaxed' } still forces it). */
  relaxedByDefault: boolean;
  /** The relaxed-SIMD build's glue (attention_relaxed.cjs beside the package's scripts). */
  relaxedGlue(): Promise<GlueFactory>;
  /** Whether the threaded build can run here (shared memory and workers). */
  threadsAvailable(): boolean;
  /** Logical CPU cores. */
  cpuCount(): number;
  /** Loads the pthreads build's files. */
  threadedBuild(): Promise<ThreadedBuild>;
  /** Models from the Hugging Face Hub: the environment's defaults and the download cache. */
  hub: HubPlatform;
}

/** What a cache keeps per file: its bytes, or that the Hub has no such file. */
export type HubCacheEntry = { bytes: Uint8Array; etag?: string } | { missing: true };

/** Where a file's cache entry lives: the Hub's address, the model, the revision, the file. */
export interface HubCacheKey {
  hubUrl: string;
  id: string;
  revision: string;
  file: string;
}

/** Which cache: Node's folder (default $XDG_CACHE_HOME/attention-wasm) and a name of one's own. */
export interface CacheOptions {
  cacheDir?: string;
  name?: string;
}

/** Files cached by their URL (a folder's or a shipped model's files fetched over http(s)), with
 * the Hub cache's rules: only whole files are put, an entry counts only at its recorded size. */
export interface FileCache {
  readonly location: string;
  get(url: string): Promise<HubCacheEntry | undefined>;
  put(url: string, entry: HubCacheEntry): Promise<void>;
}

/** The download cache a Platform provides (hub/hub_cache_node.ts, hub/hub_cache_browser.ts). Entries are
 * written only for complete files, so a partial download is never read back. */
export interface HubCache {
  /** Where the cache is (shown in messages and the README). */
  readonly location: string;
  get(key: HubCacheKey): Promise<HubCacheEntry | undefined>;
  put(key: HubCacheKey, entry: HubCacheEntry): Promise<void>;
}

/** The defaults a platform reads from its environment (Node: HF_ENDPOINT, HF_TOKEN). */
export interface HubEnvironment {
  hubUrl?: string;
  accessToken?: string;
}

/** The platform's part: its environment's defaults and its cache. */
export interface HubPlatform {
  environment(): HubEnvironment;
  openCache(options: CacheOptions): HubCache | null;
}

/** The error for a read the signal stopped: code 'timeout' when AbortSignal.timeout() fired. */
export function stoppedReading(what: string, signal: AbortSignal): AttentionError {
  const reason = signal.reason as { name?: unknown } | null | undefined;
  return typeof reason === 'object' && reason !== null && reason.name === 'TimeoutError'
    ? new AttentionError(`loadModel: reading ${what} stopped: the signal passed to loadModel timed out (AbortSignal.timeout)`, 'timeout')
    : new AttentionError(`loadModel: reading ${what} was aborted (the signal passed to loadModel)`, 'aborted');
}

/** The answer to a GET of an http(s), blob: or data: URL, with the failure named. */
async function fetchOk(href: string, signal?: AbortSignal): Promise<Response> {
  if (signal?.aborted) throw stoppedReading(href, signal);
  let response: Response;
  try {
    response = await fetch(href, signal ? { signal } : undefined);
  } catch (e) {
    if (signal?.aborted) throw stoppedReading(href, signal);
    throw new AttentionError(`could not fetch ${href}: ${(e as Error).message} (network error, or the server does not allow this origin)`);
  }
  if (!response.ok) {
    await drain(response);
    throw new AttentionError(`could not fetch ${href}: HTTP ${response.status}${response.status === 404 ? ' (not found)' : ''}`);
  }
  return response;
}

/** Reads an error answer's body (a short page) to its end, so that the request completes: left
 * unread, the load's signal aborting it afterwards would show it as a failed request in a
 * browser's network log. A body past 64 kB is cancelled instead. */
async function drain(response: Response): Promise<void> {
  const reader = response.body?.getReader();
  if (!reader) return;
  try {
    for (let read = 0; read <= 65536;) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.length;
    }
    await reader.cancel();
  } catch {
    // (the status is the error; the body does not matter)
  }
}

/** The size an answer announces, unless it is compressed (Content-Length is then the packed size). */
export function announcedSize(response: Response): number | undefined {
  const length = Number(response.headers.get('content-length'));
  const encoded = (response.headers.get('content-encoding') ?? 'identity') !== 'identity';
  return !encoded && response.headers.has('content-length') && Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

/** Bytes of an http(s), blob: or data: URL, with the failure named; read chunk by chunk (progress,
 * and the signal cancels the transfer) into a buffer that grows with what arrives. */
export async function fetchBytes(href: string, options: ReadOptions = {}): Promise<Uint8Array> {
  const { signal, onProgress } = options;
  const response = await fetchOk(href, signal);
  if (!response.body) return new Uint8Array(await response.arrayBuffer());
  const total = announcedSize(response);
  const sink = new ByteSink(total);
  const cut = await readChunks(response.body, (chunk) => {
    sink.append(chunk);
    onProgress?.(sink.length, total);
  });
  if (cut !== null) {
    if (signal?.aborted) throw stoppedReading(href, signal);
    throw new AttentionError(`could not fetch ${href}: the transfer failed after ${sink.length} bytes (${(cut as Error).message})`);
  }
  if (total !== undefined && sink.length !== total)
    throw new AttentionError(`could not fetch ${href}: ${sink.length} of the ${total} bytes announced arrived (cut off)`);
  return sink.bytes();
}

/** Hands a body's chunks to `take` as they arrive. Returns the error that broke the transfer (the
 * caller names it, or resumes), or null at the body's end; a throw from `take` (a limit, a
 * callback's error) stops the transfer at once and propagates. */
export async function readChunks(body: ReadableStream<Uint8Array>, take: (chunk: Uint8Array) => void): Promise<unknown> {
  const reader = body.getReader();
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (e) {
        return e;
      }
      if (chunk.done) return null;
      take(chunk.value);
    }
  } catch (e) {
    await reader.cancel().catch(() => {});
    throw e;
  }
}

/** The chunks of a readable stream (a fetch body, a Blob's), released when the reader stops early. */
export async function* streamChunks(body: ReadableStream<Uint8Array>, named?: (e: unknown) => Error): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      let read: ReadableStreamReadResult<Uint8Array>;
      try {
        read = await reader.read();
      } catch (e) {
        throw named ? named(e) : e;
      }
      const { done, value } = read;
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** An http(s), blob: or data: URL as a stream (its size from Content-Length when not encoded); the
 * signal cancels the transfer. */
export async function fetchStream(href: string, signal?: AbortSignal): Promise<ByteStream> {
  const response = await fetchOk(href, signal);
  if (!response.body) throw new AttentionError(`could not fetch ${href}: the answer has no body`);
  return { size: announcedSize(response), chunks: streamChunks(response.body, (e) => {
    if (signal?.aborted) return stoppedReading(href, signal);
    return new AttentionError(`could not fetch ${href}: the transfer failed (${(e as Error).message})`);
  }) };
}
