// One file of a folder, URL or shipped model, read as the Hub's files are: progress as its bytes
// arrive ({ file, loaded, total, done }), the load's signal (the request or the file read stops),
// and with `cache` its http(s) files kept in the platform's cache by URL under the Hub cache's
// rules: only a whole file that passed its checks is stored, and an entry is used only at its
// recorded size and after passing them again (one stored by an older version is read anew).
import { checkModelFile } from './model_file_check.js';
import type { FileCache, Platform } from '../runtime/platform.js';
import { stoppedReading } from '../runtime/platform.js';

/** One progress report: `loaded` of `total` bytes of `file` (total undefined when the server does
 * not say, e.g. a compressed answer); `done` once the file is complete; `cached` when it came from
 * the cache. */
export interface LoadProgress {
  file: string;
  loaded: number;
  total: number | undefined;
  done: boolean;
  cached?: boolean;
}

/** What every file of one load shares. */
export interface FetchContext {
  platform: Platform;
  signal: AbortSignal;
  onProgress?: (progress: LoadProgress) => void;
  /** null: nothing cached. */
  cache: FileCache | null;
  /** Set once a failed cache write was reported (once per load). */
  cacheWarned?: boolean;
}

/** The cache for a load's `cache` option (true: the default store; a string: that one). */
export function openFileCache(platform: Platform, cache: boolean | string | undefined, cacheDir: string | undefined): FileCache | null {
  if (cache === undefined || cache === false) return null;
  return platform.openCache({ cacheDir, name: typeof cache === 'string' ? cache : undefined });
}

const valid = (file: string, bytes: Uint8Array, where: string): boolean => {
  try {
    checkModelFile(file, bytes, where);
    return true;
  } catch {
    return false;
  }
};

/** `file`'s bytes from `url` (`where`: how messages name it): from the cache, else read. */
export async function fetchFile(ctx: FetchContext, url: URL | string, file: string, where: string): Promise<Uint8Array> {
  if (ctx.signal.aborted) throw stoppedReading(where, ctx.signal);
  const href = url.toString();
  // Files on disk, blob: and data: URLs are at hand already.
  const cache = /^https?:/i.test(href) ? ctx.cache : null;
  const hit = await cache?.get(href).catch(() => undefined);
  if (hit && !('missing' in hit) && valid(file, hit.bytes, where)) {
    ctx.onProgress?.({ file, loaded: hit.bytes.length, total: hit.bytes.length, done: true, cached: true });
    return hit.bytes;
  }
  const onProgress = ctx.onProgress && ((loaded: number, total: number | undefined) => ctx.onProgress!({ file, loaded, total, done: false }));
  const read = await ctx.platform.readBytes(url, { signal: ctx.signal, onProgress });
  const bytes = read instanceof Uint8Array ? read : new Uint8Array(read);
  if (cache) {
    checkModelFile(file, bytes, where);  // (a bad answer is never stored)
    await storeFile(ctx, cache, href, bytes);
  }
  ctx.onProgress?.({ file, loaded: bytes.length, total: bytes.length, done: true });
  return bytes;
}

/** Puts a whole, checked file in the cache; a full disk or a quota is said once and the load goes on. */
export async function storeFile(ctx: FetchContext, cache: FileCache, href: string, bytes: Uint8Array): Promise<void> {
  try {
    await cache.put(href, { bytes });
  } catch (e) {
    if (!ctx.cacheWarned) console.warn(`attention-wasm: could not write the cache (${cache.location}): ${(e as Error).message}`);
    ctx.cacheWarned = true;
  }
}
