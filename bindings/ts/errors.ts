/** Thrown for every problem the library detects: bad shapes, bad masks, NaN/Inf, sizes the
 * WebAssembly heap cannot hold, use after dispose(). The module stays usable afterwards. */
export class AttentionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AttentionError';
  }
}

/** Throws the core's message (an empty string means success). */
export function throwIfError(status: string, context: string): void {
  if (status) throw new AttentionError(`${context}: ${status}`);
}
