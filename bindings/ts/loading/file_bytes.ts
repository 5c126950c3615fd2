// A model file's bytes as the parsers take them (safetensors.ts, gguf.ts).
import { show } from '../validate.js';

/** The file's bytes as a Uint8Array view (nothing copied), or `fail` with why not. Anything else
 * is refused: a number would make `new Uint8Array` allocate that many zeros, another typed array
 * would be converted element by element. Checked by tag, so a Buffer or an ArrayBuffer from another
 * realm passes. */
export function fileBytes(input: unknown, fail: (message: string) => never): Uint8Array {
  const tag = Object.prototype.toString.call(input);
  if (tag === '[object ArrayBuffer]' || tag === '[object SharedArrayBuffer]') return new Uint8Array(input as ArrayBuffer);
  if (tag === '[object Uint8Array]' && ArrayBuffer.isView(input))
    return input instanceof Uint8Array ? input : new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  return fail(`expected the file's bytes (a Uint8Array or an ArrayBuffer), got ${show(input)}`);
}
