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
    throw new AttentionError(`${name} must be a positive integer, got ${show(value)}`);
  if (value > 0x7fffffff) throw new AttentionError(`${name} is too large: ${value}`);
  return value;
}

/** `formula` explains the expected length, e.g. "batch*seqLen*dModel = 2*10*512". */
export function floatArray(name: string, value: unknown, expected: number, formula: string): FloatInput {
  if (!(value instanceof Float32Array) && !Array.isArray(value))
    throw new AttentionError(`${name} must be a Float32Array (or an array of numbers), got ${describe(value)}`);
  if (value.length !== expected)
    throw new AttentionError(`${name} has ${value.length} elements, expected ${formula} = ${expected}`);
  // A plain array is copied into the heap as numbers: a BigInt or Symbol element would throw there.
  if (Array.isArray(value)) {
    const at = value.findIndex((v) => typeof v !== 'number');
    if (at >= 0) throw new AttentionError(`${name}[${at}] must be a number, got ${show(value[at])}`);
  }
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

// ---------------------------------------------------------------------------------------------
// Options objects: one check for every public entry point. Each entry point lists its options
// with a rule per key (the `Rules<T>` type makes the list match the TypeScript interface, so a
// new option cannot be forgotten here); an unknown key, a wrong type or a value out of range
// throws an AttentionError naming the function, the option and, for a misspelt key, the
// nearest known key, the way PyTorch refuses an unknown keyword argument.

/** A value as a message can show it, whatever it is (never throws: BigInt, Symbol, cycles). */
export function show(value: unknown): string {
  switch (typeof value) {
    case 'string': {
      const s = value.length > 40 ? `${value.slice(0, 40)}…(${value.length} characters)` : value;
      return JSON.stringify(s);
    }
    case 'number': return Object.is(value, -0) ? '0' : String(value);
    case 'bigint': return `${value}n (a BigInt)`;
    case 'symbol': return 'a Symbol';
    case 'function': return 'a function';
    case 'boolean': return String(value);
    default: return describe(value) === 'object' ? 'an object' : describe(value);
  }
}

/** Checks one option's value; `name` is "where: option". Throws AttentionError. */
export type Rule = (value: unknown, name: string) => void;

/** A rule for every key of T (optional keys included): what `checkOptions` accepts. */
export type Rules<T> = { [K in keyof Required<T>]: Rule };

const fail = (name: string, expected: string, value: unknown): never => {
  throw new AttentionError(`${name} must be ${expected}, got ${show(value)}`);
};

/** The building blocks of option rules. */
export const is = {
  boolean: ((v, name) => { if (typeof v !== 'boolean') fail(name, 'true or false', v); }) as Rule,
  string: ((v, name) => { if (typeof v !== 'string') fail(name, 'a string', v); }) as Rule,
  function: ((v, name) => { if (typeof v !== 'function') fail(name, 'a function', v); }) as Rule,
  /** An integer in [min, max]. */
  int(min: number, max = Number.MAX_SAFE_INTEGER): Rule {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    return (v, name) => {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) fail(name, `an integer ${range}`, v);
    };
  },
  /** A finite number in [min, max] (bounds inclusive unless `open`). */
  number(min = -Infinity, max = Infinity, open: { min?: boolean; max?: boolean } = {}): Rule {
    const lo = min === -Infinity ? '' : `${open.min ? '>' : '>='} ${min}`;
    const hi = max === Infinity ? '' : `${open.max ? '<' : '<='} ${max}`;
    const range = [lo, hi].filter(Boolean).join(' and ');
    return (v, name) => {
      const ok = typeof v === 'number' && Number.isFinite(v) && (open.min ? v > min : v >= min) && (open.max ? v < max : v <= max);
      if (!ok) fail(name, `a finite number${range ? ' ' + range : ''}`, v);
    };
  },
  /** One of the listed values (strings are quoted in the message). */
  oneOf(...values: unknown[]): Rule {
    return (v, name) => {
      if (!values.includes(v)) fail(name, `one of ${values.map(show).join(', ')}`, v);
    };
  },
  /** Either rule (the message lists what both accept). */
  either(a: Rule, b: Rule, expected: string): Rule {
    return (v, name) => {
      try { a(v, name); } catch { try { b(v, name); } catch { fail(name, expected, v); } }
    };
  },
  /** An array whose every element passes `each` (at most `maxLength` of them). */
  array(each: Rule, maxLength = 0xffffffff): Rule {
    return (v, name) => {
      if (!Array.isArray(v)) fail(name, 'an array', v);
      const arr = v as unknown[];
      if (arr.length > maxLength) throw new AttentionError(`${name} has ${arr.length} elements; at most ${maxLength} are allowed`);
      for (let i = 0; i < arr.length; i++) each(arr[i], `${name}[${i}]`);
    };
  },
  /** An AbortSignal (anything with a boolean `aborted` and addEventListener). */
  signal: ((v, name) => {
    const s = v as { aborted?: unknown; addEventListener?: unknown } | null;
    let ok = false;
    try {
      ok = typeof s === 'object' && s !== null && typeof s.aborted === 'boolean' && typeof s.addEventListener === 'function';
    } catch { /* a getter or Proxy trap that throws: not an AbortSignal */ }
    if (!ok) fail(name, 'an AbortSignal', v);
  }) as Rule,
  /** Checked by the entry point itself (typed arrays, masks: their lengths depend on other options). */
  any: (() => {}) as Rule,
};

