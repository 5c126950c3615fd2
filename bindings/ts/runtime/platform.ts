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

export interface Platform {
  /** Bytes of a file: URL (Node only) or an http(s)/blob:/data: URL. Fails with an AttentionError. */
  readBytes(url: URL | string): Promise<ArrayBuffer | Uint8Array>;
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

/** Bytes of an http(s), blob: or data: URL, with the failure named. */
export async function fetchBytes(href: string): Promise<ArrayBuffer> {
  let response: Response;
  try {
    response = await fetch(href);
  } catch (e) {
    throw new AttentionError(`could not fetch ${href}: ${(e as Error).message} (network error, or the server does not allow this origin)`);
  }
  if (!response.ok) throw new AttentionError(`could not fetch ${href}: HTTP ${response.status}${response.status === 404 ? ' (not found)' : ''}`);
  return response.arrayBuffer();
}
