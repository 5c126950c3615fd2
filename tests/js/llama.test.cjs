// The Llama family through the package: tiny random checkpoints in Hugging Face's exact layout,
// loaded by loadModel, compared with a float64 reference written from the architecture
// (llama_checkpoint.cjs), logits and attention, in all three builds, held as float32 and as
// float16; greedy generation through the KV cache against the reference's own greedy continuation.
const { variants, load } = require('./helpers.cjs');
const { expectNamed } = require('./fuzz.cjs');
const { argmax, checkpoint, frequencies, maxDiff, modelFiles, reference, rotate, safetensors, tokenizerFiles } = require('./llama_checkpoint.cjs');

// --- the models tested -------------------------------------------------------------------------

const BASE = { vocab_size: 23, max_position_embeddings: 64, hidden_size: 16, intermediate_size: 24, num_hidden_layers: 2, num_attention_heads: 4, rms_norm_eps: 1e-5, bos_token_id: 0, eos_token_id: 1, hidden_act: 'silu' };
const CASES = {
  'llama, 1 K/V head (multi-query), tied head': { ...BASE, model_type: 'llama', num_key_value_heads: 1, tie_word_embeddings: true },
  'qwen2, 2 K/V heads, q/k/v biases, untied head, rope_theta 1e6': { ...BASE, model_type: 'qwen2', num_key_value_heads: 2, tie_word_embeddings: false, rope_theta: 1e6 },
  'mistral, 4 K/V heads, linear rope_scaling, sliding window 4 (of 11 positions)': { ...BASE, model_type: 'mistral', num_key_value_heads: 4, tie_word_embeddings: false, sliding_window: 4, rope_scaling: { type: 'linear', factor: 2 } },
  // Qwen3-0.6B's shape in small: head_dim 6 x 4 heads = 24 != hidden 16, q/k norms, no biases.
  'qwen3, 2 K/V heads, head_dim 6 (not hidden / heads), q_norm and k_norm': { ...BASE, model_type: 'qwen3', num_key_value_heads: 2, head_dim: 6, attention_bias: false, tie_word_embeddings: true, rope_theta: 1e6 },
  // SmolLM3-3B's no_rope_layer_interval 4 in small: 4 layers, the last without rotation.
  'smollm3, 4 layers, no_rope_layer_interval 4 (layer 3 not rotated)': { ...BASE, model_type: 'smollm3', num_hidden_layers: 4, num_key_value_heads: 2, no_rope_layer_interval: 4, tie_word_embeddings: true },
  'smollm3, no_rope_layers [0, 1] given': { ...BASE, model_type: 'smollm3', num_key_value_heads: 4, no_rope_layers: [0, 1], tie_word_embeddings: false },
  // Phi-3-mini-4k's layout in small: fused qkv_proj and gate_up_proj, a sliding window (its 2047).
  'phi3, fused qkv_proj and gate_up_proj, 2 K/V heads, sliding window 5': { ...BASE, model_type: 'phi3', num_key_value_heads: 2, sliding_window: 5, tie_word_embeddings: false },
  // Phi-4-mini's layout in small: a quarter of each head unrotated, longrope with its short
  // factors (the runs stay within original_max_position_embeddings 32 of 64) and its attention
  // factor from the context ratio.
  'phi3, partial_rotary_factor 0.75, longrope': { ...BASE, model_type: 'phi3', num_key_value_heads: 2, head_dim: 8, partial_rotary_factor: 0.75, tie_word_embeddings: true,
    original_max_position_embeddings: 32, rope_scaling: { type: 'longrope', short_factor: [1, 1.5, 3], long_factor: [2, 5, 11] } },
  // Gemma-3-270m's layout in small: head_dim 6, q/k norms, 3 layers sliding, sliding, full
  // (layer_types), a window of 4 of 11 positions, rope bases 1e6 / 1e4,
  // query_pre_attn_scalar, a final softcap.
  'gemma3_text, local and global layers, window 4, softcap': { ...BASE, model_type: 'gemma3_text', hidden_act: undefined, hidden_activation: 'gelu_pytorch_tanh', num_hidden_layers: 3, num_key_value_heads: 2, head_dim: 6,
    sliding_window: 4, layer_types: ['sliding_attention', 'sliding_attention', 'full_attention'], rope_theta: 1e6, rope_local_base_freq: 1e4,
    query_pre_attn_scalar: 5, final_logit_softcapping: 4, tie_word_embeddings: true },
};
const TOKENS = [0, 5, 9, 2, 2, 17, 11, 4, 20, 3, 8];
const VOCAB_LETTERS = 'abcdefghijklmnopqrstu';  // ids 2..22 (llama_checkpoint's tokenizer)

