// Node's caches: the Hub's, one folder per Hub address, model and revision, holding each file as the
// Hub names it; other URLs' files (a folder or shipped model fetched over http(s)) under
// ~url/<host>/<hash of the URL>-<file name>. Beside each file, <file>.meta.json (its size and ETag,
// or that the Hub has no such file). A named cache is the folder caches/<name> of the cache folder.
// A file is written to a temporary name and renamed into place, and an entry counts only when its
// size matches its metadata, so an interrupted write is never read back as a model file.
// Only the Node entry (platform_node.ts) imports this file.
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { HubCache, HubCacheEntry, HubCacheKey, HubEnvironment } from './hub.js';
import type { FileCache } from '../runtime/platform.js';

interface Meta {
  size?: number;
  etag?: string;
  missing?: boolean;
}

const env = (): Record<string, string | undefined> => (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};

/** $XDG_CACHE_HOME/attention-wasm, else ~/.cache/attention-wasm. */
export function defaultCacheDir(): string {
  return join(env().XDG_CACHE_HOME || join(os.homedir(), '.cache'), 'attention-wasm');
}

/** HF_ENDPOINT and HF_TOKEN, as huggingface_hub reads them. */
export function nodeHubEnvironment(): HubEnvironment {
  const e = env();
  return { hubUrl: e.HF_ENDPOINT || undefined, accessToken: e.HF_TOKEN || undefined };
}

let unique = 0;

/** The folder of a cache: the cache folder, or its caches/<name> (names are checked by CACHE_NAME). */
function cacheFolder(cacheDir: string = defaultCacheDir(), name?: string): string {
  return name === undefined ? cacheDir : join(cacheDir, 'caches', name);
}

/** An entry's file and its metadata, by path. */
function entryStore(): { get(path: string): Promise<HubCacheEntry | undefined>; put(path: string, entry: HubCacheEntry): Promise<void> } {
  const writeAtomically = async (path: string, data: Uint8Array | string) => {
    const temp = `${path}.tmp-${(globalThis as { process?: { pid: number } }).process?.pid ?? 0}-${unique++}`;
    try {
      await writeFile(temp, data);
      await rename(temp, path);
    } catch (e) {
      await rm(temp, { force: true }).catch(() => {});
      throw e;
    }
  };
  return {
    async get(path): Promise<HubCacheEntry | undefined> {
      let meta: Meta;
      try {
        meta = JSON.parse(new TextDecoder().decode(await readFile(`${path}.meta.json`)));
      } catch {
        return undefined;
      }
      if (meta.missing) return { missing: true };
      try {
        if ((await stat(path)).size !== meta.size) return undefined;
        const bytes = await readFile(path);
        return bytes.length === meta.size ? { bytes, etag: meta.etag } : undefined;
      } catch {
        return undefined;
      }
    },
    async put(path, entry) {
      await mkdir(dirname(path), { recursive: true });
      if ('missing' in entry) {
        await rm(path, { force: true });
        await writeAtomically(`${path}.meta.json`, JSON.stringify({ missing: true }));
        return;
      }
      // The bytes first, then the metadata that makes them count.
      await writeAtomically(path, entry.bytes);
      await writeAtomically(`${path}.meta.json`, JSON.stringify({ size: entry.bytes.length, etag: entry.etag } satisfies Meta));
    },
  };
}

export function nodeHubCache(cacheDir?: string, name?: string): HubCache {
  const location = cacheFolder(cacheDir, name);
  // hubUrl "http://127.0.0.1:8080" -> "127.0.0.1_8080" (no ':' in folder names, for Windows).
  const where = (key: HubCacheKey) => join(location, new URL(key.hubUrl).host.replace(/:/g, '_'), ...key.id.split('/'),
    encodeURIComponent(key.revision), ...key.file.split('/'));
  const store = entryStore();
  return { location, get: (key) => store.get(where(key)), put: (key, entry) => store.put(where(key), entry) };
}

/** Files by URL: ~url/<host>/<sha-256 of the URL, 32 hex digits>-<the file's name>, so that no URL
 * (a query, an encoded '..') can name a path outside the folder. */
export function nodeUrlCache(cacheDir?: string, name?: string): FileCache {
  const location = cacheFolder(cacheDir, name);
  const where = (href: string) => {
    const url = new URL(href);
    const base = url.pathname.slice(url.pathname.lastIndexOf('/') + 1).replace(/[^\w.-]/g, '_').slice(-100);
    return join(location, '~url', url.host.replace(/[^\w.-]/g, '_'), `${createHash('sha256').update(url.href).digest('hex').slice(0, 32)}-${base}`);
  };
  const store = entryStore();
  return { location, get: (url) => store.get(where(url)), put: (url, entry) => store.put(where(url), entry) };
}
