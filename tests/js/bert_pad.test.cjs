// BertModel.run(input, { padTo }): the input as one row of a padded batch ([PAD] appended, hidden
// by the key-padding mask), as the demo's step view shows it. Checked against the float64 PyTorch
// reference of the unpadded sequences (tests/fixtures/bert/f32_mlm_prefixed).
const fs = require('node:fs');
const path = require('node:path');
const { root, variants, load, expectClose } = require('./helpers.cjs');

const dir = path.join(root, 'tests/fixtures/bert/f32_mlm_prefixed');
const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
const want = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8'));
const vocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...Array.from({ length: config.vocab_size - 5 }, (_, i) => `t${i + 5}`)].join('\n');

describe.each(variants)('%s build', (variant) => {
  test('padded rows: real tokens as alone, [PAD] keys get no attention, the trace shows the mask', async () => {
    const attn = await load(variant);
    const model = await attn.loadModel({ config, weights: fs.readFileSync(path.join(dir, 'model.safetensors')), tokenizer: { vocab } });
    try {
      const N = want.batch.input_ids[0].length; // the batch's length: its longest sequence
      const { num_hidden_layers: L, num_attention_heads: H, hidden_size: D } = model.config;
      want.sequences.forEach((s, i) => {
        const n = s.input_ids.length;
        const r = model.run({ tokens: s.input_ids, tokenTypes: s.token_type_ids }, { padTo: N, attention: true, traceLayer: 1 });
        expect(r.tokens).toEqual(want.batch.input_ids[i]);
        expect(r.tokenTypes).toEqual(want.batch.token_type_ids[i]);
        expect(r.padding).toEqual(want.batch.attention_mask[i].map((m) => 1 - m));
        expect(r.tokenTexts.slice(n)).toEqual(new Array(N - n).fill('[PAD]'));
        expectClose(r.hidden.subarray(0, n * D), want.per_sequence[i].hidden.flat(), want.tolerance, `sequence ${i} hidden`);
        for (let row = 0; row < L * H * N; row++) {
          const w = r.attention.subarray(row * N, (row + 1) * N);
          expect(Math.abs(w.reduce((a, b) => a + b, 0) - 1)).toBeLessThan(1e-5);
          for (let j = n; j < N; j++) expect(w[j]).toBe(0);
        }
        for (let k = 0; k < H * N; k++)
          for (let j = 0; j < N; j++) expect(r.trace.maskedScores[k * N + j] === -Infinity).toBe(j >= n);
      });
      // Shorter than the input: nothing appended, nothing masked.
      const s = want.sequences[0];
      expect(model.run({ tokens: s.input_ids }, { padTo: 2 }).padding).toEqual(new Array(s.input_ids.length).fill(0));
      expect(model.run({ tokens: s.input_ids }).padding).toBeUndefined();
      for (const bad of [0, 1.5, config.max_position_embeddings + 1])
        expect(() => model.run({ tokens: s.input_ids }, { padTo: bad })).toThrow(/padTo must be an integer/);
    } finally {
      model.dispose();
    }
  });
});
