/** Thrown for every problem the library detects: bad shapes, bad masks, NaN/Inf, sizes the
 * WebAssembly heap cannot hold, use after dispose(). The module stays usable afterwards. */
export class AttentionError extends Error {
  /** Set for a problem a caller may handle apart from the rest: 'aborted' when the caller's
   * AbortSignal (or a dispose()) stopped the work. HubError adds its own codes. */
  readonly code?: string;
  constructor(message: string, code?: string) {
    super(message);
    this.name = 'AttentionError';
    if (code !== undefined) this.code = code;
  }
}

/** Throws the core's message (an empty string means success). */
export function throwIfError(status: string, context: string): void {
  if (status) throw new AttentionError(`${context}: ${status}`);
}
