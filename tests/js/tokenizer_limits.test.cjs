// Tokenizers on long and hostile text: the byte-level BPE gives the same ids as GPT-2's reference
// merge loop (kept below) while staying fast on words of any length; over-long text is refused
// with a named error before any work; WordPiece stays linear and truncates pairs as BERT does.
const fs = require('node:fs');
const path = require('node:path');
const { api, root } = require('./helpers.cjs');

const brownDir = path.join(root, 'web/models/brown-gpt2');
const brownFiles = () => ({
  vocab: JSON.parse(fs.readFileSync(path.join(brownDir, 'vocab.json'), 'utf8')),
  merges: fs.readFileSync(path.join(brownDir, 'merges.txt'), 'utf8'),
});

// ---- GPT-2's reference BPE (encoder.py's bpe()), as this package ran it before the heap: the
// lowest-ranked adjacent pair, all its occurrences merged left to right, then again. Quadratic in
// the word length, so only for comparing ids on words of modest length.
const PRETOKENIZE = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
function byteTable() {
  const table = [];
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    table.push(String.fromCharCode(printable ? b : next++));
  }
  return table;
}
function referenceEncode({ vocab, merges }, text) {
  const ranks = new Map();
  merges.split('\n').filter((l) => l.trim() && !l.startsWith('#version')).forEach((l, rank) => ranks.set(l.trim(), rank));
  const bytes = byteTable(), ids = [];
  for (const word of text.match(PRETOKENIZE) ?? []) {
    let parts = Array.from(new TextEncoder().encode(word), (b) => bytes[b]);
    for (;;) {
      let best = -1, bestRank = Infinity;
      for (let i = 0; i + 1 < parts.length; i++) {
        const rank = ranks.get(parts[i] + ' ' + parts[i + 1]);
        if (rank !== undefined && rank < bestRank) { bestRank = rank; best = i; }
      }
      if (best < 0) break;
      const a = parts[best], b = parts[best + 1], merged = [];
      for (let i = 0; i < parts.length; i++) {
        if (i + 1 < parts.length && parts[i] === a && parts[i + 1] === b) { merged.push(a + b); i++; } else merged.push(parts[i]);
      }
      parts = merged;
    }
    for (const p of parts) ids.push(vocab[p]);
  }
  return ids;
}

/** A seeded generator, so a failure names a text that can be made again. */
function random(seed) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}
const pick = (rnd, s) => s[Math.floor(rnd() * s.length)];
const randomText = (rnd, alphabet, n) => Array.from({ length: n }, () => pick(rnd, alphabet)).join('');

/**
 * A made-up vocabulary over a few letters whose merges come in a shuffled order: some merges name
 * a token that only a later merge makes, and merges of one letter with itself overlap ('aaa'),
 * the cases where a careless priority queue departs from the reference.
 */
function shuffledVocab(rnd) {
  const tokens = ['a', 'b', 'c', '\u0120'], merges = [];
  while (merges.length < 40) {
    const x = pick(rnd, tokens), y = pick(rnd, tokens);
    if (tokens.includes(x + y)) continue;
    tokens.push(x + y);
    merges.push(`${x} ${y}`);
  }
  for (let i = merges.length - 1; i > 0; i--) {
    if (rnd() < 0.3) { const j = Math.floor(rnd() * (i + 1)); [merges[i], merges[j]] = [merges[j], merges[i]]; }
  }
  return { vocab: Object.fromEntries(tokens.map((t, i) => [t, i])), merges: merges.join('\n') };
}

describe('byte-level BPE with a heap of merges', () => {
  const files = brownFiles();
  const tok = new api.BpeTokenizer(files);

  test('gives the reference ids on ordinary and hard text', () => {
    const rnd = random(1);
    const texts = [
      fs.readFileSync(path.join(root, 'README.md'), 'utf8'),
      fs.readFileSync(path.join(root, 'bindings/ts/bpe_tokenizer.ts'), 'utf8'),
      'café 🙂 naïve ﷽ 中文字 \u0000\u0007 \ud800x \udfff ℌ𝔢𝔩𝔩𝔬 e\u0301 ',
      'a'.repeat(300), 'the'.repeat(200), 'ssssssssssssssssss', '!!!!!!!!!!!!??', '   \n\n\t  x  ', "don't we'll I'm",
    ];
    for (let k = 0; k < 60; k++) texts.push(randomText(rnd, 'etaoinshrdlu', 1 + Math.floor(rnd() * 400)));
    for (let k = 0; k < 60; k++) texts.push(randomText(rnd, 'etaoin shrd.,\'é😀', 500));
    // (The reference knows no special tokens: '<|endoftext|>' in the README is written apart.)
    for (const text of texts.map((t) => t.replaceAll('<|', '< |'))) expect([text.slice(0, 30), tok.encode(text)]).toEqual([text.slice(0, 30), referenceEncode(files, text)]);
  });

  test('gives the reference ids when merges come out of order or overlap', () => {
    const rnd = random(2);
    for (let v = 0; v < 40; v++) {
      const shuffled = shuffledVocab(rnd), t = new api.BpeTokenizer(shuffled);
      for (let k = 0; k < 10; k++) {
        const text = randomText(rnd, 'aaabbc ', 1 + Math.floor(rnd() * 200));
        expect([v, text, t.encode(text)]).toEqual([v, text, referenceEncode(shuffled, text)]);
      }
    }
  });
});

