// BART (encoder-decoder) against a float64 PyTorch reference (tests/fixtures/bart, written by
// tests/fixtures/generate_bart_fixtures.py, which re-runs the whole decoder at every step: no
// cache): encoder output, logits, encoder/decoder self-attention and cross-attention, and the
// greedy and beam-search outputs our KV-cached decoding must reproduce. Then hostile input.
const fs = require('node:fs');
const path = require('node:path');
const { variants, load, root, expectClose } = require('./helpers.cjs');

const dir = path.join(root, 'tests/fixtures/bart');
const cases = fs.readdirSync(dir).filter((d) => fs.existsSync(path.join(dir, d, 'reference.json'))).sort();
const reference = (name) => JSON.parse(fs.readFileSync(path.join(dir, name, 'reference.json'), 'utf8'));

test('fixtures exist for F32 ("model." prefix, final_logits_bias) and F16 (embed_tokens only, scaled embeddings)', () => {
  expect(cases).toEqual(['f16_embed_tokens', 'f32_prefixed']);
});

describe.each(variants)('%s build', (variant) => {
  test.each(cases)('%s: forward pass and decoding match the reference', async (name) => {
    const attn = await load(variant);
    const want = reference(name);
    const model = await attn.loadModel(path.join(dir, name));
    try {
      expect(model.type).toBe('bart');
      const tol = want.tolerance;
      for (const c of want.cases) {
        const r = model.run(c.source, c.decoder_input);
        expect(r.sourceTokens).toEqual(c.source_ids);
        expectClose(r.encoderOutput, c.memory, tol, `${c.source} encoder output`);
        expectClose(r.logits, c.logits, tol, `${c.source} logits`);
        expectClose(r.encoderAttention, c.encoder_attention, tol, `${c.source} encoder attention`);
        expectClose(r.selfAttention, c.self_attention, tol, `${c.source} decoder self-attention`);
        expectClose(r.crossAttention, c.cross_attention, tol, `${c.source} cross-attention`);

        const greedy = model.generate(c.source, { maxNewTokens: want.max_new_tokens });
        expect(greedy.tokens).toEqual(c.greedy.tokens);
        expect(Math.abs(greedy.score - c.greedy.score)).toBeLessThan(1e-3);

        const beam = model.generate(c.source, { beams: want.beams, maxNewTokens: want.max_new_tokens });
        expect(beam.hypotheses.map((h) => h.tokens)).toEqual(c.beam.map((h) => h.tokens));
        beam.hypotheses.forEach((h, i) => expect(Math.abs(h.score - c.beam[i].score)).toBeLessThan(1e-3));
        expect(beam.finished).toBe(c.beam[0].finished);
        // generate() returns the attention of its best output: the teacher-forced pass above.
        expectClose(beam.crossAttention, c.cross_attention, tol, `${c.source} generate's cross-attention`);
        const T = c.decoder_input.length, S = c.source_ids.length;
        expect(beam.outputTexts.length).toBe(T);
        expect(beam.crossAttention.length).toBe(model.config.decoder_layers * model.config.decoder_attention_heads * T * S);
      }
    } finally {
      model.dispose();
    }
  });
});

describe('hostile input', () => {
  let model;
  beforeAll(async () => { model = await (await load('simd')).loadModel(path.join(dir, 'f32_prefixed')); });
  afterAll(() => model.dispose());

  test('empty, too long and out-of-vocabulary input get named errors; the model stays usable', () => {
    expect(() => model.generate('')).toThrow('generate: the source is empty');
    expect(() => model.generate('a'.repeat(1000))).toThrow("generate: the source's 1002 tokens exceed the model's 20 positions");
    expect(() => model.generate([0, 99, 2])).toThrow('generate: token 99 at position 1 is outside the vocabulary of 23');
    expect(() => model.generate('abc', { beams: 0 })).toThrow('generate: beams must be an integer from 1 to 64, got 0');
    expect(() => model.run('abc', [])).toThrow('run: the decoder input is empty');
    expect(() => model.run('abc', [2, 23])).toThrow('run: decoder token 23 at position 1 is outside the vocabulary of 23');
    expect(() => model.pronounce('abc')).toThrow('pronounce: this model is not a grapheme-to-phoneme model');
    // Characters outside the vocabulary are <unk>, a defined behaviour.
    expect(model.run('a€b', [2]).sourceTokens).toEqual([0, 4, 3, 5, 2]);
    expect(model.generate('abc').tokens.length).toBeGreaterThan(0);
  });

  test('a hostile checkpoint gets the named errors of every model', async () => {
    const attn = await load('simd');
    const folder = path.join(dir, 'f32_prefixed');
    const config = JSON.parse(fs.readFileSync(path.join(folder, 'config.json'), 'utf8'));
    const weights = fs.readFileSync(path.join(folder, 'model.safetensors'));
    const tokenizer = { vocab: JSON.parse(fs.readFileSync(path.join(folder, 'vocab.json'), 'utf8')) };
    await expect(attn.loadModel({ config: { ...config, d_model: 15 }, weights, tokenizer }))
      .rejects.toThrow('d_model (15) is not divisible by the number of heads (4)');
    await expect(attn.loadModel({ config: { ...config, normalize_before: true }, weights, tokenizer }))
      .rejects.toThrow('pre-LayerNorm BART variants');
    await expect(attn.loadModel({ config: { ...config, activation_function: 'relu' }, weights, tokenizer }))
      .rejects.toThrow('activation_function "relu" is not supported');
    await expect(attn.loadModel({ config: { ...config, encoder_ffn_dim: 25 }, weights, tokenizer }))
      .rejects.toThrow('loadModel: tensor "model.encoder.layers.0.fc1.weight" has shape [24, 16] but config.json implies [25, 16]');
    await expect(attn.loadModel({ config, weights: weights.subarray(0, 1000), tokenizer })).rejects.toThrow(/safetensors/);
  });
});
