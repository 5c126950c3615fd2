// The promises one loadModel call starts (file reads, downloads, shard parses), owned by it: each
// is tracked from its start, so its rejection is always handled (never an unhandled rejection when
// the load has already failed for another reason), and when the load fails the others are
// cancelled (their signal, chained to the caller's, aborts) and awaited before loadModel rejects:
// nothing of a failed load runs on after it.
import { AttentionError } from '../errors.js';

export class LoadTasks {
  private readonly controller = new AbortController();
  private readonly running = new Set<Promise<unknown>>();
  private readonly onAbort = () => this.controller.abort(this.user!.reason);

  constructor(private readonly user: AbortSignal | undefined) {
    if (user?.aborted) this.onAbort();
    else user?.addEventListener('abort', this.onAbort);
  }

  /** Aborts when the caller's signal does, or when the load fails. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Starts `task` (its synchronous throw is a rejection too) and tracks it until it settles. The
   * promise returned is the caller's to await; its rejection is handled here as well. */
  run<T>(task: (signal: AbortSignal) => Promise<T>): Promise<T> {
    let p: Promise<T>;
    try {
      p = task(this.signal);
    } catch (e) {
      p = Promise.reject(e);
    }
    this.running.add(p);
    const done = () => { this.running.delete(p); };
    p.then(done, done);
    return p;
  }

  /** Cancels what is still running (the load failed). */
  abort(): void {
    if (!this.controller.signal.aborted) this.controller.abort(new AttentionError('loadModel: stopped because the load failed', 'aborted'));
  }

  /** Waits until every task has settled (also those started meanwhile). */
  async settle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** Drops the listener on the caller's signal. */
  close(): void {
    this.user?.removeEventListener('abort', this.onAbort);
  }
}

/** Runs a load with its tasks: on failure the tasks still running are cancelled and awaited, then
 * the load's own error is thrown; on success nothing is left running either. */
export async function withLoadTasks<T>(signal: AbortSignal | undefined, load: (tasks: LoadTasks) => Promise<T>): Promise<T> {
  const tasks = new LoadTasks(signal);
  try {
    const out = await load(tasks);
    await tasks.settle();
    return out;
  } catch (e) {
    tasks.abort();
    await tasks.settle();
    throw e;
  } finally {
    tasks.close();
  }
}
