// loadModel's dtype refused by name (issue 22's hostile cases): a dtype that is not ours (named with
// the nearest, or the one another library's name means), and a dtype a model folder cannot take:
// matrices whose inputs are not blocks of 32 (q8, q4), values beyond f16 (f16) or beyond what an
// f16 block scale reaches (q8 past ~8e6, q4 past ~5e5). What stays as stored under a type is not
// refused by it; after each refusal the module loads and runs models as before.
const fs = require('node:fs');
const path = require('node:path');
const { root, variants, load } = require('./helpers.cjs');
const { expectNamed } = require('./fuzz.cjs');

const fixture = (p) => path.join(root, 'tests/fixtures', p);
const gpt2 = fixture('lowbit/gpt2');
const ONE_OF = 'loadModel: dtype must be one of "auto", "f32", "f16", "q8", "q4", got';

/** The low-bit GPT-2 fixture's files in memory, with one weight (the 6th of `name`) set to `value`. */
function withValue(name, value) {
  const weights = Buffer.from(fs.readFileSync(path.join(gpt2, 'model.safetensors')));
  const headerBytes = Number(weights.readBigUInt64LE(0));
  const header = JSON.parse(weights.subarray(8, 8 + headerBytes).toString('utf8'));
  weights.writeFloatLE(value, 8 + headerBytes + header[name].data_offsets[0] + 4 * 5);
  return {
    config: JSON.parse(fs.readFileSync(path.join(gpt2, 'config.json'), 'utf8')),
    weights,
    tokenizer: { vocab: JSON.parse(fs.readFileSync(path.join(gpt2, 'vocab.json'), 'utf8')), merges: '' },
  };
}

/** The fixture at q8 still gives its reference logits (the module is unharmed by the refusals). */
async function stillLoads(attn) {
  const want = JSON.parse(fs.readFileSync(path.join(gpt2, 'expected.json'), 'utf8'));
  const model = await attn.loadModel(gpt2, { dtype: 'q8' });
  const { logits } = model.run(want.prompt);
  model.dispose();
  const largest = Math.max(...want.outputs.q8.logits.map(Math.abs));
  want.outputs.q8.logits.forEach((v, i) => expect(Math.abs(logits[i] - v)).toBeLessThanOrEqual(1e-5 * largest));
}

describe('a dtype that is not one of ours', () => {
  test.each([
    ['Q8', 'q8'], ['f-16', 'f16'], ['fp16', 'f16'], ['float16', 'f16'], ['half', 'f16'], ['fp32', 'f32'], ['float32', 'f32'],
    ['int8', 'q8'], ['uint8', 'q8'], ['q8_0', 'q8'], ['q4_0', 'q4'], ['int4', 'q4'], ['q4f16', 'q4'], ['bnb4', 'q4'], ['aut', 'auto'],
  ])('%s: named, suggesting %s', async (dtype, near) => {
    const attn = await load('simd');
    await expectNamed(() => attn.loadModel(gpt2, { dtype }), `${ONE_OF} "${dtype}" (did you mean '${near}'?)`);
  });

  test.each(['eight', 'constructor', '__proto__', 'toString', 'x'.repeat(100)])('%s: named, nothing suggested', async (dtype) => {
    const attn = await load('simd');
    const e = await expectNamed(() => attn.loadModel(gpt2, { dtype }), ONE_OF);
    expect(e.message).not.toMatch(/did you mean/);
  });

  test.each([8, null, true, {}, ['q8']])('%p: named, nothing suggested', async (dtype) => {
    const attn = await load('simd');
    const e = await expectNamed(() => attn.loadModel(gpt2, { dtype }), ONE_OF);
    expect(e.message).not.toMatch(/did you mean/);
  });
});

