// What differs between Node and browsers, behind one interface. The shared code never imports a
// Node module: the Node entry (index_node.ts) hands it platform_node.ts, the browser entry
// (index.ts) hands it platform_browser.ts, so bundlers for browsers never see fs, path or os.
import { AttentionError } from '../errors.js';
import type { HubPlatform } from '../hub/hub.js';
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
