// The rest of a traced layer, beside its attention walk (MultiHeadTrace): the residual stream
// through the block, each norm's parameters and the MLP's intermediates, as the core computed
// them (src/layers/block_trace.h). Every model's run() with `traceLayer` returns it as `trace.block`.
import type { TraceHandle, TraceSlotName, WasmModule } from '../runtime/wasm_module.js';
import { readTrace } from '../runtime/heap.js';

/** One norm the block applied to the stream: y = (x - mean) / sqrt(var + eps) * gain + bias
 * (LayerNorm), or y = x / sqrt(mean(x²) + eps) * gain (RMSNorm: `bias` null). */
export interface NormParameters {
  gain: Float32Array;
  bias: Float32Array | null;
  eps: number;
}

/**
 * A block's numbers, row-major, one row per token (batch row 0's tokens first): `n x dModel`
 * except `up`, `gate` and `activated` (`n x ffnDim`).
 * - `'pre-norm'` (GPT-2, the Llama family): the attention reads norms[0](input);
 *   afterAttention = input + attention; mlpInput = norms[1](afterAttention);
 *   output = afterMlp = afterAttention + mlp (Gemma 3: attention and mlp after their sandwich norms).
 * - `'post-norm'` (BERT, BART): the attention reads input; afterAttention = input + attention, then
 *   norms[0]; a BART decoder layer: afterCross = that + cross, then norms[1]; mlpInput is the stream
 *   after those norms; afterMlp = mlpInput + mlp; output = the last norm of afterMlp.
 * The MLP: up = mlpInput W_up (+ b); gated (the Llama family) gate = mlpInput W_gate and
 * activated = act(gate) * up; else activated = act(up); mlp = activated W_down (+ b).
 */
export interface BlockTrace {
  layout: 'pre-norm' | 'post-norm';
  n: number;
  dModel: number;
  ffnDim: number;
  input: Float32Array;
  attention: Float32Array;
  afterAttention: Float32Array;
  cross: Float32Array | null;
  afterCross: Float32Array | null;
  mlpInput: Float32Array;
  up: Float32Array;
  gate: Float32Array | null;
  activated: Float32Array;
  mlp: Float32Array;
  afterMlp: Float32Array;
  output: Float32Array;
  norms: NormParameters[];
}

/** The block of the handle's last traced call (n tokens, dModel wide), or undefined when the
 * build or the call traced none. */
export function readBlockTrace(mod: WasmModule, handle: TraceHandle, layout: BlockTrace['layout'], n: number,
  dModel: number): BlockTrace | undefined {
  const read = (slot: TraceSlotName) => readTrace(mod, handle, slot);
  const orNull = (a: Float32Array) => (a.length ? a : null);
  if (!mod.TraceSlot.BlockInput) return undefined; // (a build from before block traces)
  const input = read('BlockInput');
  if (!input.length) return undefined;
  const up = read('BlockUp');
  const norms: NormParameters[] = [];
  for (const i of [1, 2, 3] as const) {
    const gain = read(`Norm${i}Gain`);
    if (gain.length) norms.push({ gain, bias: orNull(read(`Norm${i}Bias`)), eps: read(`Norm${i}Eps`)[0] });
  }
  return {
    layout, n, dModel, ffnDim: up.length / n, input, attention: read('BlockAttention'), afterAttention: read('BlockAfterAttention'),
    cross: orNull(read('BlockCross')), afterCross: orNull(read('BlockAfterCross')), mlpInput: read('BlockMlpInput'),
    up, gate: orNull(read('BlockGate')), activated: read('BlockHidden'), mlp: read('BlockMlp'), afterMlp: read('BlockAfterMlp'),
    output: read('BlockOutput'), norms,
  };
}