describe('over-long text', () => {
  const tok = new api.BpeTokenizer(brownFiles());
  const { expectNamed } = require('./fuzz.cjs');

  test('huge words tokenize without a stack overflow (no spread into push)', () => {
    const bangs = tok.encode('!'.repeat(300000)), smiles = tok.encode('😀'.repeat(100000));
    expect(tok.decode(bangs)).toBe('!'.repeat(300000));
    expect(tok.decode(smiles)).toBe('😀'.repeat(100000));
    expect(smiles.length).toBeGreaterThanOrEqual(100000);
  });

  test('a limit refuses, by its length alone, text no context could hold', async () => {
    const limit = { maxTokens: 1024, caller: 'run' };
    for (const text of ['!'.repeat(300000), '😀'.repeat(100000), 'a'.repeat(1e6)]) {
      await expectNamed(() => tok.encode(text, limit), /^run: the text exceeds the model's context of 1024 tokens \(its \d+ UTF-8 bytes need at least \d+ tokens/);
    }
    // One token stands for at most as many bytes as the vocabulary's longest token ("<|endoftext|>"
    // here, 13): 13 * 100 bytes may still fit in 100 tokens, one byte more cannot.
    // (A byte-level token's characters stand for one byte each; a special token is its own UTF-8.)
    const longest = Math.max(...Object.keys(brownFiles().vocab).map((t) => (t.startsWith('<|') ? Buffer.byteLength(t) : t.length)));
    expect(longest).toBe(17);
    await expectNamed(() => tok.encode('x'.repeat(17 * 100 + 1), { maxTokens: 100 }), /^encode: .*need at least 101 tokens of at most 17 bytes/);
  });

  test('text that passes the length test stops as soon as its tokens pass the limit', async () => {
    const text = 'the cat sat. '.repeat(200);  // 13 bytes, 5 tokens a sentence
    const all = tok.encode(text);
    expect(tok.encode(text, { maxTokens: all.length })).toEqual(all);
    await expectNamed(() => tok.encode(text, { maxTokens: all.length - 1, caller: 'generate' }),
      new RegExp(`^generate: the text exceeds the model's context of ${all.length - 1} tokens \\(it has more than ${all.length - 1} tokens\\)`));
  });

  test('a symbol tokenizer counts characters against the limit', async () => {
    const sym = new api.SymbolTokenizer({ '<unk>': 0, a: 1, b: 2 });
    expect(sym.encode('ab😀', { maxTokens: 3 })).toEqual([1, 2, 0]);
    await expectNamed(() => sym.encode('ab😀a', { maxTokens: 3, caller: 'pronounce' }), /^pronounce: the text exceeds the model's context of 3 tokens \(its 4 characters/);
  });

  test('bad texts, limits and ids are named errors', async () => {
    const { HOSTILE, hostileOptions, fuzz } = require('./fuzz.cjs');
    const sym = new api.SymbolTokenizer({ '<unk>': 0, a: 1 });
    const before = tok.encode('the cat');
    const same = () => expect(tok.encode('the cat')).toEqual(before);
    for (const t of [tok, sym]) {
      expect(await fuzz(HOSTILE.filter((v) => typeof v !== 'string'), (v) => t.encode(v), same)).toEqual([]);
      expect(await fuzz(hostileOptions(['maxTokens', 'caller']), (o) => t.encode('the cat', o), same)).toEqual([]);
      expect(await fuzz(HOSTILE, (v) => t.decode(v), same)).toEqual([]);
      expect(await fuzz(HOSTILE, (v) => t.decode([v]), same)).toEqual([]);
      expect(await fuzz(HOSTILE, (v) => t.tokenText(v), same)).toEqual([]);
    }
    await expectNamed(() => tok.encode('x', {}), /^encode: the limit needs maxTokens/);
    await expectNamed(() => tok.encode('x', { maxTokens: -1 }), /^encode: maxTokens must be an integer >= 0, got -1/);
    await expectNamed(() => tok.encode(null), /^encode: text must be a string, got null/);
    await expectNamed(() => tok.decode(null), /^decode: ids must be an array of token ids, got null/);
  });
});

describe('through the models', () => {
  const { load } = require('./helpers.cjs');
  const { expectNamed } = require('./fuzz.cjs');
  let gpt2;
  beforeAll(async () => { gpt2 = await (await load('simd')).loadModel(brownDir); });
  afterAll(() => gpt2?.dispose());

  test('GPT-2 names an over-long text, then runs as before', async () => {
    const before = gpt2.run('the cat sat').tokens;
    await expectNamed(() => gpt2.run('!'.repeat(300000)), /^run: .*exceed.* context/);
    await expectNamed(() => gpt2.run('😀'.repeat(100000)), /^run: .*exceed.* context/);
    await expectNamed(() => gpt2.generate('a'.repeat(1e6), { maxNewTokens: 1 }), /^generate: .*exceed.* context/);
    expect(gpt2.run('the cat sat').tokens).toEqual(before);
  });
});
