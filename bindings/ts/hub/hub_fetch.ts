// The parts of a Hub download that do not depend on the Hub: a watch that stops a request when the
// caller aborts or when no byte has come for a while, a buffer that grows with the bytes received
// (never sized from a Content-Length a server may lie about), and which fetch failures mean the
// connection was closed before any answer (a kept-alive connection the server had dropped).

/** Why a watch stopped its request. */
export type StopReason = 'aborted' | 'timeout';

/**
 * The caller's AbortSignal and an idle timer as one signal for fetch() and the body's reads:
 * touch() on every byte restarts the timer; after `idleMs` without one, or when the caller aborts,
 * the signal fires and stopped() says why. stop() when done (clears the timer, drops the listener).
 */
export class Watch {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private why: StopReason | null = null;
  private readonly onAbort = () => this.fire(stopReason(this.user!));

  constructor(private readonly user: AbortSignal | undefined, private readonly idleMs: number) {
    if (user?.aborted) this.onAbort();
    else user?.addEventListener('abort', this.onAbort);
    this.touch();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Why the request was stopped, or null while it may go on. */
  stopped(): StopReason | null {
    return this.why;
  }

  touch(): void {
    if (this.why) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.fire('timeout'), this.idleMs);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.user?.removeEventListener('abort', this.onAbort);
  }

  private fire(why: StopReason): void {
    if (this.why) return;
    this.why = why;
    this.stop();
    this.controller.abort();
  }
}

/** Why an aborted signal stopped the work: AbortSignal.timeout() aborts with a DOMException
 * named TimeoutError, anything else is the caller's abort(). */
export function stopReason(signal: AbortSignal): StopReason {
  return timeoutReason(signal.reason) ? 'timeout' : 'aborted';
}

function timeoutReason(reason: unknown): boolean {
  return typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'TimeoutError';
}

// Node's fetch (undici) names a connection the server closed before answering; browsers retry
// such a request themselves and give no code.
const CLOSED_CODES = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'UND_ERR_CLOSED']);

/** Whether fetch() failed because the connection closed before any answer came. */
export function closedBeforeAnswer(e: unknown): boolean {
  const cause = (e as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' && CLOSED_CODES.has(cause.code);
}

/** fetch()'s error in a few words: the cause's code (Node) or its message. */
export function fetchFailure(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (e as Error).message;
}

// (ByteSink, the buffer a download grows in, is the runtime's: platform.ts's fetches use it too.)
export { ByteSink } from '../runtime/byte_sink.js';
