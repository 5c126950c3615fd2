// What differs between Node and browsers, behind one interface. The shared code never imports a
// Node module: the Node entry (index_node.ts) hands it platform_node.ts, the browser entry
// (index.ts) hands it platform_browser.ts, so bundlers for browsers never see fs, path or os.
import { AttentionError } from '../errors.js';
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

export interface Platform {
  /** Bytes of a file: URL (Node only) or an http(s)/blob:/data: URL. Fails with an AttentionError. */
  readBytes(url: URL | string): Promise<ArrayBuffer | Uint8Array>;
  /** The same file read as a stream (a model loaded tensor by tensor needs no copy of the whole file). */
  openStream(url: URL | string): Promise<ByteStream>;
  /** A model folder given as a string that is not a URL: a path in Node, relative to the page in browsers. */
  folderUrl(folder: string): URL;
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
  openCache(options: { cacheDir?: string }): HubCache | null;
}

/** The answer to a GET of an http(s), blob: or data: URL, with the failure named. */
async function fetchOk(href: string): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(href);
  } catch (e) {
    throw new AttentionError(`could not fetch ${href}: ${(e as Error).message} (network error, or the server does not allow this origin)`);
  }
  if (!response.ok) throw new AttentionError(`could not fetch ${href}: HTTP ${response.status}${response.status === 404 ? ' (not found)' : ''}`);
  return response;
}

/** Bytes of an http(s), blob: or data: URL, with the failure named. */
export async function fetchBytes(href: string): Promise<ArrayBuffer> {
  return (await fetchOk(href)).arrayBuffer();
}

/** The chunks of a readable stream (a fetch body, a Blob's), released when the reader stops early. */
export async function* streamChunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** An http(s), blob: or data: URL as a stream (its size from Content-Length when not encoded). */
export async function fetchStream(href: string): Promise<ByteStream> {
  const response = await fetchOk(href);
  const length = Number(response.headers.get('content-length'));
  const encoded = (response.headers.get('content-encoding') ?? 'identity') !== 'identity';
  if (!response.body) throw new AttentionError(`could not fetch ${href}: the answer has no body`);
  return { size: !encoded && response.headers.has('content-length') && Number.isSafeInteger(length) ? length : undefined, chunks: streamChunks(response.body) };
}
