// Browsers' Hub cache: the Cache API (caches.open('attention-wasm-models')), keyed by the file's
// Hub address ({hubUrl}/{id}/resolve/{revision}/{file}). Entries are whole files we put ourselves
// once every byte has arrived, with their size in a header checked on the way out, so a partial
// download is never stored. Where there is no Cache API (an insecure http: page), nothing is cached.
import { hubFileUrl } from './hub.js';
import type { HubCache, HubCacheEntry, HubCacheKey } from './hub.js';

export const BROWSER_CACHE_NAME = 'attention-wasm-models';

interface CacheStorageLike {
  open(name: string): Promise<Cache>;
}

export function browserHubCache(): HubCache | null {
  const storage = (globalThis as { caches?: CacheStorageLike }).caches;
  if (!storage) return null;
  let opened: Promise<Cache> | null = null;
  const cache = () => (opened ??= storage.open(BROWSER_CACHE_NAME));
  const url = (key: HubCacheKey) => hubFileUrl(key.hubUrl, key.id, key.revision, key.file);
  return {
    location: `Cache API "${BROWSER_CACHE_NAME}"`,
    async get(key): Promise<HubCacheEntry | undefined> {
      const response = await (await cache()).match(url(key));
      if (!response) return undefined;
      if (response.headers.get('x-attention-missing') === '1') return { missing: true };
      const size = Number(response.headers.get('x-attention-size'));
      const bytes = new Uint8Array(await response.arrayBuffer());
      return bytes.length === size ? { bytes, etag: response.headers.get('x-attention-etag') ?? undefined } : undefined;
    },
    async put(key, entry) {
      const headers: Record<string, string> = 'missing' in entry
        ? { 'x-attention-missing': '1' }
        : { 'x-attention-size': String(entry.bytes.length), 'content-type': 'application/octet-stream' };
      if (!('missing' in entry) && entry.etag) headers['x-attention-etag'] = entry.etag;
      await (await cache()).put(url(key), new Response('missing' in entry ? null : entry.bytes as BodyInit, { headers }));
    },
  };
}
