// The BERT forward against a float64 PyTorch reference (tests/fixtures/bert, written by
// tests/fixtures/generate_bert_fixtures.py): hidden states, attention, MLM logits, pooler, sentence
// embeddings and one layer's trace, from F32 / F16 / BF16 checkpoints with Hugging Face's names
// (with and without "bert.", LayerNorm gamma/beta, an I64 buffer to skip). Then padding, loading
// from a folder, and hostile inputs.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { api, root, variants, load, expectClose } = require('./helpers.cjs');

const dir = path.join(root, 'tests/fixtures/bert');
const cases = fs.readdirSync(dir).filter((d) => fs.existsSync(path.join(dir, d, 'expected.json'))).sort();

/** A stand-in vocab.txt (the fixtures are random models): BERT's five specials, then t5, t6, ... */
function vocabFor(size) {
  return ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...Array.from({ length: size - 5 }, (_, i) => `t${i + 5}`)].join('\n') + '\n';
}

function files(name, { config, weights } = {}) {
  const c = config ?? JSON.parse(fs.readFileSync(path.join(dir, name, 'config.json'), 'utf8'));
  return {
    config: c,
    weights: weights ?? fs.readFileSync(path.join(dir, name, 'model.safetensors')),
    tokenizer: { vocab: vocabFor(c.vocab_size) },
  };
}
const expected = (name) => JSON.parse(fs.readFileSync(path.join(dir, name, 'expected.json'), 'utf8'));

test('fixtures exist for F32 (bert. prefix, MLM), F16 (pooler, I64 buffer) and BF16 (gamma/beta)', () => {
  expect(cases).toEqual(['bf16_gamma_beta', 'f16_base_pooler', 'f32_mlm_prefixed']);
});

describe.each(variants)('%s build', (variant) => {
  test.each(cases)('%s matches the PyTorch reference', async (name) => {
    const attn = await load(variant);
    const want = expected(name);
    const model = await attn.loadModel(files(name));
    try {
      expect(model.type).toBe('bert');
      const tol = want.tolerance;
      want.sequences.forEach((s, i) => {
        const w = want.per_sequence[i];
        const r = model.run({ tokens: s.input_ids, tokenTypes: s.token_type_ids },
          { attention: true, logits: model.hasMaskedLmHead, traceLayer: i === 0 ? want.trace_layer : undefined });
        expectClose(r.hidden, w.hidden, tol, `seq ${i} hidden`);
        expectClose(r.attention, w.attention, tol, `seq ${i} attention`);
        if (w.mlm_logits) expectClose(r.logits, w.mlm_logits, tol, `seq ${i} mlm_logits`);
        else expect(r.logits).toBeUndefined();
        if (w.pooler) expectClose(r.pooled, w.pooler, tol, `seq ${i} pooler`);
        else expect(r.pooled).toBeUndefined();
        if (i === 0) {
          const t = want.trace;
          for (const [ours, theirs] of [['x', 'x'], ['q', 'q'], ['k', 'k'], ['v', 'v'], ['rawScores', 'raw_scores'],
            ['weights', 'weights'], ['z', 'z'], ['concat', 'concat'], ['output', 'output']])
            expectClose(r.trace[ours], t[theirs], tol, `trace.${ours}`);
        }
      });
      expect(model.hasMaskedLmHead).toBe(!!want.per_sequence[0].mlm_logits);
      expect(model.hasPooler).toBe(!!want.per_sequence[0].pooler);
      // Sentence embeddings: every sequence in one padded call.
      const inputs = want.sequences.map((s) => ({ tokens: s.input_ids, tokenTypes: s.token_type_ids }));
      const mean = model.embed(inputs, { pooling: 'mean', normalize: false });
      const unit = model.embed(inputs, { pooling: 'mean', normalize: true });
      const cls = model.embed(inputs, { pooling: 'cls', normalize: false });
      expect([mean.count, mean.dim]).toEqual([inputs.length, model.config.hidden_size]);
      want.per_sequence.forEach((w, i) => {
        expectClose(mean.row(i), w.mean_embedding, tol, `seq ${i} mean embedding`);
        expectClose(unit.row(i), w.mean_embedding_normalized, tol, `seq ${i} normalized embedding`);
        expectClose(cls.row(i), w.cls_embedding, tol, `seq ${i} cls embedding`);
      });
    } finally {
      model.dispose();
    }
  });

  test('a padded batch gives each sentence what it gets alone', async () => {
    const attn = await load(variant);
    const model = await attn.loadModel(files('f32_mlm_prefixed'));
    const inputs = expected('f32_mlm_prefixed').sequences.map((s) => ({ tokens: s.input_ids, tokenTypes: s.token_type_ids }));
    const together = model.embed(inputs, { normalize: false });
    inputs.forEach((input, i) => {
      const alone = model.embed([input], { normalize: false });
      expectClose(together.row(i), alone.row(0), { abs: 2e-6, rel: 2e-6 }, `sentence ${i}`);
      const r = model.run(input);  // and as run() computes it
      const D = model.config.hidden_size, n = input.tokens.length;
      const avg = new Float32Array(D);
      for (let t = 0; t < n; t++) for (let d = 0; d < D; d++) avg[d] += r.hidden[t * D + d] / n;
      expectClose(alone.row(0), avg, { abs: 2e-6, rel: 2e-6 }, `sentence ${i} vs run`);
    });
    model.dispose();
  });
});

