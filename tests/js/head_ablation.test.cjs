// Head ablation, run(input, { ablate: [{ layer, head, part? }] }), in all three builds:
// - the Llama family against the float64 reference (llama_checkpoint.cjs) of the same checkpoint
//   with the ablated heads' columns of o_proj set to zero, which is the same network;
// - GPT-2, BERT and BART (every attention: encoder self, decoder self, cross; BART's generate
//   through the KV cache too) against the package's plain forward of a rewritten checkpoint whose W^O rows of those heads are zero: another path to
//   the same numbers (the core zeroes the head outputs; here the weights that read them);
// - after an ablated call every head is on again; bad lists are named and the model stays usable.
const fs = require('node:fs');
const path = require('node:path');
const { api, root, variants, load } = require('./helpers.cjs');
const { expectNamed } = require('./fuzz.cjs');
const { checkpoint, maxDiff, modelFiles, reference, safetensors } = require('./llama_checkpoint.cjs');

const fixture = (family, name) => path.join(root, 'tests/fixtures', family, name);
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));

/** A safetensors file as { name: { shape, data } } (float32). */
function readTensors(bytes) {
  const out = {};
  for (const [name, t] of api.parseSafetensors(bytes).tensors) out[name] = { shape: t.shape, data: t.toFloat32() };
  return out;
}

/** A copy of the tensors with head `head`'s d inputs of W^O set to zero: its columns when W^O is
 * stored out x in (nn.Linear), its rows when in x out (GPT-2's Conv1D). */
function zeroHeadInputs(tensors, name, head, d, inputsAreRows) {
  const t = tensors[name], data = Float32Array.from(t.data), [rows, cols] = t.shape;
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) {
      const input = inputsAreRows ? r : c;
      if (input >= head * d && input < (head + 1) * d) data[r * cols + c] = 0;
    }
  return { ...tensors, [name]: { shape: t.shape, data } };
}

const LLAMA = { model_type: 'llama', vocab_size: 23, max_position_embeddings: 64, hidden_size: 16, intermediate_size: 24, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, rms_norm_eps: 1e-5, bos_token_id: 0, eos_token_id: 1, hidden_act: 'silu', tie_word_embeddings: false };
const LLAMA_TOKENS = [0, 5, 9, 2, 2, 17, 11, 4, 20, 3, 8];
const LLAMA_OFF = [{ layer: 0, head: 1 }, { layer: 1, head: 3 }, { layer: 1, head: 0 }];