describe.each(variants)('%s build: matrices whose widths are not blocks of 32', (variant) => {
  test('q8 / q4 on folders whose matrices take 16 or 80 inputs: those held at F16 (model.weightTypes), the rest quantized', async () => {
    const attn = await load(variant);
    const bart = fixture('bart/f32_prefixed');  // d_model 16: every matrix's inputs
    for (const dtype of ['q8', 'q4']) {
      const model = await attn.loadModel(bart, { dtype });
      expect(new Set(Object.entries(model.weightTypes).filter(([n]) => n.endsWith('proj.weight') || n === 'shared.weight').map(([, t]) => t))).toEqual(new Set(['F16']));
      expect(model.generate('abc').tokens.length).toBeGreaterThan(0);
      model.dispose();
    }
    // BERT with hidden 32 (those matrices fit) and intermediate 80: the 80-input matrix falls back.
    const bert = fixture('bert/f32_mlm_prefixed');
    const config = JSON.parse(fs.readFileSync(path.join(bert, 'config.json'), 'utf8'));
    const vocab = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...Array.from({ length: config.vocab_size - 5 }, (_, i) => `t${i + 5}`)].join('\n');
    const model = await attn.loadModel({ config, weights: fs.readFileSync(path.join(bert, 'model.safetensors')), tokenizer: { vocab } }, { dtype: 'q4' });
    const types = Object.entries(model.weightTypes);
    expect(types.filter(([n]) => /output\.dense\.weight$/.test(n) && !n.includes('attention')).map(([, t]) => t)).toEqual(['F16', 'F16']);
    expect(types.filter(([n]) => /intermediate\.dense\.weight$/.test(n)).map(([, t]) => t)).toEqual(['Q4_0', 'Q4_0']);
    model.dispose();
    await stillLoads(attn);
  });

  test('values beyond the type: f16 past 65504, q8 and q4 past their f16 block scales; what a type keeps as stored loads', async () => {
    const attn = await load(variant);
    const tooLarge = (name, what, value) => `loadModel: ${name}: output 0: ${what(value)}; load this model with dtype 'f32'`;
    const f16 = (v) => `value ${v} at column 5 is too large for f16`;
    const scales = (dtype) => (v) => `values up to ${v} are too large for ${dtype}'s f16 block scales`;
    // An MLP matrix (Conv1D: its 6th stored value is output 5's first weight).
    await expectNamed(() => attn.loadModel(withValue('h.0.mlp.c_fc.weight', 1e5), { dtype: 'f16' }),
      "loadModel: h.0.mlp.c_fc.weight: output 5: value 100000 at column 0 is too large for f16; load this model with dtype 'f32'");
    await expectNamed(() => attn.loadModel(withValue('wte.weight', 1e5), { dtype: 'f16' }), tooLarge('wte.weight', f16, 100000));
    await expectNamed(() => attn.loadModel(withValue('wte.weight', 1e7), { dtype: 'q8' }), tooLarge('wte.weight', scales('q8'), '1e+07'));
    await expectNamed(() => attn.loadModel(withValue('wpe.weight', 1e9), { dtype: 'f16' }), tooLarge('wpe.weight', f16, '1e+09'));
    await expectNamed(() => attn.loadModel(withValue('h.1.attn.c_proj.weight', 6e5), { dtype: 'q4' }),
      "loadModel: h.1.attn.c_proj.weight: output 5: values up to 600000 are too large for q4's f16 block scales; load this model with dtype 'f32'");
    // Loads: 1e5 as stored (F32) and at q8; 6e5 at q8 (its scale fits); the position table under q8 and q4.
    for (const [name, value, dtype] of [['wte.weight', 1e5, 'auto'], ['wte.weight', 1e5, 'q8'], ['h.1.attn.c_proj.weight', 6e5, 'q8'],
      ['wpe.weight', 1e9, 'q8'], ['wpe.weight', 1e9, 'q4']]) {
      const model = await attn.loadModel(withValue(name, value), { dtype });
      expect(model.run([1, 2, 3]).logits.length).toBe(3 * 40);
      model.dispose();
    }
    await stillLoads(attn);
  });
});
