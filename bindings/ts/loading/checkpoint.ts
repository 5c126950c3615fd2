// The one loader of checkpoint weights: every model's core declares the tensors it reads (names and
// shapes as Hugging Face stores them); this copies each tensor's stored bytes from a safetensors
// file (or a GGUF file's tensors under those names) into the heap, one tensor at a time, and the
// core keeps them as stored or converts them straight into the model's storage (never two float32
// copies of the whole model), then finalizes.
import { AttentionError, throwIfError } from '../errors.js';
import { copyIn } from '../runtime/heap.js';
import type { Staging } from '../runtime/heap.js';
import { show } from '../validate.js';
import { parseWeights } from './safetensors.js';
import type { SafetensorsWeights } from './safetensors.js';
import { enumNames, enumValue, findEnum } from '../runtime/wasm_module.js';
import type { CheckpointHandle, Dtype, DtypeName, WasmModule } from '../runtime/wasm_module.js';
import type { WeightDtype } from './weight_dtype.js';

export type { CheckpointHandle } from '../runtime/wasm_module.js';

/** A tensor larger than this goes to the core in parts of whole rows: the staging block (whose
 * high-water mark the heap keeps) is then this size, not the largest tensor's (a GPT-2-small
 * F32 token embedding: 154 MB). */
const PART_BYTES = 4 << 20;

/** Stored rows of a tensor (a matrix's first dimension; anything else is one row) and how many go
 * in one part. */
function partsOf(shape: number[], bytes: number): { rows: number; rowBytes: number; perPart: number } {
  const rows = shape.length === 2 ? shape[0] : 1;
  const rowBytes = bytes / rows;
  return { rows, rowBytes, perPart: Math.min(rows, Math.max(1, Math.floor(PART_BYTES / rowBytes))) };
}

/** A stored tensor: its dtype by the name safetensors or GGUF gives it ('F32', 'BF16', 'Q4_K', ...),
 * its shape outermost first (as PyTorch writes it), and its bytes. */
export interface CheckpointTensor {
  dtype: string;
  shape: number[];
  bytes: Uint8Array;
}

/** A checkpoint's tensors by name: a parsed safetensors file, or a GGUF file's under Hugging Face's names. */
export interface CheckpointTensors {
  tensors: Map<string, CheckpointTensor>;
}

/** A model's weights as its files give them: safetensors bytes (one file or shards), parsed here,
 * or tensors already read (a GGUF file's). */
export function checkpointTensors(weights: SafetensorsWeights | CheckpointTensors): CheckpointTensors {
  const given = weights as Partial<CheckpointTensors>;
  return given !== null && typeof given === 'object' && given.tensors instanceof Map ? (weights as CheckpointTensors) : parseWeights(weights as SafetensorsWeights);
}

/** The names under which a declared tensor may be stored (prefixes, old spellings), best first. */
export type NameCandidates = (name: string) => string[];

/** The first candidate name the file has, with its entry. */
export function findTensor<T extends { dtype: string; shape: number[] }>(file: { tensors: Map<string, T> }, candidates: string[]): { name: string; entry: T } | undefined {
  for (const name of candidates) {
    const entry = file.tensors.get(name);
    if (entry) return { name, entry };
  }
  return undefined;
}

/** A checkpoint's tensors as they will arrive (a GGUF file read as it downloads): each one's
 * description up front, then its bytes, one tensor at a time, under the same names. */
export interface StreamedTensors {
  tensors: Map<string, { dtype: string; shape: number[]; byteLength: number }>;
  arrivals: AsyncIterable<{ name: string; bytes: Uint8Array }>;
}

export function isStreamed(weights: unknown): weights is StreamedTensors {
  return typeof weights === 'object' && weights !== null && 'arrivals' in weights;
}

/** A declared tensor found in the checkpoint: where it goes (at: its own buffer, or 0: staged in parts). */
interface Planned {
  declared: string;
  name: string;
  shape: number[];
  byteLength: number;
  count: number;
  code: Dtype;
  at: number;
}

/** Every declared tensor found and checked (in the model's order, so errors name the first
 * problem) before any is copied. */
