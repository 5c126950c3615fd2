// A random-weight GPT-2 with a tiny byte-level BPE vocabulary, for developing the demo before the
// trained model (web/models/brown-gpt2) exists. Never shipped: the demo defaults to the trained
// model; point the build at this one with DEMO_MODEL=<dir> node scripts/build_web.mjs.
//
// Usage: node scripts/make_dev_model.mjs <out_dir>
// The layout matches tools/train/export.py: HF GPT-2 tensor names, Conv1D weights in x out,
// vocab.json + merges.txt, "<|endoftext|>" last, config.json with bos_token_id.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomFill, writeSafetensors } from './dev_weights.mjs';

const out = process.argv[2];
if (!out) throw new Error('usage: node scripts/make_dev_model.mjs <out_dir>');
mkdirSync(out, { recursive: true });

// GPT-2's byte -> printable character table (same as the library's tokenizer).
const byteChar = [];
for (let b = 0, next = 256; b < 256; b++) {
  const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  byteChar[b] = String.fromCharCode(printable ? b : next++);
}

// Vocabulary: the 256 bytes, then whole-word merges for common words (left to right), so that
// typical sentences become word-sized tokens as with a trained tokenizer.
const vocab = new Map(byteChar.map((c, i) => [c, i]));
const merges = [];
const words = ('the animal didn t cross street because it was too tired a of and to in that is he for on with as '
  + 'his they at be this from have or by one had not but what all were when we there can an your which their '
  + 'said if do will each about how up out them then she many some so these would other into has more her two '
  + 'like him see time could no make than first been its who now people my made over did down only way find '
  + 'use may water long little very after words called just where most know write poem cat sat mat dog ran').split(' ');
const ranks = new Map();
// Applies the merges learned so far (lowest rank first, as the library's tokenizer does).
function bpe(parts) {
  for (;;) {
    let best = -1, bestRank = Infinity;
    for (let i = 0; i + 1 < parts.length; i++) {
      const r = ranks.get(parts[i] + ' ' + parts[i + 1]);
      if (r !== undefined && r < bestRank) { bestRank = r; best = i; }
    }
    if (best < 0) return parts;
    parts = [...parts.slice(0, best), parts[best] + parts[best + 1], ...parts.slice(best + 2)];
  }
}
for (const word of words) {
  for (const form of [word, ' ' + word, word[0].toUpperCase() + word.slice(1), ' ' + word[0].toUpperCase() + word.slice(1)]) {
    // Add merges until the form encodes as one token.
    let parts = bpe(Array.from(new TextEncoder().encode(form), (b) => byteChar[b]));
    while (parts.length > 1) {
      const pair = `${parts[0]} ${parts[1]}`;
      ranks.set(pair, merges.length);
      merges.push(pair);
      if (!vocab.has(parts[0] + parts[1])) vocab.set(parts[0] + parts[1], vocab.size);
      parts = bpe(parts);
    }
  }
}
vocab.set('<|endoftext|>', vocab.size);
const V = vocab.size;

const config = {
  architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', vocab_size: V, n_positions: 128, n_ctx: 128,
  n_embd: 128, n_layer: 4, n_head: 4, activation_function: 'gelu_new', layer_norm_epsilon: 1e-5,
  bos_token_id: V - 1, eos_token_id: V - 1, torch_dtype: 'float32',
};

const fill = randomFill(12345);

const C = config.n_embd;
const tensors = {
  'wte.weight': [[V, C], fill(V * C, 0.3)],
  'wpe.weight': [[config.n_positions, C], fill(config.n_positions * C, 0.3)],
  'ln_f.weight': [[C], fill(C, 0, 1)], 'ln_f.bias': [[C], fill(C, 0)],
};
for (let l = 0; l < config.n_layer; l++) {
  // Large query/key weights make the random heads peaky, so the views have something to show.
  Object.assign(tensors, {
    [`h.${l}.ln_1.weight`]: [[C], fill(C, 0, 1)], [`h.${l}.ln_1.bias`]: [[C], fill(C, 0)],
    [`h.${l}.attn.c_attn.weight`]: [[C, 3 * C], fill(C * 3 * C, 0.12)], [`h.${l}.attn.c_attn.bias`]: [[3 * C], fill(3 * C, 0.02)],
    [`h.${l}.attn.c_proj.weight`]: [[C, C], fill(C * C, 0.05)], [`h.${l}.attn.c_proj.bias`]: [[C], fill(C, 0.02)],
    [`h.${l}.ln_2.weight`]: [[C], fill(C, 0, 1)], [`h.${l}.ln_2.bias`]: [[C], fill(C, 0)],
    [`h.${l}.mlp.c_fc.weight`]: [[C, 4 * C], fill(C * 4 * C, 0.05)], [`h.${l}.mlp.c_fc.bias`]: [[4 * C], fill(4 * C, 0.02)],
    [`h.${l}.mlp.c_proj.weight`]: [[4 * C, C], fill(4 * C * C, 0.05)], [`h.${l}.mlp.c_proj.bias`]: [[C], fill(C, 0.02)],
  });
}

const bytes = writeSafetensors(join(out, 'model.safetensors'), tensors, { format: 'pt', note: 'random weights for demo development' });
writeFileSync(join(out, 'config.json'), JSON.stringify(config, null, 1));
writeFileSync(join(out, 'vocab.json'), JSON.stringify(Object.fromEntries(vocab)));
writeFileSync(join(out, 'merges.txt'), '#version: 0.2\n' + merges.join('\n') + '\n');
writeFileSync(join(out, 'MODEL_CARD.md'), '# Random development model\n\nRandom weights. Not a trained model; for developing the demo only.\n');
console.log(`dev model: ${out} (vocab ${V}, ${(bytes / 1e6).toFixed(1)} MB)`);
