// Tokenizers on long and hostile text: the byte-level BPE gives the same ids as GPT-2's reference
// merge loop (kept below) while staying fast on words of any length; over-long text is refused
// with a named error before any work; WordPiece stays linear and truncates pairs as BERT does.
const fs = require('node:fs');
const path = require('node:path');
const { api, root } = require('./helpers.cjs');
const { documentationText } = require('./documentation.cjs');

const { adversarialTexts, brownDir, brownFiles, letterVocab, pick, random, randomText } = require('./tokenizer_texts.cjs');

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
// Each merges text's ranks, built once (the reference is called on many texts per vocabulary).
const rankTables = new Map();
function mergeRanks(merges) {
  if (!rankTables.has(merges)) {
    const ranks = new Map();
    merges.split('\n').filter((l) => l.trim() && !l.startsWith('#version')).forEach((l, rank) => ranks.set(l.trim(), rank));
    rankTables.set(merges, ranks);
  }
  return rankTables.get(merges);
}
function referenceEncode({ vocab, merges }, text) {
  const ranks = mergeRanks(merges);
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
      documentationText(),  // README.md and docs/*.md
      fs.readFileSync(path.join(root, 'bindings/ts/tokenizers/bpe_tokenizer.ts'), 'utf8'),
      'café 🙂 naïve ﷽ 中文字 \u0000\u0007 \ud800x \udfff ℌ𝔢𝔩𝔩𝔬 e\u0301 ',
      'a'.repeat(300), 'the'.repeat(200), 'ssssssssssssssssss', '!!!!!!!!!!!!??', '   \n\n\t  x  ', "don't we'll I'm",
    ];
    for (let k = 0; k < 60; k++) texts.push(randomText(rnd, 'etaoinshrdlu', 1 + Math.floor(rnd() * 400)));
    for (let k = 0; k < 60; k++) texts.push(randomText(rnd, 'etaoin shrd.,\'é😀', 500));
    // (The reference knows no special tokens: '<|endoftext|>' in the README and docs is written apart.)
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

  test('a word over 64 KiB is merged in pieces cut between characters, never inside one', () => {
    // Byte-level stand-ins of 😀's UTF-8 bytes F0 9F 98 80 and merges that join them.
    const [b0, b1, b2, b3] = [0xf0, 0x9f, 0x98, 0x80].map((b) => byteTable()[b]);
    const vocab = { '!': 0, [b0]: 1, [b1]: 2, [b2]: 3, [b3]: 4, [b0 + b1]: 5, [b2 + b3]: 6, [b0 + b1 + b2 + b3]: 7 };
    const emoji = new api.BpeTokenizer({ vocab, merges: `${b0} ${b1}\n${b2} ${b3}\n${b0 + b1} ${b2 + b3}\n` });
    // '!' first puts a cut at 65,536 bytes inside a character, were it not moved back.
    const ids = emoji.encode('!' + '😀'.repeat(40000));
    expect(ids.length).toBe(40001);
    expect(ids.slice(1).every((id) => id === 7)).toBe(true);
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
    for (const make of [(v) => new api.SymbolTokenizer(v), (v) => new api.SymbolTokenizer({ a: v }), (v) => new api.SymbolTokenizer({ a: 0 }, v),
      (v) => new api.SymbolTokenizer({ a: 0 }, false, v), (v) => new api.BpeTokenizer({ vocab: { a: v }, merges: '' })]) {
      expect(await fuzz(HOSTILE, make, same)).toEqual([]);
    }
    await expectNamed(() => new api.SymbolTokenizer({ a: 2 ** 30 }), /^vocab.json: id of "a" must be an integer from 0 to 1048576, got 1073741824/);
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

// ---- WordPiece: a made-up vocabulary of letters, continuations and 20,000 random pieces (letterVocab).

/** Hugging Face's WordPiece on one word: every end tried, from the word's end down. */
const pieceSets = new WeakMap();  // each vocabulary's lines as a Set, built once
function referencePieces(lines, word, maxChars = 100) {
  if (!pieceSets.has(lines)) pieceSets.set(lines, new Set(lines));
  const ids = pieceSets.get(lines), chars = Array.from(word), pieces = [];
  if (chars.length > maxChars) return ['[UNK]'];
  for (let start = 0; start < chars.length;) {
    let end = chars.length, piece;
    for (; end > start; end--) {
      const candidate = (start > 0 ? '##' : '') + chars.slice(start, end).join('');
      if (ids.has(candidate)) { piece = candidate; break; }
    }
    if (piece === undefined) return ['[UNK]'];
    pieces.push(piece);
    start = end;
  }
  return pieces;
}

describe('WordPiece', () => {
  const { HOSTILE, hostileOptions, fuzz, expectNamed, label } = require('./fuzz.cjs');
  const lines = letterVocab(5);
  const tok = new api.WordPieceTokenizer({ vocab: lines.join('\n') });

  test('pieces match the reference that tries every end', () => {
    const rnd = random(6), cased = new api.WordPieceTokenizer({ vocab: lines, doLowerCase: false });
    for (let k = 0; k < 300; k++) {
      const word = randomText(rnd, 'abcdefghijklmnopqrstuvwxyzé', 1 + Math.floor(rnd() * 110));
      expect([word, cased.tokenize(word)]).toEqual([word, referencePieces(lines, word)]);
    }
  });

  test('a word longer than max_input_chars_per_word is one [UNK]', () => {
    const tiny = new api.WordPieceTokenizer({ vocab: '[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\n##a\n😀\n##😀\nb\n' });
    expect(tiny.tokenize('a'.repeat(100))).toEqual(['a', ...Array(99).fill('##a')]);
    expect(tiny.tokenize('a'.repeat(101))).toEqual(['[UNK]']);
    expect(tiny.tokenize('😀'.repeat(100) + ' b')).toEqual(['😀', ...Array(99).fill('##😀'), 'b']);  // characters, not UTF-16 units
    expect(tiny.tokenize('😀'.repeat(101) + ' b')).toEqual(['[UNK]', 'b']);
    const json = { model: { type: 'WordPiece', vocab: Object.fromEntries(lines.map((t, i) => [t, i])), max_input_chars_per_word: 5 } };
    const short = api.WordPieceTokenizer.fromTokenizerJson(json);
    expect(short.maxInputCharsPerWord).toBe(5);
    expect(short.tokenize('abcde abcdef')).toEqual(referencePieces(lines, 'abcde', 5).concat(['[UNK]']));
  });

  test('pairs are cut as BERT\'s _truncate_seq_pair: the longer text, the second on a tie', () => {
    const tiny = new api.WordPieceTokenizer({ vocab: '[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\nc\nd\ne\nf\n' });
    expect(tiny.encode(['a b c', 'd e f'], { maxLength: 6 }).tokens).toEqual(['[CLS]', 'a', 'b', '[SEP]', 'd', '[SEP]']);
    expect(tiny.encode(['a b c', 'd e f'], { maxLength: 6 }).tokenTypes).toEqual([0, 0, 0, 0, 1, 1]);
    // (lengths of A and B, maxLength) -> what BERT keeps, worked out by hand from its loop.
    const cases = [[[1, 4], 6, [1, 2]], [[4, 1], 6, [2, 1]], [[2, 2], 5, [1, 1]], [[3, 2], 7, [2, 2]], [[5, 5], 9, [3, 3]], [[2, 3], 7, [2, 2]]];
    for (const [[na, nb], maxLength, [ka, kb]] of cases) {
      const enc = tiny.encode(['a '.repeat(na), 'b '.repeat(nb)], { maxLength });
      expect([na, nb, maxLength, enc.tokens.join(' ')]).toEqual([na, nb, maxLength, ['[CLS]', ...Array(ka).fill('a'), '[SEP]', ...Array(kb).fill('b'), '[SEP]'].join(' ')]);
    }
  });

  test('malformed tokenizer.json fields are named errors naming the file and the field', async () => {
    const vocab = Object.fromEntries(lines.map((t, i) => [t, i]));
    const wp = (model, extra = {}) => () => api.WordPieceTokenizer.fromTokenizerJson({ model: { type: 'WordPiece', vocab, ...model }, ...extra });
    await expectNamed(wp({ max_input_chars_per_word: 'x' }), /^tokenizer.json: model.max_input_chars_per_word must be an integer from 1 to 100000, got "x"/);
    await expectNamed(wp({ max_input_chars_per_word: 0 }), /^tokenizer.json: model.max_input_chars_per_word must be/);
    await expectNamed(wp({ unk_token: '<unk>' }), /^tokenizer.json: model.unk_token must be "\[UNK\]"/);
    await expectNamed(wp({ continuing_subword_prefix: 7 }), /^tokenizer.json: model.continuing_subword_prefix must be "##"/);
    await expectNamed(wp({ vocab: { ...vocab, extra: '5' } }), /^tokenizer.json: model.vocab\["extra"\] must be an integer id/);
    await expectNamed(wp({}, { normalizer: { type: 'BertNormalizer', lowercase: 'yes' } }), /^tokenizer.json: normalizer.lowercase must be true or false, got "yes"/);
    await expectNamed(wp({}, { normalizer: { type: 'BertNormalizer', strip_accents: 1 } }), /^tokenizer.json: normalizer.strip_accents must be true, false or null, got 1/);
    await expectNamed(wp({}, { normalizer: 5 }), /^tokenizer.json: normalizer must be an object/);
    const bpe = (model) => () => api.BpeTokenizer.fromTokenizerJson({ model: { type: 'BPE', vocab: { a: 0, b: 1, ab: 2 }, merges: ['a b'], ...model } });
    expect(bpe({})().encode('ab')).toEqual([2]);
    await expectNamed(bpe({ merges: [1, 2] }), /^tokenizer.json: model.merges: merge 1 is malformed \(expected "a b" or \["a", "b"\]\): 1/);
    await expectNamed(bpe({ merges: [['a', 1]] }), /^tokenizer.json: model.merges: merge 1 is malformed/);
    await expectNamed(bpe({ merges: ['a b', null] }), /^tokenizer.json: model.merges: merge 2 is malformed/);
    await expectNamed(bpe({ merges: 'a b' }), /^tokenizer.json: model.merges must be a list of merges \("a b" or \["a", "b"\]\), got "a b"/);
    await expectNamed(bpe({ vocab: { a: 'zero' } }), /^tokenizer.json: model.vocab: token "a" has an invalid id "zero"/);
    await expectNamed(bpe({ vocab: { a: 2 ** 40 } }), /^tokenizer.json: model.vocab: token "a" has an invalid id 1099511627776/);
    // Inside the file only what JSON.parse can give, so no Proxy that throws when read (label 'object').
    const parsed = HOSTILE.filter((v) => label(v) !== 'object');
    for (const from of [api.BpeTokenizer, api.WordPieceTokenizer]) {
      expect(await fuzz(HOSTILE, (v) => from.fromTokenizerJson(v))).toEqual([]);
      expect(await fuzz(parsed, (v) => from.fromTokenizerJson({ model: v }))).toEqual([]);
      expect(await fuzz(parsed, (v) => from.fromTokenizerJson({ model: { vocab, merges: v } }))).toEqual([]);
      expect(await fuzz(parsed, (v) => from.fromTokenizerJson({ model: { vocab: v, merges: [] } }))).toEqual([]);
      expect(await fuzz(parsed, (v) => from.fromTokenizerJson({ model: { vocab: { a: v }, merges: [] } }))).toEqual([]);
      expect(await fuzz(parsed, (v) => from.fromTokenizerJson({ model: { vocab, merges: [] }, normalizer: v }))).toEqual([]);
    }
  });

  test('files too large for a tokenizer are refused before they are split or parsed', async () => {
    const huge = 'ab\n'.repeat(12 * 1024 * 1024);  // 36 MiB of text
    await expectNamed(() => new api.WordPieceTokenizer({ vocab: huge }), /^vocab.txt: 37748736 characters are more than a tokenizer file may have \(32 MiB\)/);
    await expectNamed(() => new api.BpeTokenizer({ vocab: { a: 0 }, merges: huge }), /^merges.txt: 37748736 characters are more than a tokenizer file may have/);
    const many = {};
    // Tokens "0", "1", ...: index-like keys build a 1M-key object in well under a second (the
    // tokens 't0', 't1', ... took ~10 s); the count the check reads is the same.
    for (let i = 0; i <= 1 << 20; i++) many[i] = i;
    await expectNamed(() => new api.BpeTokenizer({ vocab: many, merges: '' }), /^vocab.json: 1048577 tokens are more than a vocabulary may have \(1048576\)/);
  });

  test('bad files, inputs and options are named errors; the tokenizer is unchanged after', async () => {
    const before = tok.encode(['abc de', 'fg']);
    const same = () => expect(tok.encode(['abc de', 'fg'])).toEqual(before);
    const fields = ['vocab', 'doLowerCase', 'stripAccents', 'tokenizeChineseChars', 'maxInputCharsPerWord'];
    expect(await fuzz([...HOSTILE, ...hostileOptions(fields)], (v) => new api.WordPieceTokenizer(v), same)).toEqual([]);
    expect(await fuzz(hostileOptions(fields), (o) => new api.WordPieceTokenizer({ vocab: lines, ...o }), same)).toEqual([]);
    expect(await fuzz([...HOSTILE, ['a', 5], ['a'], ['a', 'b', 'c']], (v) => tok.encode(v), same)).toEqual([]);
    expect(await fuzz(hostileOptions(['maxLength']), (o) => tok.encode(['abc de', 'fg'], o), same)).toEqual([]);
    expect(await fuzz(HOSTILE, (v) => tok.decode(v), same)).toEqual([]);
    expect(await fuzz(HOSTILE, (v) => tok.tokenText(v), same)).toEqual([]);
    const given = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'a', '', ''];
    new api.WordPieceTokenizer({ vocab: given });
    expect(given.length).toBe(8);  // the caller's lines are not trimmed in place
    const bpeFiles = brownFiles();
    expect(await fuzz([...HOSTILE, ...hostileOptions(['vocab', 'merges'])], (v) => new api.BpeTokenizer(v))).toEqual([]);
    expect(await fuzz(HOSTILE, (v) => new api.BpeTokenizer({ vocab: bpeFiles.vocab, merges: v }))).toEqual([]);
    await expectNamed(() => tok.encode('abc', { maxLength: 2 }), /^encode: maxLength 2 leaves no room for the text/);
    await expectNamed(() => tok.encode('abc', { maxLenght: 5 }), /^encode: unknown option 'maxLenght' \(did you mean 'maxLength'\?\)/);
  });
});

// ---- Hostile text (64 kB of each kind) tokenizes to what it should. That it costs about what
// ordinary text costs (a ratio of times, 1 MB each) is a wall-clock check: tokenizer_linear.perf.cjs,
// run by `npm run check:perf`.
describe('64 kB of adversarial text', () => {
  const SIZE = 64_000;
  const { ordinary, adversarial } = adversarialTexts(SIZE);

  test('byte-level BPE: the same text back', () => {
    const tok = new api.BpeTokenizer(brownFiles());
    for (const [name, text] of Object.entries({ ordinary, ...adversarial })) expect([name, tok.decode(tok.encode(text)) === text]).toEqual([name, true]);
  });

  test('WordPiece: long words [UNK], punctuation a word each', () => {
    const tok = new api.WordPieceTokenizer({ vocab: letterVocab(5) });
    for (const [name, text] of Object.entries(adversarial)) {
      const result = tok.tokenize(text);
      if (name === 'letters, no spaces' || name.startsWith('one repeated letter') || name === 'emoji') expect([name, result]).toEqual([name, ['[UNK]']]);
      if (name === 'one repeated symbol') expect(result.length).toBe(SIZE);
      if (name === 'no-space words of 100 letters') expect(result.filter((t) => t === '.').length).toBe(SIZE / 100);
    }
  });
});

test('arpabetToIpa and WordPiece tokenize name bad arguments; a key of Object is not a phoneme', async () => {
  const { HOSTILE, fuzz, expectNamed } = require('./fuzz.cjs');
  expect(api.arpabetToIpa(['F', 'OW1', 'N'])).toBe('foʊn');
  expect(api.arpabetToIpa(['constructor', 'toString', '__proto__'])).toBe('⟨constructor⟩⟨toString⟩⟨__proto__⟩');
  expect(await fuzz([...HOSTILE, [null], ['F', 7]], (v) => api.arpabetToIpa(v))).toEqual([]);
  await expectNamed(() => api.arpabetToIpa(['F', 7]), /^arpabetToIpa: phonemes\[1\] must be a string, got 7/);
  const tok = new api.WordPieceTokenizer({ vocab: '[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\n' });
  expect(await fuzz(HOSTILE, (v) => tok.tokenize(v))).toEqual([]);
  await expectNamed(() => tok.tokenize(null), /^tokenize: text must be a string, got null/);
});
