// A small BERT, BART and GPT-2 loaded at each dtype (f32, f16, q8, q4) against float64 references
// (tests/fixtures/lowbit, written by tests/fixtures/generate_lowbit_fixtures.py): the reference at each
// dtype computes on the weights as that dtype holds them, quantized by an independent quantizer written
// from the Q8_0 / Q4_0 definitions (tests/fixtures/lowbit_quant.py), with the activations quantized per
// block of 32 before each 8- or 4-bit product as the core does. Against it the outputs differ by
// float32 rounding alone; against the float32 reference by what the storage costs. Greedy outputs
// (BART, GPT-2) equal the reference's at the same dtype. Then the BERT and BART PyTorch fixtures,
// whose sizes allow only f32 and f16, at those two.
const fs = require('node:fs');
const path = require('node:path');
const { root, variants, load, relativeGap } = require('./helpers.cjs');

const dir = (name) => path.join(root, 'tests/fixtures/lowbit', name);
const expected = Object.fromEntries(['bert', 'bart', 'gpt2'].map((name) =>
  [name, JSON.parse(fs.readFileSync(path.join(dir(name), 'expected.json'), 'utf8'))]));
const DTYPES = ['f32', 'f16', 'q8', 'q4'];

// Largest |ours - reference at the same dtype| over an output, as a fraction of its largest
// magnitude: float32 rounding (measured on the 3 builds: at most 2.2e-6, BART's cross-attention at f16
// on the scalar build; 1e-7 to 9e-7 elsewhere).
const SAME_WEIGHTS = 1e-5;
// The same against the float32 reference: what each storage costs these random models (measured,
// largest over each model's outputs and the 3 builds: BERT f16 7.4e-4, q8 2.3e-2, q4 0.20; BART f16
// 2.7e-3, q8 4.1e-2, q4 0.50; GPT-2 logits f16 4.1e-4, q8 2.3e-2, q4 0.16), about 1.5 times that.
const VS_F32 = {
  bert: { f32: SAME_WEIGHTS, f16: 1.2e-3, q8: 3.5e-2, q4: 0.3 },
  bart: { f32: SAME_WEIGHTS, f16: 4e-3, q8: 6e-2, q4: 0.75 },
  gpt2: { f32: SAME_WEIGHTS, f16: 1e-3, q8: 3.5e-2, q4: 0.25 },
};

/** Checks one output against the references at its dtype and at f32. */
function expectOutput(name, dtype, what, got, same, f32) {
  const gap = relativeGap(got, same);
  if (!(gap <= SAME_WEIGHTS)) throw new Error(`${what} at ${dtype}: ${gap} of its largest value from the reference on the same weights`);
  const cost = relativeGap(got, f32);
  if (!(cost <= VS_F32[name][dtype])) throw new Error(`${what} at ${dtype}: ${cost} from the float32 reference (bound ${VS_F32[name][dtype]})`);
}

test('the fixtures: at 16, 8 and 4 bits the references differ from float32\'s, so storage ignored would fail', () => {
  for (const dtype of ['f16', 'q8', 'q4']) {
    expect(relativeGap(expected.bert.outputs[dtype][0].hidden, expected.bert.outputs.f32[0].hidden)).toBeGreaterThan(30 * SAME_WEIGHTS);
    expect(relativeGap(expected.bart.outputs[dtype][0].logits, expected.bart.outputs.f32[0].logits)).toBeGreaterThan(30 * SAME_WEIGHTS);
    expect(relativeGap(expected.gpt2.outputs[dtype].logits, expected.gpt2.outputs.f32.logits)).toBeGreaterThan(30 * SAME_WEIGHTS);
  }
  // No quantized activation of the references is near a rounding tie (the generator's condition).
  for (const name of ['bert', 'bart', 'gpt2'])
    for (const dtype of ['q8', 'q4']) expect(expected[name].tie_margin[dtype]).toBeGreaterThanOrEqual(1e-4);
});

