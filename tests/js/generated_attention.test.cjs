// The attention of generated tokens, read from the KV-cache steps (generate's `attention` option),
// against a full forward over the prompt and the generated tokens, in all three builds: GPT-2 and
// a Llama-family checkpoint (tokenAttention and onToken's events: row p of every layer and head at
// token p's position), BART (each output step's decoder self- and cross-attention row against the
// teacher-forced run's rows). Float32 agreement within 2e-5.
const fs = require('node:fs');
const path = require('node:path');
const { root, variants, load } = require('./helpers.cjs');
const { checkpoint, modelFiles } = require('./llama_checkpoint.cjs');

const TOL = 2e-5;
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));

/** Row `p` (first p + 1 keys) of every layer and head of a run's L x H x n x n attention. */
function rowOf(attention, LH, n, p) {
  const out = new Float32Array(LH * (p + 1));
  for (let lh = 0; lh < LH; lh++) out.set(attention.subarray((lh * n + p) * n, (lh * n + p) * n + p + 1), lh * (p + 1));
  return out;
}

const maxDiff = (a, b) => {
  expect(a.length).toBe(b.length);
  return a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
};

/** generate with attention, then the full forward: every token's rows agree, the events' too. */
async function checkDecoder(model, prompt, LH) {
  const events = [];
  const out = await model.generate(prompt, { maxNewTokens: 6, attention: true, onToken: (e) => events.push(e) });
  expect(out.tokens.length).toBeGreaterThan(2);
  expect(out.tokenAttention).toHaveLength(out.tokens.length);
  const all = [...out.promptTokens, ...out.tokens], n = all.length;
  const full = model.run(all, { attention: true }).attention;
  let worst = 0;
  out.tokens.forEach((_, i) => {
    const p = out.promptTokens.length + i;
    worst = Math.max(worst, maxDiff(out.tokenAttention[i], rowOf(full, LH, n, p)));
    expect(events[i].attention).toEqual(out.tokenAttention[i]);
  });
  expect(worst).toBeLessThan(TOL);
  // Without the option, none is kept.
  expect((await model.generate(prompt, { maxNewTokens: 2 })).tokenAttention).toBeUndefined();
}

describe.each(variants)('%s build', (variant) => {
  let mod;
  beforeAll(async () => { mod = await load(variant); });

  test('GPT-2: each generated token\'s rows as the full forward\'s', async () => {
    const dir = path.join(root, 'tests/fixtures/gpt2/f32_wider'), config = readJson(path.join(dir, 'config.json'));
    const vocab = Object.fromEntries(Array.from({ length: config.vocab_size }, (_, i) => [String.fromCharCode(0x21 + i), i]));
    const model = await mod.loadModel({ config, weights: fs.readFileSync(path.join(dir, 'model.safetensors')), tokenizer: { vocab, merges: '' } });
    try {
      await checkDecoder(model, [5, 27, 0, 18], config.n_layer * config.n_head);
    } finally {
      model.dispose();
    }
  });

  test('Llama family (grouped K/V heads, rotary positions): the same', async () => {
    const config = { model_type: 'qwen2', vocab_size: 23, max_position_embeddings: 64, hidden_size: 16, intermediate_size: 24, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, rms_norm_eps: 1e-5, bos_token_id: 0, eos_token_id: 22, hidden_act: 'silu', tie_word_embeddings: false };
    const model = await mod.loadModel(modelFiles(config, checkpoint(config, 9)));
    try {
      await checkDecoder(model, [0, 5, 9, 2, 17], config.num_hidden_layers * config.num_attention_heads);
    } finally {
      model.dispose();
    }
  });

  test('BART: each output step\'s decoder self- and cross-attention as the teacher-forced rows', async () => {
    const dir = path.join(root, 'tests/fixtures/bart/f32_prefixed'), config = readJson(path.join(dir, 'config.json'));
    const model = await mod.loadModel(dir);
    try {
      const out = model.generate('abcde', { maxNewTokens: 8, attention: true });
      const T = out.outputTexts.length, S = out.sourceTokens.length, LH = config.decoder_layers * config.decoder_attention_heads;
      expect(T).toBeGreaterThan(2);
      expect(out.tokenAttention).toHaveLength(T);
      let worst = 0;
      out.tokenAttention.forEach((step, t) => {
        worst = Math.max(worst, maxDiff(step.self, rowOf(out.selfAttention, LH, T, t)));
        const cross = new Float32Array(LH * S);
        for (let lh = 0; lh < LH; lh++) cross.set(out.crossAttention.subarray((lh * T + t) * S, (lh * T + t + 1) * S), lh * S);
        worst = Math.max(worst, maxDiff(step.cross, cross));
      });
      expect(worst).toBeLessThan(TOL);
      expect(model.generate('abcde', { maxNewTokens: 8, beams: 2, attention: true }).tokenAttention).toBeUndefined();
    } finally {
      model.dispose();
    }
  });
});