// Largest differences seen, printed at the end (the report's figures).
const worst = {};
afterAll(() => console.log('llama vs float64 (max abs):', JSON.stringify(worst)));

describe.each(variants)('%s build', (variant) => {
  let mod;
  beforeAll(async () => { mod = await load(variant); });

  describe.each(Object.keys(CASES))('%s', (name) => {
    const config = CASES[name], tensors = checkpoint(config, name.length);
    const files = () => modelFiles(config, tensors);

    test.each([['auto', 2e-5, 2e-6], ['f16', 3e-2, 5e-3]])('dtype %s: logits and attention as the float64 reference', async (dtype, logitTol, attentionTol) => {
      const model = await mod.loadModel(files(), { dtype });
      try {
        expect(model.type).toBe('llama');
        const run = model.run(TOKENS, { attention: true });
        const ref = reference(config, tensors, TOKENS);
        const logitErr = maxDiff(run.logits, ref.logits), attentionErr = maxDiff(run.attention, ref.attention);
        const key = `${dtype} ${config.model_type}`;
        worst[key] = Math.max(worst[key] ?? 0, logitErr, attentionErr);
        expect(logitErr).toBeLessThan(logitTol);
        expect(attentionErr).toBeLessThan(attentionTol);
        expect(run.attention.length).toBe(config.num_hidden_layers * 4 * TOKENS.length * TOKENS.length);
      } finally {
        model.dispose();
      }
    });

    test('greedy generation through the KV cache continues as the reference does; predictNext and loss agree', async () => {
      const model = await mod.loadModel(files());
      try {
        const prompt = TOKENS.slice(0, 4), out = await model.generate(prompt, { maxNewTokens: 6 });
        // The reference's greedy continuation (stopping at </s>, id 1, as the model's eos).
        const want = [];
        for (let seq = [...prompt]; want.length < 6;) {
          const { logits } = reference(config, tensors, seq), next = argmax(logits.subarray((seq.length - 1) * 23, seq.length * 23));
          if (next === 1) break;
          want.push(next);
          seq.push(next);
        }
        expect(out.tokens).toEqual(want);
        const run = model.run(TOKENS);
        expect(model.predictNext(run, 1)[0].id).toBe(argmax(run.logits.subarray((TOKENS.length - 1) * 23)));
        expect(model.loss(run).loss).toBeGreaterThan(0);
      } finally {
        model.dispose();
      }
    });
  });
});

