// Browsers (and bundlers building for them): everything is fetched; no Node module is imported.
import { AttentionError } from './errors.js';
import { browserCache, browserHubCache } from './hub/hub_cache_browser.js';
import { relaxedGlueUrl, threadedUrl } from './runtime/package_files.js';
import { fetchBytes, fetchStream } from './runtime/platform.js';
import type { Platform, ThreadedBuild } from './runtime/platform.js';
import type { GlueFactory } from './runtime/wasm_module.js';

const env = globalThis as { crossOriginIsolated?: boolean; navigator?: { hardwareConcurrency?: number }; document?: { baseURI: string }; location?: { href: string } };

/** An Emscripten glue file's text (a classic script that defines createAttentionModule), run for its factory. */
const classicFactory = (glue: string): GlueFactory => new Function(`${glue}\nreturn createAttentionModule;`)() as GlueFactory;

export const browserPlatform: Platform = {
  async readBytes(url, options) {
    const href = url.toString();
    if (href.startsWith('file:'))
      throw new AttentionError(`${href}: this is the browser build of attention-wasm, which fetches files; file: URLs are read by its Node build (import 'attention-wasm' in Node picks it). In a browser, serve the file over http(s) or pass its bytes`);
    return fetchBytes(href, options);
  },

  async openStream(url, options) {
    const href = url.toString();
    if (href.startsWith('file:')) await this.readBytes(href);  // (refused, with why)
    return fetchStream(href, options?.signal);
  },

  openCache: ({ name }) => browserCache(name),

  folderUrl(folder) {
    // Relative to the page (or the worker's script): what a relative fetch() would resolve to.
    return new URL(folder, env.document?.baseURI ?? env.location?.href);
  },

  relaxedByDefault: true,

  relaxedGlue: async () => classicFactory(new TextDecoder().decode(await fetchBytes(relaxedGlueUrl().href))),

  threadsAvailable: () => env.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function',

  cpuCount: () => env.navigator?.hardwareConcurrency ?? 1,

  // The glue and its worker are fetched as text and handed to the workers as blob: URLs, so no
  // server needs to know the .cjs extension and bundlers need not understand the scripts.
  async threadedBuild(): Promise<ThreadedBuild> {
    const text = async (url: URL) => new TextDecoder().decode(await fetchBytes(url.href));
    const [glue, worker, bytes] = await Promise.all([text(threadedUrl.glue()), text(threadedUrl.worker()), fetchBytes(threadedUrl.wasm().href)]);
    const blob = (code: string) => URL.createObjectURL(new Blob([code], { type: 'text/javascript' }));
    const factory = classicFactory(glue);
    const main = blob(glue), workerUrl = blob(worker);
    return { factory, bytes, worker: workerUrl, main, release: () => { URL.revokeObjectURL(main); URL.revokeObjectURL(workerUrl); } };
  },

  // No environment variables in a browser; cacheDir is Node's (the Cache API has one store).
  hub: { environment: () => ({}), openCache: ({ name }) => browserHubCache(name) },
};
