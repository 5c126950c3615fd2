// What every WASM-backed object of the API shares: its embind handle and staging block, an
// explicit dispose(), errors on use after dispose, and a finalizer as a safety net.
import { AttentionError } from '../errors.js';
import { Staging } from './heap.js';
import type { WasmModule } from './wasm_module.js';

interface Deletable { delete(): void }

const finalizer = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry<{ handle: Deletable; staging: Staging }>((held) => {
    held.staging.dispose();
    held.handle.delete();
  })
  : null;

export abstract class WasmObject<H extends Deletable> {
  private handle: H | null;
  protected readonly staging: Staging;

  /** Takes ownership of `handle`; `name` appears in the use-after-dispose error. */
  protected constructor(protected readonly mod: WasmModule, handle: H, private readonly name: string) {
    this.handle = handle;
    this.staging = new Staging(mod);
    finalizer?.register(this, { handle, staging: this.staging }, this);
  }

  /** Frees this object's WASM memory. Any later call throws. Safe to call twice. */
  dispose(): void {
    if (!this.handle) return;
    finalizer?.unregister(this);
    this.staging.dispose();
    this.handle.delete();
    this.handle = null;
  }

  get disposed(): boolean {
    return this.handle === null;
  }

  protected live(): H {
    if (!this.handle) throw new AttentionError(`this ${this.name} has been disposed`);
    return this.handle;
  }
}
