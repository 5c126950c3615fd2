// Checks at the JS boundary: the core only sees pointers, so lengths and types are checked here,
// with messages that name the argument, what it holds and what was expected.
import { AttentionError } from './errors.js';

/** Float data: a Float32Array, or a plain array of numbers (copied). */
export type FloatInput = Float32Array | ArrayLike<number>;
/** Boolean data: nonzero / true = masked. */
export type BoolInput = Uint8Array | ArrayLike<boolean | number>;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (ArrayBuffer.isView(value)) return `${value.constructor.name}(${(value as unknown as ArrayLike<number>).length})`;
  if (Array.isArray(value)) return `Array(${value.length})`;
  return typeof value;
}

export function positiveInt(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
    throw new AttentionError(`${name} must be a positive integer, got ${String(value)}`);
  if (value > 0x7fffffff) throw new AttentionError(`${name} is too large: ${value}`);
  return value;
}

/** `formula` explains the expected length, e.g. "batch*seqLen*dModel = 2*10*512". */
export function floatArray(name: string, value: unknown, expected: number, formula: string): FloatInput {
  if (!(value instanceof Float32Array) && !Array.isArray(value))
    throw new AttentionError(`${name} must be a Float32Array (or an array of numbers), got ${describe(value)}`);
  if (value.length !== expected)
    throw new AttentionError(`${name} has ${value.length} elements, expected ${formula} = ${expected}`);
  return value as FloatInput;
}

export function boolArray(name: string, value: unknown, expected: number, formula: string): BoolInput {
  const ok = value instanceof Uint8Array || Array.isArray(value);
  if (!ok) throw new AttentionError(`${name} must be a Uint8Array or an array of booleans (true = masked), got ${describe(value)}`);
  const arr = value as ArrayLike<unknown>;
  if (arr.length !== expected)
    throw new AttentionError(`${name} has ${arr.length} elements, expected ${formula} = ${expected}`);
  return arr as BoolInput;
}

/** Booleans as 0/1 bytes for the core. */
export function toBytes(value: BoolInput): ArrayLike<number> {
  if (value instanceof Uint8Array) return value;
  const out = new Uint8Array(value.length);
  for (let i = 0; i < value.length; i++) out[i] = value[i] ? 1 : 0;
  return out;
}

/** An attention mask: boolean (Uint8Array / boolean[], true = masked) or additive (Float32Array). */
export type AttnMask = Uint8Array | boolean[] | Float32Array;

export interface ResolvedMask { kind: 0 | 1 | 2; perHead: boolean; data: ArrayLike<number> | null }

/** Accepts seqQ x seqK or batch x heads x seqQ x seqK, told apart by length. */
export function attnMask(value: unknown, batch: number, heads: number, seqQ: number, seqK: number): ResolvedMask {
  if (value === undefined || value === null) return { kind: 0, perHead: false, data: null };
  const plane = seqQ * seqK;
  const full = batch * heads * plane;
  const isFloat = value instanceof Float32Array;
  const isBool = value instanceof Uint8Array || (Array.isArray(value) && value.every((v) => typeof v === 'boolean'));
  if (!isFloat && !isBool)
    throw new AttentionError(`attnMask must be a Uint8Array or boolean[] (true = masked) or a Float32Array (added to the scores), got ${describe(value)}`);
  const length = (value as ArrayLike<unknown>).length;
  if (length !== plane && length !== full)
    throw new AttentionError(`attnMask has ${length} elements, expected seqQ*seqK = ${seqQ}*${seqK} = ${plane} or batch*heads*seqQ*seqK = ${batch}*${heads}*${seqQ}*${seqK} = ${full}`);
  return {
    kind: isFloat ? 2 : 1,
    perHead: length !== plane,
    data: isFloat ? (value as Float32Array) : toBytes(value as BoolInput),
  };
}