describe('loading a BERT folder laid out as on the Hub', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bert-'));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const copy = (name, extra) => {
    const d = fs.mkdtempSync(path.join(tmp, name + '-'));
    for (const f of ['config.json', 'model.safetensors']) fs.copyFileSync(path.join(dir, name, f), path.join(d, f));
    for (const [f, content] of Object.entries(extra)) {
      fs.mkdirSync(path.dirname(path.join(d, f)), { recursive: true });
      fs.writeFileSync(path.join(d, f), content);
    }
    return d;
  };

  test('vocab.txt + tokenizer_config.json; sentence-transformers pooling and Normalize picked up', async () => {
    const attn = await load('simd');
    const c = JSON.parse(fs.readFileSync(path.join(dir, 'f16_base_pooler/config.json'), 'utf8'));
    const folder = copy('f16_base_pooler', {
      'vocab.txt': vocabFor(c.vocab_size), 'tokenizer_config.json': JSON.stringify({ do_lower_case: false }),
      'modules.json': JSON.stringify([{ idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
        { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
        { idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' }]),
      '1_Pooling/config.json': JSON.stringify({ word_embedding_dimension: c.hidden_size, pooling_mode_cls_token: false, pooling_mode_mean_tokens: true }),
      'sentence_bert_config.json': JSON.stringify({ max_seq_length: 6, do_lower_case: false }),
    });
    const model = await attn.loadModel(folder);
    expect(model.tokenizer.doLowerCase).toBe(false);
    expect(model.sentenceEmbedding).toEqual({ pooling: 'mean', normalize: true, maxSeqLength: 6 });
    const e = model.embed(['t5 t6 t7 t8 t9 t10 t11 t12', 't7']);
    let norm = 0;
    for (const v of e.row(0)) norm += v * v;
    expect(Math.sqrt(norm)).toBeCloseTo(1, 5);
    // Truncated to 6 tokens: [CLS] t5 t6 t7 t8 [SEP].
    const short = model.embed([{ tokens: [2, 5, 6, 7, 8, 3] }]);
    expectClose(e.row(0), short.row(0), { abs: 1e-6, rel: 1e-6 }, 'truncated');
    model.dispose();
  });

  test('tokenizer.json (WordPiece + BertNormalizer) when there is no vocab.txt', async () => {
    const attn = await load('simd');
    const c = JSON.parse(fs.readFileSync(path.join(dir, 'f32_mlm_prefixed/config.json'), 'utf8'));
    const vocab = Object.fromEntries(vocabFor(c.vocab_size).trim().split('\n').map((t, i) => [t, i]));
    const folder = copy('f32_mlm_prefixed', {
      'tokenizer.json': JSON.stringify({ normalizer: { type: 'BertNormalizer', lowercase: true, strip_accents: null, handle_chinese_chars: true, clean_text: true },
        model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab } }),
    });
    const model = await attn.loadModel(folder);
    const r = model.run('T5 t9, [MASK]');
    expect(r.tokenTexts).toEqual(['[CLS]', 't5', 't9', '[UNK]', '[MASK]', '[SEP]']);
    const fill = model.fillMask('t5 [MASK] t6', 3);
    expect(fill).toHaveLength(1);
    expect(fill[0].position).toBe(2);
    expect(fill[0].predictions).toHaveLength(3);
    for (const p of fill[0].predictions) {
      expect(p.id).toBeGreaterThanOrEqual(5);  // never a special token
      expect(p.sequence).toBe(`t5 ${p.text} t6`);
    }
    const probs = fill[0].predictions.map((p) => p.probability);
    expect(probs).toEqual([...probs].sort((a, b) => b - a));
    model.dispose();
  });
});

describe('errors name the problem and leave the module usable', () => {
  const bytes = () => new Uint8Array(fs.readFileSync(path.join(dir, 'f32_mlm_prefixed/model.safetensors')));
  const config = () => JSON.parse(fs.readFileSync(path.join(dir, 'f32_mlm_prefixed/config.json'), 'utf8'));
  function withHeader(b, edit) {
    const n = Number(Buffer.from(b).readBigUInt64LE(0));
    const header = JSON.parse(Buffer.from(b.subarray(8, 8 + n)).toString('utf8'));
    edit(header);
    let json = JSON.stringify(header);
    while ((8 + json.length) % 8) json += ' ';
    const out = Buffer.alloc(8 + json.length + (b.length - 8 - n));
    out.writeBigUInt64LE(BigInt(json.length), 0);
    out.write(json, 8);
    Buffer.from(b.subarray(8 + n)).copy(out, 8 + json.length);
    return new Uint8Array(out);
  }
  const rejects = async (f, message) => {
    const attn = await load('simd');
    await expect(attn.loadModel(f)).rejects.toThrow(message);
    const m = await attn.loadModel(files('f32_mlm_prefixed'));
    expect(m.run({ tokens: [2, 5, 3] }).hidden).toHaveLength(3 * m.config.hidden_size);
    m.dispose();
  };
  test('missing tensor', () => rejects(files('f32_mlm_prefixed', { weights: withHeader(bytes(), (h) => { delete h['bert.encoder.layer.1.output.dense.bias']; }) }),
    /missing tensor "encoder\.layer\.1\.output\.dense\.bias" \(also tried "bert\.encoder\.layer\.1\.output\.dense\.bias"\)/));
  test('shape mismatch with the config', () => rejects(files('f32_mlm_prefixed', { config: { ...config(), intermediate_size: config().intermediate_size + 1 } }),
    /tensor "bert\.encoder\.layer\.0\.intermediate\.dense\.weight" has shape \[\d+, \d+\] but config\.json implies/));
  test('hidden size not divisible by the heads', () => rejects(files('f32_mlm_prefixed', { config: { ...config(), num_attention_heads: 5 } }),
    /hidden_size \(\d+\) is not divisible by num_attention_heads \(5\)/));
  test('unsupported activation and position embeddings', async () => {
    await rejects(files('f32_mlm_prefixed', { config: { ...config(), hidden_act: 'relu' } }), /hidden_act "relu" is not supported/);
    await rejects(files('f32_mlm_prefixed', { config: { ...config(), position_embedding_type: 'relative_key' } }), /position_embedding_type "relative_key" is not supported/);
  });
  test('a model type the library does not run', () => rejects(files('f32_mlm_prefixed', { config: { ...config(), model_type: 'roberta' } }),
    /model_type "roberta" is not supported \(this library runs: gpt2, bert, bart, llama, qwen2, qwen3, mistral, phi3, smollm3, gemma3_text, gemma3\)/));
  test('NaN inside a weight', async () => {
    const b = bytes();
    const n = Number(Buffer.from(b).readBigUInt64LE(0));
    const h = JSON.parse(Buffer.from(b.subarray(8, 8 + n)).toString());
    new DataView(b.buffer).setFloat32(8 + n + h['cls.predictions.bias'].data_offsets[0] + 4, NaN, true);
    await rejects(files('f32_mlm_prefixed', { weights: b }), /cls\.predictions\.bias contains NaN at index 1/);
  });
  test('a vocab.txt without BERT\'s special tokens', () => rejects({ ...files('f32_mlm_prefixed'), tokenizer: { vocab: 'a\nb\n' } }, /vocab\.txt has no \[PAD\] token/));
  test('bad inputs', async () => {
    const attn = await load('simd');
    const m = await attn.loadModel(files('f32_mlm_prefixed'));
    const { vocab_size: V, max_position_embeddings: P } = m.config;
    expect(() => m.run({ tokens: [2, V, 3] })).toThrow(`run: token ${V} at position 1 is outside the vocabulary of ${V}`);
    expect(() => m.run({ tokens: [2, 5, 3], tokenTypes: [0, 2, 0] })).toThrow(/token type 2 at position 1 is outside type_vocab_size 2/);
    expect(() => m.run({ tokens: [2, 5, 3], tokenTypes: [0, 0] })).toThrow(/2 token types for 3 tokens/);
    expect(() => m.run({ tokens: Array(P + 1).fill(5) })).toThrow(`${P + 1} tokens exceed the model's ${P} positions`);
    expect(() => m.run({ tokens: [] })).toThrow(/the input has no tokens/);
    expect(() => m.run(42)).toThrow(/the input must be a string, a pair/);
    expect(() => m.run({ tokens: [2, 3] }, { traceLayer: 9 })).toThrow(/traceLayer must be an integer/);
    expect(() => m.fillMask('t5 t6')).toThrow(/the text has no \[MASK\] token/);
    expect(() => m.embed(['t5'], { pooling: 'max' })).toThrow(/embed: pooling must be one of "mean", "cls", got "max"/);
    expect(m.run({ tokens: [2, 5, 3] }).hidden).toHaveLength(3 * m.config.hidden_size);
    m.dispose();
    expect(() => m.embed(['t5'])).toThrow(/this BertModel has been disposed/);
    const pooled = await attn.loadModel(files('f16_base_pooler'));
    expect(() => pooled.fillMask('t5 [MASK]')).toThrow(/masked-LM head \(cls\.predictions\.\*\), which this checkpoint does not have/);
    pooled.dispose();
  });
  test('the heap does not grow over many embed calls', async () => {
    const attn = await load('simd');
    const m = await attn.loadModel(files('f32_mlm_prefixed'));
    const sentences = Array.from({ length: 20 }, (_, i) => ({ tokens: [2, ...Array(1 + (i % 7)).fill(5 + (i % 9)), 3] }));
    m.embed(sentences, { batchSize: 8 });
    const before = attn.memoryBytes;
    for (let i = 0; i < 200; i++) m.embed(sentences, { batchSize: 8 });
    expect(attn.memoryBytes).toBe(before);
    m.dispose();
  });
});

test('cosineSimilarity and similarityMatrix', () => {
  expect(api.cosineSimilarity([1, 0], [0, 2])).toBe(0);
  expect(api.cosineSimilarity([1, 2], [2, 4])).toBeCloseTo(1, 12);
  expect(api.cosineSimilarity([0, 0], [1, 1])).toBe(0);
  expect(() => api.cosineSimilarity([1], [1, 2])).toThrow(/vectors of 1 and 2 numbers/);
  const e = { count: 3, dim: 2, data: Float32Array.from([1, 0, 0.6, 0.8, -1, 0]) };
  e.row = (i) => e.data.subarray(i * 2, i * 2 + 2);
  const m = api.similarityMatrix(e);
  expect(Array.from(m).map((v) => +v.toFixed(6))).toEqual([1, 0.6, -1, 0.6, 1, -0.6, -1, -0.6, 1]);
});
