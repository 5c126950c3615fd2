// The demo's rotation (web/app/rotary.js, which the step view uses to move a query/key pair to other
// positions) against the library's trace: for tiny random Llamas with each rope setting the core
// runs, every query and key row before the rotation, turned by the page's code to its position,
// must be the row after it. Prints { case: max abs difference } as JSON (demo_rotary.test.cjs).
import { createRequire } from 'node:module';
import { loadAttention } from '../../dist/index.node.js';
import { inverseFrequencies, rotate } from '../../web/app/rotary.js';

const require = createRequire(import.meta.url);
const { checkpoint, modelFiles } = require('./llama_checkpoint.cjs');

const base = { model_type: 'llama', vocab_size: 23, max_position_embeddings: 64, hidden_size: 32, intermediate_size: 48,
  num_hidden_layers: 1, num_attention_heads: 4, num_key_value_heads: 2, rms_norm_eps: 1e-5, tie_word_embeddings: true };
const CASES = {
  default: {},
  theta500k: { rope_theta: 500000 },
  linear: { rope_scaling: { type: 'linear', factor: 4 } },
  llama3: { rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 16 } },
};

const attn = await loadAttention({ threads: 1 });
const tokens = Array.from({ length: 40 }, (_, i) => 2 + ((i * 7) % 21));
const out = {};
for (const [name, extra] of Object.entries(CASES)) {
  const config = { ...base, ...extra };
  const lm = await attn.loadModel(modelFiles(config, checkpoint(config, 5)));
  const { num_attention_heads: H, num_key_value_heads: KV, head_dim: d } = lm.config;
  const freqs = inverseFrequencies({ theta: lm.config.rope_theta, headDim: d, scaling: lm.config.rope_scaling });
  const t = lm.run(tokens, { traceLayer: 0 }).trace;
  const n = tokens.length;
  let worst = 0, moved = 0;
  const check = (before, after, heads) => {
    for (let h = 0; h < heads; h++)
      for (let p = 0; p < n; p++) {
        const at = (h * n + p) * d;
        const mine = rotate(before.subarray(at, at + d), p, freqs);
        for (let i = 0; i < d; i++) {
          worst = Math.max(worst, Math.abs(mine[i] - after[at + i]));
          moved = Math.max(moved, Math.abs(before[at + i] - after[at + i]));
        }
      }
  };
  check(t.qBeforeRotary, t.q, H);
  check(t.kBeforeRotary, t.k, KV);
  out[name] = { maxDiff: worst, rotationMoves: moved };
  lm.dispose();
}
console.log(JSON.stringify(out));