describe.each(variants)('%s build', (variant) => {
  test.each(DTYPES)('BERT at %s: hidden states, attention, MLM logits', async (dtype) => {
    const attn = await load(variant);
    const want = expected.bert;
    const model = await attn.loadModel(dir('bert'), { dtype });
    try {
      want.sequences.forEach((s, i) => {
        const r = model.run({ tokens: s.input_ids, tokenTypes: s.token_type_ids }, { attention: true, logits: true });
        const same = want.outputs[dtype][i], f32 = want.outputs.f32[i];
        expectOutput('bert', dtype, `sequence ${i} hidden`, r.hidden, same.hidden, f32.hidden);
        expectOutput('bert', dtype, `sequence ${i} attention`, r.attention, same.attention, f32.attention);
        expectOutput('bert', dtype, `sequence ${i} MLM logits`, r.logits, same.mlm_logits, f32.mlm_logits);
      });
    } finally {
      model.dispose();
    }
  });

  test.each(DTYPES)('BART at %s: encoder output, logits, cross-attention; greedy output', async (dtype) => {
    const attn = await load(variant);
    const want = expected.bart;
    const model = await attn.loadModel(dir('bart'), { dtype });
    try {
      want.outputs[dtype].forEach((same, i) => {
        const f32 = want.outputs.f32[i];
        const r = model.run(same.source, same.decoder_input);
        expect(r.sourceTokens).toEqual(same.source_ids);
        expectOutput('bart', dtype, `${same.source} encoder output`, r.encoderOutput, same.memory, f32.memory);
        expectOutput('bart', dtype, `${same.source} logits`, r.logits, same.logits, f32.logits);
        expectOutput('bart', dtype, `${same.source} cross-attention`, r.crossAttention, same.cross_attention, f32.cross_attention);
        // Every reference choice wins by >= 0.02 log-probability: the tokens must be the same.
        expect(model.generate(same.source, { maxNewTokens: want.max_new_tokens }).tokens).toEqual(same.greedy);
      });
    } finally {
      model.dispose();
    }
  });

  test.each(DTYPES)('GPT-2 at %s: the prompt\'s logits; greedy tokens = PyTorch\'s on the same weights', async (dtype) => {
    const attn = await load(variant);
    const want = expected.gpt2, same = want.outputs[dtype];
    const model = await attn.loadModel(dir('gpt2'), { dtype });
    try {
      expectOutput('gpt2', dtype, 'prompt logits', model.run(want.prompt).logits, same.logits, want.outputs.f32.logits);
      const { tokens } = await model.generate(want.prompt, { maxNewTokens: same.greedy.length });
      expect(tokens.length).toBe(same.greedy.length);
      // Where the tokens part, PyTorch's own top-2 margin must be within our logits' error there.
      const parts = tokens.findIndex((t, i) => t !== same.greedy[i]);
      if (parts >= 0) {
        const largest = Math.max(...same.logits.map(Math.abs));
        expect(same.margins[parts]).toBeLessThanOrEqual(2 * SAME_WEIGHTS * largest);
      }
    } finally {
      model.dispose();
    }
  });
});

// The BERT and BART PyTorch fixtures (tests/fixtures/bert, bart: sizes 16 to 80, so no q8 / q4) at f32
// and f16: a 16-bit checkpoint converts exactly either way (BF16 to f16 too: no weight is below f16's
// normal range), so it stays within float32 rounding of its reference (measured <= 2.0e-6 of the
// largest value); an F32 checkpoint at f16 moves by the weights' rounding (measured: BERT 7.1e-4, BART
// 1.6e-3 of the largest value), and BART's greedy outputs stay the reference's.
const OLD_AT_F16 = { bert: 1.5e-3, bart: 3e-3 };

function oldBert(name) {
  const folder = path.join(root, 'tests/fixtures/bert', name);
  const config = JSON.parse(fs.readFileSync(path.join(folder, 'config.json'), 'utf8'));
  const words = Array.from({ length: config.vocab_size - 5 }, (_, i) => `t${i + 5}`);
  return {
    files: { config, weights: fs.readFileSync(path.join(folder, 'model.safetensors')),
      tokenizer: { vocab: ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...words].join('\n') } },
    want: JSON.parse(fs.readFileSync(path.join(folder, 'expected.json'), 'utf8')),
  };
}

describe.each(variants)('%s build: the BERT and BART PyTorch fixtures at f32 and f16', (variant) => {
  test.each(['bf16_gamma_beta', 'f16_base_pooler', 'f32_mlm_prefixed'])('BERT %s', async (name) => {
    const attn = await load(variant);
    const { files, want } = oldBert(name);
    for (const dtype of ['f32', 'f16']) {
      const bound = dtype === 'f16' && name.startsWith('f32') ? OLD_AT_F16.bert : SAME_WEIGHTS;
      const model = await attn.loadModel(files, { dtype });
      want.sequences.forEach((s, i) => {
        const r = model.run({ tokens: s.input_ids, tokenTypes: s.token_type_ids }, { attention: true, logits: model.hasMaskedLmHead });
        const w = want.per_sequence[i];
        expect(relativeGap(r.hidden, w.hidden)).toBeLessThanOrEqual(bound);
        expect(relativeGap(r.attention, w.attention)).toBeLessThanOrEqual(bound);
        if (w.mlm_logits) expect(relativeGap(r.logits, w.mlm_logits)).toBeLessThanOrEqual(bound);
      });
      model.dispose();
    }
  });

  test.each(['f16_embed_tokens', 'f32_prefixed'])('BART %s', async (name) => {
    const attn = await load(variant);
    const folder = path.join(root, 'tests/fixtures/bart', name);
    const want = JSON.parse(fs.readFileSync(path.join(folder, 'reference.json'), 'utf8'));
    for (const dtype of ['f32', 'f16']) {
      const bound = dtype === 'f16' && name.startsWith('f32') ? OLD_AT_F16.bart : SAME_WEIGHTS;
      const model = await attn.loadModel(folder, { dtype });
      for (const c of want.cases) {
        const r = model.run(c.source, c.decoder_input);
        expect(relativeGap(r.encoderOutput, c.memory)).toBeLessThanOrEqual(bound);
        expect(relativeGap(r.logits, c.logits)).toBeLessThanOrEqual(bound);
        expect(relativeGap(r.crossAttention, c.cross_attention)).toBeLessThanOrEqual(bound);
        expect(model.generate(c.source, { maxNewTokens: want.max_new_tokens }).tokens).toEqual(c.greedy.tokens);
      }
      model.dispose();
    }
  });
});
