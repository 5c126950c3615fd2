// Browsers' caches: the Cache API (caches.open('attention-wasm-models'), or the name given), keyed by
// the file's URL (a Hub file's download address {hubUrl}/{id}/resolve/{revision}/{file}). Entries are
// whole files we put ourselves once every byte has arrived, with their size in a header checked on
// the way out, so a partial download is never stored. Where there is no Cache API (an insecure
// http: page), nothing is cached.
import { hubFileUrl } from './hub.js';
import type { HubCache, HubCacheEntry } from './hub.js';
import type { FileCache } from '../runtime/platform.js';

export const BROWSER_CACHE_NAME = 'attention-wasm-models';

interface CacheStorageLike {
  open(name: string): Promise<Cache>;
}

/** Files by URL in the Cache API store `name`. */
export function browserCache(name: string = BROWSER_CACHE_NAME): FileCache | null {
  const storage = (globalThis as { caches?: CacheStorageLike }).caches;
  if (!storage) return null;
  let opened: Promise<Cache> | null = null;
  const cache = () => (opened ??= storage.open(name));
  return {
    location: `Cache API "${name}"`,
    async get(url): Promise<HubCacheEntry | undefined> {
      const response = await (await cache()).match(url);
      if (!response) return undefined;
      if (response.headers.get('x-attention-missing') === '1') return { missing: true };
      const size = Number(response.headers.get('x-attention-size'));
      const bytes = new Uint8Array(await response.arrayBuffer());
      return bytes.length === size ? { bytes, etag: response.headers.get('x-attention-etag') ?? undefined } : undefined;
    },
    async put(url, entry) {
      const headers: Record<string, string> = 'missing' in entry
        ? { 'x-attention-missing': '1' }
        : { 'x-attention-size': String(entry.bytes.length), 'content-type': 'application/octet-stream' };
      if (!('missing' in entry) && entry.etag) headers['x-attention-etag'] = entry.etag;
      await (await cache()).put(url, new Response('missing' in entry ? null : entry.bytes as BodyInit, { headers }));
    },
  };
}

/** The Hub's files in the same store, by their download address. */
export function browserHubCache(name?: string): HubCache | null {
  const files = browserCache(name);
  if (!files) return null;
  return {
    location: files.location,
    get: (key) => files.get(hubFileUrl(key.hubUrl, key.id, key.revision, key.file)),
    put: (key, entry) => files.put(hubFileUrl(key.hubUrl, key.id, key.revision, key.file), entry),
  };
}
