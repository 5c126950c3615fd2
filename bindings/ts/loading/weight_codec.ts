// Float32 rows in a ggml weight type's encoding (a GGUF file's blocks: Q8_0, Q4_K, ...), and back,
// by the core's own encoders and decoders (weight_types.h's table): for writing GGUF files and for
// seeing what a type keeps of a matrix. One call's rows go through the heap once each way.
import { AttentionError, throwIfError } from '../errors.js';
import { Staging } from '../runtime/heap.js';
import { enumNames, enumValue } from '../runtime/wasm_module.js';
import type { DtypeName, WasmModule } from '../runtime/wasm_module.js';
import { show } from '../validate.js';
import { GGUF_TENSOR_TYPES } from './gguf.js';

/** A weight type by the name safetensors or GGUF gives it ('F32', 'F16', 'BF16', 'Q8_0', 'Q4_K', ...). */
export type WeightTypeName = DtypeName;

/** The rows `count` values make at `cols` a row, or a named error. */
function checkShape(what: string, count: number, cols: number): number {
  if (!Number.isInteger(cols) || cols < 1 || count % cols !== 0)
    throw new AttentionError(`${what}: cols must be a positive integer dividing the ${count} values, got ${show(cols)}`);
  return count / cols;
}

function withStaging<T>(mod: WasmModule, use: (staging: Staging) => T): T {
  const staging = new Staging(mod);
  try {
    return use(staging);
  } finally {
    staging.dispose();
  }
}

/** Rows of `cols` values (values.length / cols rows) encoded in `type`, row after row, as GGUF stores them. */
export function encodeWeights(mod: WasmModule, values: Float32Array, cols: number, type: WeightTypeName): Uint8Array {
  const code = enumValue(mod.Dtype, type, 'encodeWeights: type');
  const rows = checkShape('encodeWeights', values.length, cols);
  return withStaging(mod, (staging) => {
    const rowBytes = bytesPerRow(mod, type, cols, 'encodeWeights');
    const src = staging.plan(values.length * 4), dst = staging.plan(rows * rowBytes);
    staging.commit();
    staging.writeF32(src, values);
    throwIfError(mod.encodeRows(code, src.ptr, rows, cols, dst.ptr), 'encodeWeights');
    return mod.HEAPU8.slice(dst.ptr, dst.ptr + rows * rowBytes);
  });
}

/** GGUF rows of `cols` values in `type` back to float32 (bytes.length must be whole rows). */
export function decodeWeights(mod: WasmModule, bytes: Uint8Array, cols: number, type: WeightTypeName): Float32Array {
  const code = enumValue(mod.Dtype, type, 'decodeWeights: type');
  const rowBytes = bytesPerRow(mod, type, cols, 'decodeWeights');
  if (bytes.length % rowBytes !== 0)
    throw new AttentionError(`decodeWeights: ${bytes.length} bytes are not whole rows of ${cols} ${type} values (${rowBytes} bytes each)`);
  const rows = bytes.length / rowBytes;
  return withStaging(mod, (staging) => {
    const src = staging.plan(bytes.length), dst = staging.plan(rows * cols * 4);
    staging.commit();
    staging.writeU8(src, bytes);
    throwIfError(mod.decodeRows(code, src.ptr, rows, cols, dst.ptr), 'decodeWeights');
    return staging.readF32(dst, rows * cols);
  });
}

/** Bytes of one row of `cols` values in `type` (GGUF's block sizes); a named error when cols is
 * not whole blocks. */
export function bytesPerRow(mod: WasmModule, type: WeightTypeName, cols: number, what: string): number {
  const t = GGUF_TENSOR_TYPES.find((g) => g.name === type);
  if (!t) throw new AttentionError(`${what}: unknown weight type ${show(type)} (known: ${enumNames(mod.Dtype).join(', ')})`);
  if (!Number.isInteger(cols) || cols < 1 || cols % t.blockElements !== 0)
    throw new AttentionError(`${what}: cols must be a positive multiple of ${t.blockElements} for ${type}, got ${show(cols)}`);
  return (cols / t.blockElements) * t.blockBytes;
}
