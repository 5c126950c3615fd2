// Copies typed arrays into the WebAssembly heap and results back out. One block per owner,
// reused across calls (no per-call malloc churn), so memory is bounded by the largest call.
import { AttentionError } from '../errors.js';
import type { TraceHandle, TraceSlotName, WasmModule } from './wasm_module.js';

const ALIGN = 16;
// A block above this size is released after the call instead of being kept for reuse.
const KEEP_LIMIT_BYTES = 64 << 20;

/** A planned region of the staging block. `ptr` is valid after `Staging.commit()`. */
export interface Region { offset: number; bytes: number; ptr: number }

export class Staging {
  private base = 0;
  private capacity = 0;
  private regions: Region[] = [];
  private used = 0;

  constructor(private readonly mod: WasmModule) {}

  /** Plans a region of `bytes` (0 gives a null pointer). Call commit() before using pointers. */
  plan(bytes: number): Region {
    const region = { offset: this.used, bytes, ptr: 0 };
    if (bytes > 0) this.used += Math.ceil(bytes / ALIGN) * ALIGN;
    this.regions.push(region);
    return region;
  }

  /** Allocates (or reuses) one block for everything planned since the last release(). */
  commit(): void {
    if (this.used > this.capacity) {
      this.freeBlock();
      // dlmalloc returns 0 instead of aborting (ABORTING_MALLOC=0) when the heap cannot grow.
      // The heap may reach 4 GiB, but one block stays under 2 GiB: Emscripten's sbrk takes a
      // signed 32-bit increment. (>>> 0: a pointer past 2 GiB comes back as a negative i32.)
      const ptr = this.used >= 2 ** 31 ? 0 : this.mod._malloc(this.used) >>> 0;
      if (!ptr) {
        const mib = (this.used / 2 ** 20).toFixed(1);
        const why = this.used >= 2 ** 31 ? 'more than one block of the heap may hold (under 2 GiB)' : 'which the heap cannot grow to hold (limit 4 GiB)';
        this.regions = [];
        this.used = 0;
        throw new AttentionError(`out of memory: this call needs ${mib} MiB of WebAssembly heap, ${why}`);
      }
      this.base = ptr;
      this.capacity = this.used;
    }
    for (const r of this.regions) r.ptr = r.bytes > 0 ? this.base + r.offset : 0;
  }

  writeF32(r: Region, data: ArrayLike<number>): void {
    if (r.ptr) this.mod.HEAPF32.set(data, r.ptr >>> 2);
  }

  /** A view of `count` floats at `r`, to fill in place. Valid only until the heap next grows (any
   * call into the module may grow it): fill it at once. */
  viewF32(r: Region, count: number): Float32Array {
    return this.mod.HEAPF32.subarray(r.ptr >>> 2, (r.ptr >>> 2) + count);
  }

  writeI32(r: Region, data: ArrayLike<number>): void {
    if (r.ptr) new Int32Array(this.mod.HEAPU8.buffer, r.ptr, data.length).set(data);
  }

  writeU8(r: Region, data: ArrayLike<number>): void {
    if (r.ptr) this.mod.HEAPU8.set(data, r.ptr);
  }

  /** An owned copy of `count` floats at `r` (views of the heap die when it grows). */
  readF32(r: Region, count: number): Float32Array {
    const start = r.ptr >>> 2;
    return this.mod.HEAPF32.slice(start, start + count);
  }

  /** Calls `use` with a heap copy of `values` as int32 (the whole call: plan, commit, release). */
  withI32<T>(values: ArrayLike<number>, use: (ptr: number) => T): T {
    const r = this.plan(values.length * 4);
    try {
      this.commit();
      this.writeI32(r, values);
      return use(r.ptr);
    } finally {
      this.release();
    }
  }

  /** Ends the call: forgets the plan, and gives back an unusually large block. */
  release(): void {
    this.regions = [];
    this.used = 0;
    if (this.capacity > KEEP_LIMIT_BYTES) this.freeBlock();
  }

  dispose(): void {
    this.release();
    this.freeBlock();
  }

  private freeBlock(): void {
    if (this.base) this.mod._free(this.base);
    this.base = 0;
    this.capacity = 0;
  }
}

/** Bytes into a core-owned buffer at `ptr` (a tensor the core keeps as stored). */
export function copyIn(mod: WasmModule, ptr: number, bytes: Uint8Array): void {
  mod.HEAPU8.set(bytes, ptr);
}

/** An owned copy of a core-owned buffer (a trace tensor). */
export function copyOut(mod: WasmModule, ptr: number, count: number): Float32Array {
  if (!ptr || count === 0) return new Float32Array(0);
  return mod.HEAPF32.slice(ptr >>> 2, (ptr >>> 2) + count);
}

/** An owned copy of one trace buffer, by its slot's name (the module's TraceSlot enum). */
export function readTrace(mod: WasmModule, handle: TraceHandle, slot: TraceSlotName): Float32Array {
  const s = mod.TraceSlot[slot];
  return copyOut(mod, handle.traceData(s), handle.traceSize(s));
}
