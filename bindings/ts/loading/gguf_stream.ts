// A GGUF file read as its bytes arrive: the header from the first bytes (parseGgufHeader says how
// many it needs), then each tensor's bytes in file order, handed on one tensor at a time and
// dropped once taken. A model loads from it holding the chunks of one tensor at most, never the file
// (and, when its config needs a small tensor first, the first bytes of data up to that tensor).
import { AttentionError } from '../errors.js';
import type { ByteStream } from '../runtime/platform.js';
import { stoppedReading } from '../runtime/platform.js';
import { parseGgufHeader } from './gguf.js';
import type { GgufHeader, GgufTensorInfo } from './gguf.js';

/** What a streamed read reports: bytes so far, of the file's size when known. */
export interface StreamProgress {
  loaded: number;
  total: number | undefined;
}

/** Where and how a stream is read: its name for messages, progress, a signal that stops it, and
 * whether to read past the last tensor to the file's end (its padding: a caller keeping the file). */
export interface StreamOptions {
  name: string;
  onProgress?: (p: StreamProgress) => void;
  signal?: AbortSignal;
  readToEnd?: boolean;
}

/** The arrived bytes not yet taken: chunks in order, `start` the file offset of the first's first byte. */
class ChunkQueue {
  private chunks: Uint8Array[] = [];
  private start = 0;
  private end = 0;  // file offset after the last chunk
  private done = false;
  private readonly iterator: AsyncIterator<Uint8Array>;

  constructor(private readonly stream: ByteStream, private readonly options: StreamOptions) {
    this.iterator = stream.chunks[Symbol.asyncIterator]();
  }

  /** Reads until the bytes up to `pos` have arrived; false if the file ends first. */
  async fill(pos: number): Promise<boolean> {
    while (this.end < pos && !this.done) {
      if (this.options.signal?.aborted) throw stoppedReading(this.options.name, this.options.signal);
      const { done, value } = await this.iterator.next();
      if (done) {
        this.done = true;
        break;
      }
      if (value.length === 0) continue;
      this.chunks.push(value);
      this.end += value.length;
      this.options.onProgress?.({ loaded: this.end, total: this.stream.size });
    }
    return this.end >= pos;
  }

  /** A copy of the file's bytes [pos, pos + n) (all arrived, none taken yet). */
  copy(pos: number, n: number): Uint8Array {
    const out = new Uint8Array(n);
    let at = this.start;
    for (const c of this.chunks) {
      const from = Math.max(pos, at), to = Math.min(pos + n, at + c.length);
      if (from < to) out.set(c.subarray(from - at, to - at), from - pos);
      at += c.length;
    }
    return out;
  }

  /** Drops the bytes before `pos`. */
  drop(pos: number): void {
    while (this.chunks.length > 0 && this.start + this.chunks[0].length <= pos) this.start += this.chunks.shift()!.length;
  }

  /** Ends the read (a stream stopped early releases its file or connection). */
  async close(): Promise<void> {
    this.chunks = [];
    if (!this.done) await this.iterator.return?.();
  }

  get arrived(): number {
    return this.end;
  }
}

/** A GGUF file being read: its header, and its tensors as they arrive. */
export interface GgufStream {
  header: GgufHeader;
  /** Each tensor with its bytes (a fresh array), in file order, once; the read ends with the last. */
  tensors(): AsyncGenerator<{ info: GgufTensorInfo; bytes: Uint8Array }>;
  /** A copy of one small tensor's bytes before tensors() runs (a model's config may need them:
   * Phi-3's rope factors). The bytes before it stay held for tensors(), so it must end within the
   * file's first AHEAD_LIMIT bytes of data, or a named error says so. */
  tensorAhead(name: string): Promise<Uint8Array>;
  /** Stops reading (when the caller gives up early). */
  close(): Promise<void>;
}

const FIRST_READ = 1 << 20;
/** How far into the data section tensorAhead reads (and holds): llama.cpp's converter writes the
 * tensors a config needs first, in the first kilobytes. */
export const AHEAD_LIMIT = 64 << 20;

/** Opens a GGUF stream: reads until its header parses (named errors as parseGguf's). */
export async function openGgufStream(stream: ByteStream, options: StreamOptions): Promise<GgufStream> {
  const queue = new ChunkQueue(stream, options);
  try {
    let need = FIRST_READ;
    let header: GgufHeader | undefined;
    while (!header) {
      const all = await queue.fill(need);
      const read = parseGgufHeader(queue.copy(0, Math.min(need, queue.arrived)), stream.size ?? (all ? undefined : queue.arrived));
      if (read.complete) header = read.header;
      else if (!all) throw new AttentionError(`GGUF: ${options.name} ends at byte ${queue.arrived}, inside its header (it needs ${read.bytesNeeded} bytes): truncated?`);
      else need = Math.max(read.bytesNeeded, need * 2);
    }
    const found = header;
    const order = [...found.tensors.values()].sort((a, b) => a.offset - b.offset);
    const truncatedIn = (info: GgufTensorInfo) => new AttentionError(
      `GGUF: ${options.name} ends at byte ${queue.arrived}, inside tensor "${info.name}" (bytes ${info.offset} to ${info.offset + info.byteLength}): truncated?`);
    return {
      header: found,
      async *tensors() {
        try {
          for (const info of order) {
            if (!(await queue.fill(info.offset + info.byteLength))) throw truncatedIn(info);
            const bytes = queue.copy(info.offset, info.byteLength);
            queue.drop(info.offset + info.byteLength);
            yield { info, bytes };
          }
          if (options.readToEnd) await queue.fill(Infinity);
        } finally {
          await queue.close();
        }
      },
      async tensorAhead(name: string) {
        const info = found.tensors.get(name);
        if (!info) throw new AttentionError(`GGUF: ${options.name} has no tensor "${name}"`);
        const end = info.offset + info.byteLength;
        if (end - found.dataOffset > AHEAD_LIMIT)
          throw new AttentionError(`GGUF: tensor "${name}" ends ${((end - found.dataOffset) / 2 ** 20).toFixed(0)} MiB into ${options.name}'s data, and it is needed before the weights: a streamed read holds at most the first ${AHEAD_LIMIT / 2 ** 20} MiB for it (load the file as bytes instead)`);
        if (!(await queue.fill(end))) throw truncatedIn(info);
        return queue.copy(info.offset, info.byteLength);
      },
      close: () => queue.close(),
    };
  } catch (e) {
    await queue.close();
    throw e;
  }
}
