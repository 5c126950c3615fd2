// Head ablation for run(): the listed heads' outputs are set to zero before W^O for one call, so a
// learner sees what the prediction does without them (the causal test a head's label cannot give).
// Every model's run() checks the list here and wraps its forward in withHeadsOff.
import { AttentionError, throwIfError } from '../errors.js';
import type { Staging } from '../runtime/heap.js';
import type { AttentionPartName, ModelHandle, WasmModule } from '../runtime/wasm_module.js';
import { enumValue } from '../runtime/wasm_module.js';
import { show } from '../validate.js';

/** One head to switch off: layer and head counted from 0, of attention `part` (a BART model's
 * 'self' is the encoder's self-attention, 'decoder' the decoder's, 'cross' the cross-attention;
 * default 'self', the only one of the other models). */
export interface AblatedHead {
  layer: number;
  head: number;
  part?: AttentionPartName;
}

/** The layers and heads of each attention a model has. */
export type AttentionSizes = Partial<Record<AttentionPartName, { layers: number; heads: number }>>;

/** Most heads one call may switch off (more than any model's layers x heads would be a mistake). */
const MAX_ABLATED = 1 << 16;

/** The ablate option checked: an array of { layer, head, part? } within the model's sizes. */
export function checkAblation(where: string, value: unknown, sizes: AttentionSizes): Required<AblatedHead>[] {
  if (!Array.isArray(value) || value.length > MAX_ABLATED)
    throw new AttentionError(`${where}: ablate must be an array of { layer, head } (at most ${MAX_ABLATED}), got ${show(value)}`);
  const parts = Object.keys(sizes) as AttentionPartName[];
  return value.map((entry, i) => {
    const name = `${where}: ablate[${i}]`;
    if (typeof entry !== 'object' || entry === null) throw new AttentionError(`${name} must be { layer, head }, got ${show(entry)}`);
    const { layer, head, part = 'self', ...rest } = entry as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length) throw new AttentionError(`${name} has an unknown key "${extra[0]}" (known: layer, head, part)`);
    const size = typeof part === 'string' ? sizes[part as AttentionPartName] : undefined;
    if (!size) throw new AttentionError(`${name}.part must be ${parts.map((p) => `'${p}'`).join(' or ')}, got ${show(part)}`);
    if (!Number.isInteger(layer) || (layer as number) < 0 || (layer as number) >= size.layers)
      throw new AttentionError(`${name}.layer must be an integer in [0, ${size.layers - 1}], got ${show(layer)}`);
    if (!Number.isInteger(head) || (head as number) < 0 || (head as number) >= size.heads)
      throw new AttentionError(`${name}.head must be an integer in [0, ${size.heads - 1}], got ${show(head)}`);
    return { layer: layer as number, head: head as number, part: part as AttentionPartName };
  });
}

/**
 * Runs `call` with the heads switched off in the core, and every head back on afterwards (also
 * when the call throws), so the next call sees the whole model.
 */
export function withHeadsOff<T>(mod: WasmModule, handle: ModelHandle<unknown>, staging: Staging, where: string,
  heads: Required<AblatedHead>[], sizes: AttentionSizes, call: () => T): T {
  if (heads.length === 0) return call();
  const layers = new Map<string, Uint8Array>();
  for (const h of heads) {
    const key = `${h.part}/${h.layer}`;
    if (!layers.has(key)) layers.set(key, new Uint8Array(sizes[h.part]!.heads));
    layers.get(key)![h.head] = 1;
  }
  const set = (key: string, flags: Uint8Array | null) => {
    const [part, layer] = key.split('/');
    const code = enumValue(mod.AttentionPart, part, `${where}: part`);
    if (!flags) return throwIfError(handle.setHeadsOff(code, Number(layer), 0, 0), where);
    const r = staging.plan(flags.length);
    try {
      staging.commit();
      staging.writeU8(r, flags);
      throwIfError(handle.setHeadsOff(code, Number(layer), r.ptr, flags.length), where);
    } finally {
      staging.release();
    }
  };
  try {
    for (const [key, flags] of layers) set(key, flags);
    return call();
  } finally {
    for (const key of layers.keys()) set(key, null);
  }
}