describe.each(variants)('%s build, 8- and 4-bit storage', (variant) => {
  // Quantized blocks run along a matrix's inputs, 32 at a time: a 32-wide model.
  const config = { ...BASE, model_type: 'llama', hidden_size: 32, intermediate_size: 64, num_key_value_heads: 2, tie_word_embeddings: false, rope_theta: 5e5 };
  const tensors = checkpoint(config, 21);
  // Relative to the largest logit: 8 bits hold a weight to ~0.4 % of its block's largest (and the
  // products quantize the activations too); 4 bits to ~7 %. This random model amplifies them:
  // weights rounded to Q8_0 alone (in the reference) move its logits by 2.4 % of the largest.
  test.each([['q8', 0.04, 0.1], ['q4', 0.4, 0.6]])('dtype %s: logits within %s x the largest logit of the float64 reference; attention within %s', async (dtype, tol, attentionTol) => {
    const mod = await load(variant);
    const model = await mod.loadModel(modelFiles(config, tensors), { dtype });
    try {
      const run = model.run(TOKENS, { attention: true }), ref = reference(config, tensors, TOKENS);
      const scale = ref.logits.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
      const logitErr = maxDiff(run.logits, ref.logits) / scale, attentionErr = maxDiff(run.attention, ref.attention);
      worst[`${dtype} llama (relative to the largest logit)`] = Math.max(worst[`${dtype} llama (relative to the largest logit)`] ?? 0, logitErr);
      worst[`${dtype} llama attention`] = Math.max(worst[`${dtype} llama attention`] ?? 0, attentionErr);
      expect(logitErr).toBeLessThan(tol);
      expect(attentionErr).toBeLessThan(attentionTol);
    } finally {
      model.dispose();
    }
  });
});

describe.each(variants)('%s build, a bfloat16 checkpoint', (variant) => {
  // SmolLM2 and most Llama-family checkpoints are stored in bfloat16: held as stored ('auto') and
  // converted to float32, the numbers are the float64 reference's on the same (bfloat16) values.
  const config = CASES['llama, 1 K/V head (multi-query), tied head'], tensors = checkpoint(config, 51, true);
  test.each(['auto', 'f32'])('dtype %s', async (dtype) => {
    const mod = await load(variant);
    const model = await mod.loadModel({ ...modelFiles(config, tensors), weights: safetensors(tensors, 'BF16') }, { dtype });
    try {
      const run = model.run(TOKENS, { attention: true }), ref = reference(config, tensors, TOKENS);
      expect(maxDiff(run.logits, ref.logits)).toBeLessThan(2e-5);
      expect(maxDiff(run.attention, ref.attention)).toBeLessThan(2e-6);
    } finally {
      model.dispose();
    }
  });
});

describe.each(variants)('%s build, beam search', (variant) => {
  // Beams reorder the KV cache (K/V heads, rotated keys) between steps: every hypothesis's score
  // must be the reference's log-probability of its tokens (lengthPenalty 0: no normalization).
  const config = CASES['qwen2, 2 K/V heads, q/k/v biases, untied head, rope_theta 1e6'], tensors = checkpoint(config, 41);
  test('each hypothesis scores its tokens as the float64 reference does', async () => {
    const mod = await load(variant);
    const model = await mod.loadModel(modelFiles(config, tensors));
    try {
      const prompt = TOKENS.slice(0, 3);
      const out = await model.generate(prompt, { beams: 3, maxNewTokens: 4, lengthPenalty: 0 });
      expect(out.hypotheses.length).toBe(3);
      for (const h of out.hypotheses) {
        const seq = [...prompt, ...h.tokens], { logits } = reference(config, tensors, h.tokens.length < 4 ? [...seq, 1] : seq);
        let logProb = 0;
        const scored = h.tokens.length < 4 ? [...h.tokens, 1] : h.tokens;  // a hypothesis shorter than 4 ended with </s>
        scored.forEach((t, i) => {
          const row = logits.subarray((prompt.length - 1 + i) * 23, (prompt.length + i) * 23), max = Math.max(...row);
          logProb += row[t] - max - Math.log(row.reduce((a, x) => a + Math.exp(x - max), 0));
        });
        expect(Math.abs(h.score - logProb)).toBeLessThan(1e-4);
      }
    } finally {
      model.dispose();
    }
  });
});