function planTensors(mod: WasmModule, handle: CheckpointHandle, file: { tensors: Map<string, { dtype: string; shape: number[] }> },
  candidates: NameCandidates, byteLength: (name: string) => number, dtype?: WeightDtype): Omit<Planned, 'at'>[] {
  handle.setWeightStorage(enumValue(mod.WeightStorage, dtype ?? 'auto', 'loadModel: dtype'));
  const tensors: Omit<Planned, 'at'>[] = [];
  for (let i = 0; i < handle.tensorCount(); i++) {
    const declared = handle.tensorName(i);
    const names = candidates(declared);
    const found = findTensor(file, names);
    if (!found) {
      if (handle.tensorOptional(i)) continue;
      const also = names.slice(1).map((n) => `"${n}"`).join(', ');
      throw new AttentionError(`loadModel: missing tensor "${declared}"${also ? ` (also tried ${also})` : ''}`);
    }
    const want = handle.tensorShape(i);
    const { shape, dtype: stored } = found.entry;
    if (shape.length !== want.length || shape.some((d, k) => d !== want[k]))
      throw new AttentionError(`loadModel: tensor "${found.name}" has shape [${shape.join(', ')}] but config.json implies [${want.join(', ')}]`);
    // The stored dtypes the core reads: the module's Dtype enum, by safetensors' and GGUF's names.
    const code = findEnum(mod.Dtype, stored);
    if (code === undefined)
      throw new AttentionError(`loadModel: tensor "${found.name}" has dtype ${JSON.stringify(stored)}; supported: ${enumNames(mod.Dtype).join(', ')}`);
    tensors.push({ declared, name: found.name, shape, byteLength: byteLength(found.name), count: shape.reduce((a, b) => a * b, 1), code });
  }
  return tensors;
}

/** Tensors the core keeps as stored are written straight into their own buffers; the others go
 * through one staging block, the size of the largest part of them, taken before the model's buffers. */
function placeTensors(handle: CheckpointHandle, staging: Staging, tensors: Omit<Planned, 'at'>[]): Planned[] {
  const placed = tensors.map((t) => ({ ...t, at: handle.storedDestination(t.declared, t.count, t.code) }));
  staging.plan(Math.max(0, ...placed.filter((t) => !t.at).map((t) => {
    const p = partsOf(t.shape, t.byteLength);
    return p.perPart * p.rowBytes;
  })));
  staging.commit();
  staging.release();
  return placed;
}

/** One tensor's stored bytes into the model: in place, or into the heap as they are (one copy, any
 * alignment) a part of whole rows at a time, the core converting. */
function copyTensor(mod: WasmModule, handle: CheckpointHandle, staging: Staging, t: Planned, bytes: Uint8Array): void {
  const { declared, count, code, at } = t;
  if (bytes.length !== t.byteLength)
    throw new AttentionError(`loadModel: tensor "${t.name}" arrived with ${bytes.length} bytes, expected ${t.byteLength}`);
  if (at) {
    copyIn(mod, at, bytes);
    throwIfError(handle.setTensor(declared, at, count, code), 'loadModel');
    return;
  }
  const { rows, rowBytes, perPart } = partsOf(t.shape, bytes.length);
  const perRow = count / rows;
  for (let r = 0; r < rows; r += perPart) {
    const n = Math.min(perPart, rows - r);
    const region = staging.plan(n * rowBytes);
    try {
      staging.commit();
      staging.writeU8(region, bytes.subarray(r * rowBytes, (r + n) * rowBytes));
      throwIfError(handle.setTensorPart(declared, region.ptr, count, r * perRow, n * perRow, code), 'loadModel');
    } finally {
      staging.release();
    }
  }
}

/** Each tensor's type as the model holds it, by its declared name (model.weightTypes). */
export type WeightTypes = Readonly<Record<string, DtypeName>>;

/** The type most of a model's tensors are held in, its F32 vectors (norms, biases) aside: its
 * precision in one word, in weightTypes' names ('F16', 'Q8_0', 'Q4_0', 'Q4_K', ...; 'F32' when
 * every tensor is). A tie goes to the wider type. weightTypes says each tensor's. */
export function heldDtype(types: WeightTypes): DtypeName {
  const counts = new Map<DtypeName, number>();
  for (const t of Object.values(types)) if (t !== 'F32') counts.set(t, (counts.get(t) ?? 0) + 1);
  let best: DtypeName = 'F32', most = 0;
  for (const [t, n] of counts) if (n > most || (n === most && WIDTH[t] > WIDTH[best])) [best, most] = [t, n];
  return best;
}

/** Bits a weight of each held type takes (for heldDtype's ties). */
const WIDTH: Readonly<Record<DtypeName, number>> = {
  F32: 32, F16: 16, BF16: 16, Q8_0: 8.5, Q6_K: 6.5625, Q5_1: 6, Q5_0: 5.5, Q5_K: 5.5, Q4_1: 5, Q4_0: 4.5, Q4_K: 4.5, Q3_K: 3.4375, Q2_K: 2.625,
};

/** The types the tensors were set in (after finalize). */
function heldTypes(handle: CheckpointHandle): WeightTypes {
  const types: Record<string, DtypeName> = {};
  for (let i = 0; i < handle.tensorCount(); i++) {
    const t = handle.tensorHeldType(i);
    if (t) types[handle.tensorName(i)] = t;
  }
  return Object.freeze(types);
}

