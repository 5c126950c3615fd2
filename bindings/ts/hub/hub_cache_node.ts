// Node's Hub cache: one folder per Hub address, model and revision, holding each file as the Hub
// names it, and beside it <file>.meta.json (its size and ETag, or that the Hub has no such file).
// A file is written to a temporary name and renamed into place, and an entry counts only when its
// size matches its metadata, so an interrupted write is never read back as a model file.
// Only the Node entry (platform_node.ts) imports this file.
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import { dirname, join } from 'node:path';
import type { HubCache, HubCacheEntry, HubCacheKey, HubEnvironment } from './hub.js';

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

export function nodeHubCache(cacheDir: string = defaultCacheDir()): HubCache {
  // hubUrl "http://127.0.0.1:8080" -> "127.0.0.1_8080" (no ':' in folder names, for Windows).
  const where = (key: HubCacheKey) => join(cacheDir, new URL(key.hubUrl).host.replace(/:/g, '_'), ...key.id.split('/'),
    encodeURIComponent(key.revision), ...key.file.split('/'));
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
    location: cacheDir,
    async get(key): Promise<HubCacheEntry | undefined> {
      const path = where(key);
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
    async put(key, entry) {
      const path = where(key);
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
