// A buffer for a file's bytes as they arrive (a Hub download, a fetched model file).

/**
 * A file's bytes as they arrive, in a buffer that doubles when full, up to `limit` (the size the
 * server announced, when it did): memory follows what was received, and the buffer ends the size
 * of the file, with no second copy, when the announcement was true.
 */
export class ByteSink {
  private buffer = new Uint8Array(0);
  length = 0;

  constructor(private readonly limit = Infinity) {}

  append(chunk: Uint8Array): void {
    const need = this.length + chunk.length;
    if (need > this.buffer.length) {
      const grown = new Uint8Array(Math.max(need, Math.min(this.limit, Math.max(2 * this.buffer.length, 64 * 1024))));
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    this.buffer.set(chunk, this.length);
    this.length = need;
  }

  /** The bytes received (the buffer itself when it is exactly full). */
  bytes(): Uint8Array {
    return this.length === this.buffer.length ? this.buffer : this.buffer.slice(0, this.length);
  }
}