describe('LlamaModel specifics', () => {
  let mod;
  beforeAll(async () => { mod = await load('simd'); });
  const config = CASES['qwen2, 2 K/V heads, q/k/v biases, untied head, rope_theta 1e6'];
  const tensors = checkpoint(config, 7);
  const files = (c = config, t = tensors) => modelFiles(c, t);

  test('a gemma3 (image and text) checkpoint: its text_config and language model\'s tensors, the vision tower unread', async () => {
    const text = CASES['gemma3_text, local and global layers, window 4, softcap'], textTensors = checkpoint(text, 5);
    const ref = reference(text, textTensors, TOKENS);
    // transformers' current names (model.language_model.X), then the earlier ones (language_model.model.X).
    for (const rename of [(n) => n.replace(/^model\./, 'model.language_model.'), (n) => `language_model.${n}`]) {
      const renamed = Object.fromEntries(Object.entries(textTensors).map(([n, t]) => [rename(n), t]));
      renamed['model.vision_tower.vision_model.post_layernorm.weight'] = { shape: [3], data: [1, 2, 3] };
      const { bos_token_id, eos_token_id, ...inner } = text;
      const model = await mod.loadModel(modelFiles({ model_type: 'gemma3', bos_token_id, eos_token_id, text_config: { ...inner, model_type: 'gemma3_text' },
        vision_config: { hidden_size: 3 } }, renamed));
      try {
        expect(model.config).toMatchObject({ model_type: 'gemma3', window_layers: [true, true, false], sandwich_norms: true });
        expect(maxDiff(model.run(TOKENS).logits, ref.logits)).toBeLessThan(2e-5);
      } finally {
        model.dispose();
      }
    }
  });

  test('kvHeadOf: each query head reads K/V head floor(h / (heads / kvHeads)); bad heads are named', async () => {
    const model = await mod.loadModel(files());
    try {
      expect([0, 1, 2, 3].map((h) => model.kvHeadOf(h))).toEqual([0, 0, 1, 1]);
      for (const bad of [4, -1, 1.5, '0', null, undefined, NaN])
        await expectNamed(() => model.kvHeadOf(bad), /kvHeadOf: head must be an integer in \[0, 3\]/);
    } finally {
      model.dispose();
    }
  });

  test('the trace holds q per query head and k, v per K/V head, after and before the rotation', async () => {
    const model = await mod.loadModel(files());
    try {
      const { trace } = model.run(TOKENS.slice(0, 5), { traceLayer: 1 });
      expect(trace.shapes.q).toEqual([1, 4, 5, 4]);
      expect(trace.shapes.k).toEqual([1, 2, 5, 4]);
      expect(trace.k.length).toBe(2 * 5 * 4);
      expect(trace.weights.length).toBe(4 * 5 * 5);
      // Each row before the rotation, rotated at its position, is the row after it.
      const freq = frequencies(config, 4);
      for (const [before, after, heads] of [[trace.qBeforeRotary, trace.q, 4], [trace.kBeforeRotary, trace.k, 2]]) {
        expect(before.length).toBe(after.length);
        const rotated = Float64Array.from(before);
        for (let h = 0; h < heads; h++) for (let i = 0; i < 5; i++) rotate(rotated, (h * 5 + i) * 4, 1, 4, freq, i);
        expect(maxDiff(rotated, after)).toBeLessThan(1e-5);
        expect(maxDiff(before, after)).toBeGreaterThan(1e-3);
      }
    } finally {
      model.dispose();
    }
  });

  test('text goes through tokenizer.json; unsupported variants are refused by name before any weight is read', async () => {
    const model = await mod.loadModel(files());
    try {
      expect(model.run('abc').tokens).toEqual([2, 3, 4]);
    } finally {
      model.dispose();
    }
    const refused = async (change, pattern) => {
      // Weights that are not a safetensors file: the config must be refused first.
      await expect(mod.loadModel({ config: { ...config, ...change }, weights: new Uint8Array(3), tokenizer: tokenizerFiles() })).rejects.toThrow(pattern);
    };
    await refused({ rope_scaling: { rope_type: 'yarn', factor: 4 } }, /rope_scaling type "yarn" is not supported \(supported: linear, llama3, longrope\)/);
    await refused({ hidden_act: 'gelu' }, /hidden_act "gelu" is not supported/);
    await refused({ partial_rotary_factor: 0.5 }, /partial_rotary_factor 0.5 is not supported for qwen2/);
    await refused({ model_type: 'phi3', partial_rotary_factor: 0.3 }, /partial_rotary_factor must rotate an even number of a head's 4 values, got 0.3/);
    await refused({ model_type: 'phi3', rope_scaling: { type: 'longrope', short_factor: [1], long_factor: [1, 2] } },
      /rope_scaling short_factor must be 2 positive numbers \(half the rotated head\), got Array\(1\)/);
    await refused({ model_type: 'gemma3_text', hidden_act: undefined, layer_types: ['full_attention'] },
      /layer_types must be 2 values of "sliding_attention" or "full_attention" \(one per layer\), got Array\(1\)/);
    await refused({ model_type: 'gemma3_text', hidden_act: undefined, hidden_activation: 'silu' }, /hidden_activation "silu" is not supported \(gemma3_text uses gelu_pytorch_tanh\)/);
    await refused({ model_type: 'gemma3_text', hidden_act: undefined, use_bidirectional_attention: true }, /use_bidirectional_attention true \(an embedding model\) is not supported/);
    await refused({ num_key_value_heads: 3 }, /num_attention_heads \(4\) is not a multiple of num_key_value_heads \(3\)/);
    await refused({ use_sliding_window: true, sliding_window: 4 }, /use_sliding_window true is not supported for qwen2/);
    await refused({ model_type: 'mistral', sliding_window: 1e12 }, /sliding_window must be a positive integer up to 1048576 or null, got 1000000000000/);
    await refused({ model_type: 'smollm3', no_rope_layers: [1, 0, 1] }, /config.json: no_rope_layers must be 2 values of 0 or 1 \(one per layer\), got Array\(3\)/);
    await refused({ model_type: 'qwen3_moe' }, /model_type "qwen3_moe" is not supported \(this library runs: gpt2, bert, bart, llama, qwen2, qwen3, mistral, phi3, smollm3, gemma3_text, gemma3\)/);
  });

  test('a vocab_size padded past the tokenizer (as Qwen2\'s): those ids read as no text, and generation goes on', async () => {
    const padded = { ...config, vocab_size: 26 };
    const model = await mod.loadModel(files(padded, checkpoint(padded, 61)));
    try {
      // Near-uniform sampling: ids 23 to 25 (no token of the tokenizer) come up within a few
      // seeds (each run may also end early at </s>).
      let out;
      for (let seed = 1; seed < 50 && !out?.tokens.some((t) => t >= 23); seed++)
        out = await model.generate([0, 4, 5], { maxNewTokens: 30, temperature: 1000, seed });
      expect(out.tokens.some((t) => t >= 23)).toBe(true);
      // (tokenizer.json without a decoder: tokens joined by spaces, as Hugging Face's decode does)
      expect(out.text).toBe(out.tokens.filter((t) => t >= 2 && t < 23).map((t) => VOCAB_LETTERS[t - 2]).join(' '));
      const run = model.run([0, 24, 4]);
      expect(run.tokenTexts).toEqual(['<s>', '', 'c']);
      expect(model.predictNext(run, 26).filter((p) => p.id >= 23).map((p) => p.text)).toEqual(['', '', '']);
    } finally {
      model.dispose();
    }
  });

  test('a missing tensor is named with its Hugging Face name', async () => {
    const { 'model.layers.1.mlp.up_proj.weight': _, ...fewer } = tensors;
    await expect(mod.loadModel(files(config, fewer))).rejects.toThrow('loadModel: missing tensor "model.layers.1.mlp.up_proj.weight"');
  });
});
