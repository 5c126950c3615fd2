// The shipped spelling-to-sound model (web/models/g2p-bart, trained by tools/train/g2p) through
// the public API: its held-out word and phoneme error rates on a fixed sample of test words,
// recomputed here with our WASM greedy decoding, match the model card's sample figures; the
// pronunciations come in ARPAbet and IPA; hostile words get named errors or a defined result.
const fs = require('node:fs');
const path = require('node:path');
const { root, variants, load, api } = require('./helpers.cjs');

const folder = path.join(root, 'web/models/g2p-bart');
const sample = JSON.parse(fs.readFileSync(path.join(folder, 'heldout-sample.json'), 'utf8'));

function editDistance(a, b) {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] !== b[j - 1] ? 1 : 0));
    row = next;
  }
  return row[b.length];
}

/** WER (right if equal to any pronunciation) and PER (edits to the closest one over its length). */
function errorRates(outputs) {
  let wrong = 0, edits = 0, length = 0;
  sample.words.forEach((w, i) => {
    const out = outputs[i];
    if (!w.pronunciations.some((p) => p.join(' ') === out.join(' '))) wrong++;
    const [e, ref] = w.pronunciations.map((p) => [editDistance(out, p), p]).sort((a, b) => a[0] - b[0] || 0)[0];
    edits += e;
    length += ref.length;
  });
  return { wer: wrong / sample.words.length, per: edits / length };
}

describe.each(variants)('%s build', (variant) => {
  let model;
  beforeAll(async () => { model = await (await load(variant)).loadModel(folder); });
  afterAll(() => model.dispose());

  // The card's rates are the model's: measured on the whole sample where the products are SIMD;
  // the scalar build (5x slower here) is held to the trainer's outputs on the first 100 words.
  const words = variant === 'scalar' ? sample.words.slice(0, 100) : sample.words;
  test(`held-out sample of ${words.length} words: the trainer's outputs${words === sample.words ? `, WER ${(sample.wer * 100).toFixed(1)}%, PER ${(sample.per * 100).toFixed(1)}% as the model card measured` : ''}`, () => {
    const outputs = words.map((w) => model.generate(w.word).tokenTexts);
    // float16 weights, float32 arithmetic on both sides: an output may flip only on a near-tie.
    const same = outputs.filter((o, i) => o.join(' ') === words[i].greedy.join(' ')).length;
    expect(same / outputs.length).toBeGreaterThanOrEqual(0.99);
    if (words !== sample.words) return;
    const { wer, per } = errorRates(outputs);
    expect(Math.abs(wer - sample.wer)).toBeLessThanOrEqual(0.01);
    expect(Math.abs(per - sample.per)).toBeLessThanOrEqual(0.005);
  });
});

describe('pronounce', () => {
  let model;
  beforeAll(async () => { model = await (await load('simd')).loadModel(folder); });
  afterAll(() => model.dispose());

  test('words in ARPAbet and IPA, with the cross-attention of each', () => {
    const [phone, cat] = model.pronounce('Phone, cat!');
    expect(phone.word).toBe('Phone');
    expect(phone.phonemes.join(' ')).toMatch(/^F OW N$/);
    expect(phone.ipa).toBe(api.arpabetToIpa(phone.phonemes));
    expect(cat.phonemes.join(' ')).toBe('K AE T');
    expect(cat.ipa).toBe('kæt');
    const r = phone.result;
    const T = r.outputTexts.length, S = r.sourceTokens.length;
    expect(r.crossAttention.length).toBe(model.config.decoder_layers * model.config.decoder_attention_heads * T * S);
    for (let row = 0; row < r.crossAttention.length / S; row++) {
      const sum = r.crossAttention.subarray(row * S, (row + 1) * S).reduce((a, b) => a + b, 0);
      expect(Math.abs(sum - 1)).toBeLessThan(1e-5);
    }
    const beam = model.pronounce('phone', { beams: 4 })[0];
    expect(beam.result.hypotheses.length).toBe(4);
  });

  test('empty, very long and foreign words: named errors or a defined result', () => {
    expect(() => model.pronounce('')).toThrow('pronounce: the text has no words (letters)');
    expect(() => model.pronounce('- ... !?')).toThrow('pronounce: the text has no words (letters)');
    expect(() => model.pronounce('a'.repeat(1000))).toThrow(/^pronounce: the word "a{40}…\(1000 characters\)" is longer than the \d+ letters this model reads/);
    // Letters outside a-z are <unk> to the encoder: still a pronunciation, never a crash.
    const [r] = model.pronounce('ĉapelo');
    expect(r.result.sourceTokens).toContain(model.tokenizer.unkTokenId);
    expect(Array.isArray(r.phonemes)).toBe(true);
  });
});