/** Loads the checkpoint's tensors into the model and finalizes it; returns the types each is held in. */
export function loadCheckpoint(mod: WasmModule, handle: CheckpointHandle, staging: Staging, file: CheckpointTensors, candidates: NameCandidates, dtype?: WeightDtype): WeightTypes {
  const tensors = planTensors(mod, handle, file, candidates, (name) => file.tensors.get(name)!.bytes.length, dtype);
  // Smallest first: the engine compiles the core's copy loop with its optimizing tier once it has
  // run a while, and a call already running stays on the baseline code; so the embedding table,
  // usually half the model, comes last.
  tensors.sort((a, b) => a.count - b.count);
  for (const t of placeTensors(handle, staging, tensors)) copyTensor(mod, handle, staging, t, file.tensors.get(t.name)!.bytes);
  throwIfError(handle.finalize(), 'loadModel');
  return heldTypes(handle);
}

/** loadCheckpoint for tensors that arrive one at a time (in any order): each goes into the model as
 * it arrives, so only one tensor's bytes are held outside the heap at once. */
export async function streamCheckpoint(mod: WasmModule, handle: CheckpointHandle, staging: Staging, weights: StreamedTensors,
  candidates: NameCandidates, dtype?: WeightDtype): Promise<WeightTypes> {
  const tensors = planTensors(mod, handle, weights, candidates, (name) => weights.tensors.get(name)!.byteLength, dtype);
  const byName = new Map(placeTensors(handle, staging, tensors).map((t) => [t.name, t]));
  for await (const { name, bytes } of weights.arrivals) {
    const t = byName.get(name);
    if (t) copyTensor(mod, handle, staging, t, bytes);
  }
  throwIfError(handle.finalize(), 'loadModel');
  return heldTypes(handle);
}

/** The largest value of each size field of config.json, as the core limits it (a model past them
 * could not be held): checked here so that a value past them is named as given (1e12, not the
 * 32-bit integer the core would read). BERT and BART pass their own max_position_embeddings. */
const CONFIG_MAX: Record<string, number> = {
  vocab_size: 1 << 20, max_position_embeddings: 1 << 20, n_positions: 1 << 20, hidden_size: 1 << 14, n_embd: 1 << 14, d_model: 1 << 14,
  intermediate_size: 1 << 16, encoder_ffn_dim: 1 << 16, decoder_ffn_dim: 1 << 16, type_vocab_size: 1 << 10,
  num_hidden_layers: 1024, n_layer: 1024, encoder_layers: 1024, decoder_layers: 1024, no_rope_layer_interval: 1024,
  num_attention_heads: 1024, n_head: 1024, encoder_attention_heads: 1024, decoder_attention_heads: 1024, num_key_value_heads: 1024, head_dim: 1024,
};

/** A positive integer field of config.json, at most `max` (CONFIG_MAX's, else 2^31 - 1), or a
 * named error (show() prints any value: a BigInt or a Symbol from a hand-made config must not
 * make the message itself throw). */
export function configInt(c: Record<string, unknown>, key: string, fallback?: unknown, max = CONFIG_MAX[key] ?? 0x7fffffff): number {
  const v = c[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
    throw new AttentionError(`config.json: ${key} must be a positive integer, got ${show(v)}`);
  if (v > max) throw new AttentionError(`config.json: ${key} must be between 1 and ${max}, got ${show(v)}`);
  return v;
}

/** A token id field of config.json (bos_token_id, eos_token_id, ...): undefined when absent or
 * null, else an integer id of the vocabulary (a list of them where `list`), or a named error. */
export function configTokenIds(c: Record<string, unknown>, key: string, vocab: number, list = false): number[] | undefined {
  const v = c[key];
  if (v === undefined || v === null) return undefined;
  const ids = Array.isArray(v) && list ? v : [v];
  for (const id of ids) {
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id >= vocab)
      throw new AttentionError(`config.json: ${key} must be ${list ? 'a token id or a list of them' : 'a token id'} (an integer from 0 to vocab_size - 1 = ${vocab - 1}), got ${show(v)}`);
  }
  return ids as number[];
}

/** A tied output head (tie_word_embeddings: the logits use the embedding table) stored beside the
 * table anyway must have the table's shape, as transformers' loading requires: one of another
 * shape is a checkpoint of another model, named here rather than ignored. */
export function checkTiedHead(file: { tensors: Map<string, { shape: number[] }> }, names: string[], shape: number[]): void {
  for (const name of names) {
    const entry = file.tensors.get(name);
    if (entry && (entry.shape.length !== shape.length || entry.shape.some((d, k) => d !== shape[k])))
      throw new AttentionError(`loadModel: tensor "${name}" has shape [${entry.shape.join(', ')}] but the embeddings are tied (tie_word_embeddings), so it must be the embedding table's [${shape.join(', ')}]`);
  }
}

/** A layer-norm epsilon from config.json in (0, max], or a named error: a huge epsilon is accepted
 * by the arithmetic but flattens every normalized activation. */
export function configEps(c: Record<string, unknown>, key: string, fallback: number, max = 0.1): number {
  const eps = c[key] ?? fallback;
  if (typeof eps !== 'number' || !(eps > 0) || !(eps <= max))
    throw new AttentionError(`config.json: ${key} must be a number > 0 and <= ${max}, got ${show(eps)}`);
  return eps;
}