/** Edit distance with transpositions (optimal string alignment): 'veiw' is one edit from 'view'. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The known name closest to `name` (case, '_' and '-' ignored), if it is close enough to be a
 * likely misspelling: at most a third of its letters differ (and at least one edit is allowed). */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[_-]/g, '');
  const n = norm(name.slice(0, 64));
  let best: string | undefined, bestDistance = Infinity;
  for (const k of known) {
    const d = editDistance(n, norm(k));
    if (d < bestDistance) { best = k; bestDistance = d; }
  }
  return bestDistance <= Math.max(1, Math.floor(Math.max(n.length, 3) / 3)) ? best : undefined;
}

/** "unknown option 'casual' (did you mean 'causal'?)" or "... (known: a, b, c)". */
export function unknownName(kind: string, name: string, known: readonly string[]): string {
  const near = nearestName(name, known);
  return `unknown ${kind} ${show(name).replace(/^"|"$/g, "'")}` +
    (near !== undefined ? ` (did you mean '${near}'?)` : ` (known: ${known.join(', ') || 'none'})`);
}

/**
 * Checks an options object against its rules: `undefined` means no options; anything but a
 * plain object (null, an array, a number, ...) is refused, as is an unknown key; each key that is
 * present and not undefined must pass its rule. Returns a plain copy of the own keys it checked:
 * the caller reads only checked values (never a getter or a Proxy trap, nor an inherited key).
 * `kind` names the keys in messages ('weight': "unknown weight 'Wq'", "weights must be ...").
 */
export function checkOptions<T extends object>(where: string, options: T | undefined, rules: Rules<T>, kind = 'option'): T {
  if (options === undefined) return {} as T;
  if (typeof options !== 'object' || options === null || Array.isArray(options) || ArrayBuffer.isView(options))
    throw new AttentionError(`${where}: ${kind}s must be an object (or left out), got ${show(options)}`);
  const known = Object.keys(rules), copy: Record<string, unknown> = {};
  for (const key of Object.keys(options)) {
    if (!Object.prototype.hasOwnProperty.call(rules, key)) throw new AttentionError(`${where}: ${unknownName(kind, key, known)}`);
    const value = (options as Record<string, unknown>)[key];
    if (value !== undefined) (rules as Record<string, Rule>)[key](value, `${where}: ${key}`);
    copy[key] = value;
  }
  return copy as T;
}

/** A required object argument (a layer's config, its weights, a state dict, a run's result):
 * anything else (null, an array, a typed array, a number) is refused, naming what was wanted. */
export function checkObject<T>(where: string, what: string, value: T, example: string): T {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || ArrayBuffer.isView(value))
    throw new AttentionError(`${where}: ${what} must be an object ${example}, got ${show(value)}`);
  return value;
}

/** A required string argument (text to tokenize, a model id). */
export function checkString(where: string, what: string, value: unknown): string {
  if (typeof value !== 'string') throw new AttentionError(`${where}: ${what} must be a string, got ${show(value)}`);
  return value;
}