describe.each(variants)('%s build', (variant) => {
  let mod;
  beforeAll(async () => { mod = await load(variant); });

  test('Llama (grouped K/V heads): logits and attention as the float64 forward without those heads', async () => {
    const tensors = checkpoint(LLAMA, 5), d = LLAMA.hidden_size / LLAMA.num_attention_heads;
    let zeroed = tensors;
    for (const { layer, head } of LLAMA_OFF) zeroed = zeroHeadInputs(zeroed, `model.layers.${layer}.self_attn.o_proj.weight`, head, d, false);
    const model = await mod.loadModel(modelFiles(LLAMA, tensors));
    try {
      const plain = model.run(LLAMA_TOKENS);
      const off = model.run(LLAMA_TOKENS, { attention: true, ablate: LLAMA_OFF });
      const ref = reference(LLAMA, zeroed, LLAMA_TOKENS);
      expect(maxDiff(off.logits, ref.logits)).toBeLessThan(2e-5);
      expect(maxDiff(off.attention, ref.attention)).toBeLessThan(2e-6);
      // The heads matter here: without them the logits move by far more than the tolerance.
      expect(maxDiff(off.logits, plain.logits)).toBeGreaterThan(1e-2);
      // Every head is on again after the call.
      expect(maxDiff(model.run(LLAMA_TOKENS).logits, plain.logits)).toBe(0);
    } finally {
      model.dispose();
    }
  });

  test('GPT-2: as the same checkpoint with those heads\' rows of c_proj set to zero', async () => {
    const dir = fixture('gpt2', 'f32_tiny'), config = readJson(path.join(dir, 'config.json'));
    const tokens = readJson(path.join(dir, 'expected.json')).tokens, d = config.n_embd / config.n_head;
    const tensors = readTensors(fs.readFileSync(path.join(dir, 'model.safetensors')));
    const off = [{ layer: 0, head: 2 }, { layer: 1, head: 0 }];
    let zeroed = tensors;
    for (const { layer, head } of off) zeroed = zeroHeadInputs(zeroed, `h.${layer}.attn.c_proj.weight`, head, d, true);
    const vocab = Object.fromEntries(Array.from({ length: config.vocab_size }, (_, i) => [String.fromCharCode(0x21 + i), i]));
    const files = (t) => ({ config, weights: safetensors(t), tokenizer: { vocab, merges: '' } });
    const model = await mod.loadModel(files(tensors)), other = await mod.loadModel(files(zeroed));
    try {
      const got = model.run(tokens, { attention: true, ablate: off }), want = other.run(tokens, { attention: true });
      expect(maxDiff(got.logits, want.logits)).toBeLessThan(1e-6);
      expect(maxDiff(got.attention, want.attention)).toBeLessThan(1e-7);
      expect(maxDiff(got.logits, model.run(tokens).logits)).toBeGreaterThan(1e-3);
    } finally {
      model.dispose();
      other.dispose();
    }
  });

  test('BERT: hidden states and masked-LM logits as the checkpoint with zeroed attention.output.dense columns; fillMask too', async () => {
    const dir = fixture('bert', 'f32_mlm_prefixed'), config = readJson(path.join(dir, 'config.json'));
    const d = config.hidden_size / config.num_attention_heads;
    const tensors = readTensors(fs.readFileSync(path.join(dir, 'model.safetensors')));
    const off = [{ layer: 1, head: 3 }, { layer: 0, head: 0 }, { layer: 0, head: 1 }];
    let zeroed = tensors;
    for (const { layer, head } of off) zeroed = zeroHeadInputs(zeroed, `bert.encoder.layer.${layer}.attention.output.dense.weight`, head, d, false);
    const vocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...Array.from({ length: config.vocab_size - 5 }, (_, i) => `t${i + 5}`)].join('\n');
    const files = (t) => ({ config, weights: safetensors(t), tokenizer: { vocab } });
    const model = await mod.loadModel(files(tensors)), other = await mod.loadModel(files(zeroed));
    try {
      const input = { tokens: [2, 9, 4, 17, 30, 3] };
      const got = model.run(input, { logits: true, attention: true, ablate: off }), want = other.run(input, { logits: true, attention: true });
      expect(maxDiff(got.hidden, want.hidden)).toBeLessThan(1e-5);
      expect(maxDiff(got.logits, want.logits)).toBeLessThan(1e-5);
      expect(maxDiff(got.attention, want.attention)).toBeLessThan(1e-6);
      expect(maxDiff(got.logits, model.run(input, { logits: true }).logits)).toBeGreaterThan(1e-3);
      const text = 't9 [MASK] t17 t30';
      const filled = model.fillMask(text, 5, { ablate: off })[0].predictions, plain = other.fillMask(text, 5)[0].predictions;
      expect(filled.map((p) => p.id)).toEqual(plain.map((p) => p.id));
      filled.forEach((p, i) => expect(Math.abs(p.probability - plain[i].probability)).toBeLessThan(1e-6));
    } finally {
      model.dispose();
      other.dispose();
    }
  });

  describe.each([
    ['encoder self-attention', 'self', 'model.encoder.layers'],
    ['decoder self-attention', 'decoder', 'model.decoder.layers'],
    ['cross-attention', 'cross', 'model.decoder.layers'],
  ])('BART %s', (what, part, prefix) => {
    test('as the checkpoint with those heads\' out_proj columns set to zero', async () => {
      const dir = fixture('bart', 'f32_prefixed'), config = readJson(path.join(dir, 'config.json'));
      const { source, decoder_input: decoderInput } = readJson(path.join(dir, 'reference.json')).cases[2];
      const heads = part === 'self' ? config.encoder_attention_heads : config.decoder_attention_heads, d = config.d_model / heads;
      const tensors = readTensors(fs.readFileSync(path.join(dir, 'model.safetensors')));
      const module = part === 'cross' ? 'encoder_attn' : 'self_attn';
      const off = [{ layer: 0, head: 3, part }, { layer: 1, head: 1, part }];
      let zeroed = tensors;
      for (const { layer, head } of off) zeroed = zeroHeadInputs(zeroed, `${prefix}.${layer}.${module}.out_proj.weight`, head, d, false);
      const vocab = readJson(path.join(dir, 'vocab.json'));
      const files = (t) => ({ config, weights: safetensors(t), tokenizer: { vocab } });
      const model = await mod.loadModel(files(tensors)), other = await mod.loadModel(files(zeroed));
      try {
        const got = model.run(source, decoderInput, { ablate: off }), want = other.run(source, decoderInput);
        expect(maxDiff(got.logits, want.logits)).toBeLessThan(1e-5);
        expect(maxDiff(got.encoderOutput, want.encoderOutput)).toBeLessThan(1e-5);
        expect(maxDiff(got.crossAttention, want.crossAttention)).toBeLessThan(1e-6);
        expect(maxDiff(got.logits, model.run(source, decoderInput).logits)).toBeGreaterThan(1e-4);
        // Decoding through the KV cache (greedy and beams) with the heads off, as the zeroed model decodes.
        for (const beams of [1, 3]) {
          const gen = model.generate(source, { beams, maxNewTokens: 8, ablate: off }), same = other.generate(source, { beams, maxNewTokens: 8 });
          expect(gen.hypotheses.map((h) => h.tokens)).toEqual(same.hypotheses.map((h) => h.tokens));
          expect(Math.abs(gen.score - same.score)).toBeLessThan(1e-5);
          expect(maxDiff(gen.crossAttention, same.crossAttention)).toBeLessThan(1e-6);
        }
      } finally {
        model.dispose();
        other.dispose();
      }
    });
  });

  test('a bad ablate list is named, and the model runs whole afterwards', async () => {
    const model = await mod.loadModel(modelFiles(LLAMA, checkpoint(LLAMA, 5)));
    try {
      const plain = model.run(LLAMA_TOKENS).logits;
      await expectNamed(() => model.run(LLAMA_TOKENS, { ablate: [{ layer: 2, head: 0 }] }), /ablate\[0\]\.layer must be an integer in \[0, 1\], got 2/);
      await expectNamed(() => model.run(LLAMA_TOKENS, { ablate: [{ layer: 0, head: 0 }, { layer: 0, head: 4 }] }), /ablate\[1\]\.head must be an integer in \[0, 3\], got 4/);
      await expectNamed(() => model.run(LLAMA_TOKENS, { ablate: [{ layer: 0, head: -1 }] }), /ablate\[0\]\.head must be an integer/);
      await expectNamed(() => model.run(LLAMA_TOKENS, { ablate: [{ layer: 0, head: 0, part: 'cross' }] }), /ablate\[0\]\.part must be 'self', got "cross"/);
      await expectNamed(() => model.run(LLAMA_TOKENS, { ablate: [{ layer: 0, heda: 0 }] }), /unknown key "heda"/);
      await expectNamed(() => model.run(LLAMA_TOKENS, { ablate: { layer: 0, head: 0 } }), /ablate must be an array/);
      await expectNamed(() => model.run(LLAMA_TOKENS, { ablate: [null] }), /ablate\[0\] must be \{ layer, head \}/);
      // A refused ablated call (a token out of range) leaves every head on.
      await expectNamed(() => model.run([0, 99], { ablate: [{ layer: 0, head: 0 }] }), /outside the vocabulary/);
      expect(maxDiff(model.run(LLAMA_TOKENS).logits, plain)).toBe(0);
      // The same head twice, and an empty list, are fine.
      const twice = model.run(LLAMA_TOKENS, { ablate: [{ layer: 0, head: 1 }, { layer: 0, head: 1 }] }).logits;
      expect(maxDiff(twice, model.run(LLAMA_TOKENS, { ablate: [{ layer: 0, head: 1 }] }).logits)).toBe(0);
      expect(maxDiff(model.run(LLAMA_TOKENS, { ablate: [] }).logits, plain)).toBe(0);
    } finally {
      model.dispose();
    }
  });
});
