// A GGUF file read as a stream (tensor by tensor into the model) through the load's cache: a valid
// entry is streamed from the cache; otherwise the file is read from its URL with a copy of its
// chunks kept, and keep() stores the whole file once the model has loaded (so with a cache the
// file is held twice while it loads; without one, only one tensor at a time).
import { isGgufBytes } from './gguf_files.js';
import { storeFile } from './file_fetch.js';
import type { FetchContext } from './file_fetch.js';
import type { ByteStream } from '../runtime/platform.js';

export async function openCachedStream(ctx: FetchContext, url: URL, file: string): Promise<{ stream: ByteStream; keep?: () => Promise<void> }> {
  const cache = /^https?:$/i.test(url.protocol) ? ctx.cache : null;
  const hit = await cache?.get(url.href).catch(() => undefined);
  // (The GGUF header and tensors are checked as the stream is parsed, as for any file.)
  if (hit && !('missing' in hit) && isGgufBytes(hit.bytes)) {
    const bytes = hit.bytes;
    ctx.onProgress?.({ file, loaded: bytes.length, total: bytes.length, done: true, cached: true });
    return { stream: { size: bytes.length, chunks: (async function* () { yield bytes; })() } };
  }
  const stream = await ctx.platform.openStream(url, { signal: ctx.signal });
  if (!cache) return { stream };
  const kept: Uint8Array[] = [];
  let length = 0;
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for await (const chunk of stream.chunks) {
      kept.push(chunk);
      length += chunk.length;
      yield chunk;
    }
  }
  return {
    stream: { size: stream.size, chunks: chunks() },
    async keep() {
      // Only a whole file is stored.
      if (stream.size !== undefined && length !== stream.size) return;
      const whole = new Uint8Array(length);
      let at = 0;
      for (const c of kept) {
        whole.set(c, at);
        at += c.length;
      }
      kept.length = 0;
      await storeFile(ctx, cache, url.href, whole);
    },
  };
}
