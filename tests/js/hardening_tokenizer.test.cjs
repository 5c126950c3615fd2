// Tokenizer files as a trust boundary (issue 38): Split and Replace patterns run in time linear in
// the text, with the spans a backtracking engine finds on the patterns real tokenizers use; the
// parts of a tokenizer.json are bounded in number, nesting and growth; every file's field of the
// wrong kind, and a vocabulary that gives one id to two tokens, is a named error. The hostile
// files are built here.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { api, root } = require('./helpers.cjs');
const { expectNamed } = require('./fuzz.cjs');
const { tsModule } = require('./ts_module.cjs');

const { onigRegex } = tsModule('bindings/ts/tokenizers/onig_regex.ts');
const { STEPS_PER_CHARACTER_AND_INSTRUCTION } = tsModule('bindings/ts/tokenizers/linear_regex.ts');

// ---- The patterns of real tokenizer.json files (and llama.cpp's for GGUF), each with the same
// pattern written by hand for JavaScript's RegExp (Oniguruma's \s is White_Space; $ ends a line).
const WS = '\\p{White_Space}';
const DEEPSEEK_LETTERS = 'A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1f7dᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-\u1fd3ῖ-\u1fdbῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃';
const UPPER = '[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]', LOWER = '[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]';
const CONTRACTIONS = "(?i:'s|'t|'re|'ve|'m|'ll|'d)";
const JS_CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
const REAL = {
  'GPT-2 (ByteLevel)': ["'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
    `'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^${WS}\\p{L}\\p{N}]+|${WS}+(?!\\P{White_Space})|${WS}+`],
  'Llama 3 / cl100k': [`${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
    `${JS_CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^${WS}\\p{L}\\p{N}]+[\\r\\n]*|${WS}*[\\r\\n]+|${WS}+(?!\\P{White_Space})|${WS}+`],
  'Qwen2': [`${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
    `${JS_CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^${WS}\\p{L}\\p{N}]+[\\r\\n]*|${WS}*[\\r\\n]+|${WS}+(?!\\P{White_Space})|${WS}+`],
  'GPT-4o / o200k': [`[^\\r\\n\\p{L}\\p{N}]?${UPPER}*${LOWER}+${CONTRACTIONS}?|[^\\r\\n\\p{L}\\p{N}]?${UPPER}+${LOWER}*${CONTRACTIONS}?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
    `[^\\r\\n\\p{L}\\p{N}]?${UPPER}*${LOWER}+${JS_CONTRACTIONS}?|[^\\r\\n\\p{L}\\p{N}]?${UPPER}+${LOWER}*${JS_CONTRACTIONS}?|\\p{N}{1,3}| ?[^${WS}\\p{L}\\p{N}]+[\\r\\n/]*|${WS}*[\\r\\n]+|${WS}+(?!\\P{White_Space})|${WS}+`],
  'Tekken': [`[^\\r\\n\\p{L}\\p{N}]?${UPPER}*${LOWER}+|[^\\r\\n\\p{L}\\p{N}]?${UPPER}+${LOWER}*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
    `[^\\r\\n\\p{L}\\p{N}]?${UPPER}*${LOWER}+|[^\\r\\n\\p{L}\\p{N}]?${UPPER}+${LOWER}*|\\p{N}| ?[^${WS}\\p{L}\\p{N}]+[\\r\\n/]*|${WS}*[\\r\\n]+|${WS}+(?!\\P{White_Space})|${WS}+`],
  'BLOOM': [' ?[^(\\s|[.,!?…。，、।۔،])]+', ` ?[^(${WS}|.,!?…。，、।۔،)]+`],
  'DeepSeek V3 letters': [`\\s?[${DEEPSEEK_LETTERS}]+`, `${WS}?[${DEEPSEEK_LETTERS}]+`],
  'DeepSeek V3 punctuation': ['\\s?[!-/:-~！-／：-～‘-‟　-。]+', `${WS}?[!-/:-~！-／：-～‘-‟　-。]+`],
  'DeepSeek V3 trailing space': ['\\s+$', `${WS}+(?=\\n|(?![^]))`],
  'DeepSeek V3 CJK': ['[一-龥ࠀ-一가-퟿]+', '[一-龥ࠀ-一가-퟿]+'],
  'DeepSeek coder': ['\\s?\\p{L}+|\\s?\\p{P}+|[\\r\\n]|\\p{N}+', `${WS}?\\p{L}+|${WS}?\\p{P}+|[\\r\\n]|\\p{N}+`],
  'llama.cpp default': ['[\\p{P}\\$\\+<=>\\^~\\|]+|[0-9][0-9][0-9]', '[\\p{P}\\$\\+<=>\\^~\\|]+|[0-9][0-9][0-9]'],
};

/** A seeded generator, so a failure names a text that can be made again. */
function random(seed) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}
// Letters of each case and script, digits of three kinds, each kind of space (U+FEFF is one for
// JavaScript's \s but not White_Space), punctuation, marks, astral and lone surrogates, contractions.
const ALPHABET = ['a', 'Z', 'é', 'ſ', 'K', 'Ω', 'ǅ', 'ʰ', '中', '가', '𐐀', 'µ', '7', '٣', '½', ' ', ' ', ' ', '\t', '\n', '\r', '\u00a0', '\u3000',
  '\u2028', '\ufeff', '\u0085', "'", '.', ',', '!', '?', '(', ')', '|', '…', '。', '/', '$', '+', '<', '~', '‘', '！', '\u0301', '😀', '\ud800',
  "'s", "'LL", "'Ve", "'d", '123456', 'The', 'jury'];
const randomText = (rnd, n) => Array.from({ length: n }, () => ALPHABET[Math.floor(rnd() * ALPHABET.length)]).join('');

/** The non-empty matches of a pattern, as [start, end]. */
function ourSpans(re, text) {
  const out = [];
  re.each(text, (start, end) => { if (end > start) out.push([start, end]); });
  return out;
}
const jsSpans = (re, text) => [...text.matchAll(re)].filter((m) => m[0].length > 0).map((m) => [m.index, m.index + m[0].length]);

describe('Split and Replace patterns', () => {
  test("the real patterns find JavaScript's matches on real and random text, in a few steps per character", () => {
    const rnd = random(38);
    const texts = [fs.readFileSync(path.join(root, 'README.md'), 'utf8').slice(0, 8000), "Don't WE'LL say it's 1234567 times: ﷺ\r\n\r\n  x  \n"];
    for (let k = 0; k < 100; k++) texts.push(randomText(rnd, Math.floor(rnd() * 200)));
    let mostSteps = 0;
    for (const [name, [pattern, js]] of Object.entries(REAL)) {
      const re = onigRegex(pattern, name), reference = new RegExp(js, 'gu');
      for (const text of texts) {
        expect([name, text, ourSpans(re, text)]).toEqual([name, text, jsSpans(reference, text)]);
        mostSteps = Math.max(mostSteps, re.stepsUsed / ((text.length + 1) * (re.size + 1)));
      }
    }
    // The budget leaves the real patterns a wide margin.
    expect(mostSteps).toBeLessThan(STEPS_PER_CHARACTER_AND_INSTRUCTION / 4);
  });

  test('"(a+)+$" on a long run of a and a "!" ends in steps linear in the text', () => {
    // A backtracking engine takes 2^n steps here: 12 s at n = 30, so years at n = 100,000.
    const re = onigRegex('(a+)+$', 'test'), text = 'a'.repeat(100000) + '!';
    expect(ourSpans(re, text)).toEqual([]);
    expect(re.stepsUsed).toBeLessThan(4 * (text.length + 1) * re.size);
    expect(ourSpans(re, 'a'.repeat(30))).toEqual([[0, 30]]);
    expect(ourSpans(re, 'aa\naaa')).toEqual([[0, 2], [3, 6]]);  // ($ ends a line, as in Oniguruma)
  });

  test('a pattern whose matches would take quadratic time to find is stopped by its step budget, by name', async () => {
    const re = onigRegex('a*b|a', 'test');
    expect(ourSpans(re, 'aaaa')).toEqual(jsSpans(/a*b|a/g, 'aaaa'));
    const text = 'a'.repeat(20000);
    let error;
    try { ourSpans(re, text); } catch (e) { error = e; }
    expect(error?.message).toMatch(/^test: the pattern "a\*b\|a" needs more than \d+ steps on a text of 20000 characters/);
  });

  test("Oniguruma's reading: \\w, ., ^ and $, nested classes, \\A \\z, lazy quantifiers, lookbehind", () => {
    const spans = (pattern, text) => ourSpans(onigRegex(pattern, 'test'), text).map(([s, e]) => text.slice(s, e));
    expect(spans('\\w+', 'héllo_wörld, ١٢')).toEqual(['héllo_wörld', '١٢']);
    expect(spans('.+', 'a\rb\nc')).toEqual(['a\rb', 'c']);
    expect(spans('^x|x$', 'xax\nxbx')).toEqual(['x', 'x', 'x', 'x']);
    expect(spans('\\Ax|x\\z', 'xax\nxbx')).toEqual(['x', 'x']);
    expect(spans('[^(\\s|[.,])]+', 'a(b c.d|e,f)')).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(spans('<.+?>', '<a><b>')).toEqual(['<a>', '<b>']);
    expect(spans('(?<=\\d)x', 'x1x2x')).toEqual(['x', 'x']);
    expect(spans('(?i:ab)', 'ab AB aB')).toEqual(['ab', 'AB', 'aB']);
    expect(spans('\\x{1F600}|\\u00e9', '😀é')).toEqual(['😀', 'é']);
  });

  test('what cannot be read faithfully or in linear time is refused by name', async () => {
    const cases = [
      ['(a)\\1', /uses \\1, which is not supported/], ['(?>a)', /uses the group \(\?>a\)/], ['a*+', /possessive quantifier/],
      ['(?=a+)', /lookaround that is not a fixed run/], ['(?:a{1000}){1000}', /compiles to \d+ instructions, more than 20000/],
      ['\\bx', /uses \\b/], ['(?<n>a)', /uses the group/], ['[[:alpha:]]', /POSIX bracket/], ['[a&&b]', /intersection/],
      ['(?i:[a-z])', /class inside a case-insensitive group/], ['\\p{Nope}', /property \\p\{Nope\}/], ['(a', /unclosed group/],
      ['a)', /unmatched "\)"/], ['[a', /unclosed character class/], ['a{3,2}', /minimum above its maximum/], ['(?i)a', /the group \(\?i\)/],
      ['x'.repeat(70000), /pattern of 70000 characters is longer than 65536/], ['('.repeat(100) + ')'.repeat(100), /nested more than 64 deep/],
    ];
    for (const [pattern, message] of cases) {
      await expectNamed(() => new api.HfTokenizer({ tokenizer: byteTokenizer({ type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated' }) }),
        new RegExp(`^tokenizer\\.json: pre_tokenizer\\.pattern: .*${message.source}`));
    }
  });
});

// ---- A byte-level tokenizer.json whose ids are the bytes of the text (no merges), so that ids
// show what the pipeline made of it.
function byteChars() {
  const out = [];
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    out.push(String.fromCharCode(printable ? b : next++));
  }
  return out;
}
const BYTE_VOCAB = Object.fromEntries(byteChars().map((ch, b) => [ch, b]));
function byteTokenizer(preTokenizer, normalizer = null) {
  return {
    model: { type: 'BPE', vocab: BYTE_VOCAB, merges: [] }, normalizer,
    pre_tokenizer: preTokenizer === undefined ? { type: 'ByteLevel', add_prefix_space: false, use_regex: false } : preTokenizer,
    decoder: { type: 'ByteLevel' },
  };
}
const BYTES = { type: 'ByteLevel', add_prefix_space: false, use_regex: false };
const bytesOf = (text) => [...Buffer.from(text, 'utf8')];

describe('tokenizer.json parts', () => {
  test('a hostile Split pattern encodes quickly, and gives the ids of the same split', () => {
    const tok = new api.HfTokenizer({ tokenizer: byteTokenizer({ type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: '(a+)+$' }, behavior: 'Isolated' }, BYTES] }) });
    const text = 'a'.repeat(100000) + '!';
    expect(tok.encode(text)).toEqual(bytesOf(text));
    expect(tok.decode(tok.encode('aaa a!'))).toBe('aaa a!');
  });

  test('a Sequence of 20 ByteLevel, nesting, too many parts and long replacements are refused by name', async () => {
    const hf = (pre, norm) => new api.HfTokenizer({ tokenizer: byteTokenizer(pre, norm) });
    await expectNamed(() => hf({ type: 'Sequence', pretokenizers: Array(20).fill(BYTES) }),
      /^tokenizer\.json: pre_tokenizer\.pretokenizers\[1\] is a second ByteLevel pre-tokenizer \(after pre_tokenizer\.pretokenizers\[0\]\)/);
    let nested = BYTES;
    for (let d = 0; d < 6; d++) nested = { type: 'Sequence', pretokenizers: [nested] };
    await expectNamed(() => hf(nested), /^tokenizer\.json: pre_tokenizer(\.pretokenizers\[0\]){4} is a Sequence nested more than 4 deep/);
    await expectNamed(() => hf({ type: 'Sequence', pretokenizers: Array(100).fill({ type: 'Digits' }) }), /^tokenizer\.json: pre_tokenizer has more than 64 parts \(at pre_tokenizer\.pretokenizers\[63\]\)/);
    await expectNamed(() => hf(undefined, { type: 'Replace', pattern: { String: 'a' }, content: 'b'.repeat(65) }), /^tokenizer\.json: normalizer\.content has 65 characters, more than 64/);
    await expectNamed(() => hf(undefined, { type: 'Prepend', prepend: 'b'.repeat(100) }), /^tokenizer\.json: normalizer\.prepend has 100 characters, more than 64/);
    let deepDecoder = { type: 'Fuse' };
    for (let d = 0; d < 6; d++) deepDecoder = { type: 'Sequence', decoders: [deepDecoder] };
    await expectNamed(() => new api.HfTokenizer({ tokenizer: { ...byteTokenizer(), decoder: deepDecoder } }), /^tokenizer\.json: decoder(\.decoders\[0\]){4} is a Sequence nested more than 4 deep/);
    // The one ByteLevel of a real file reads as before.
    expect(hf({ type: 'Sequence', pretokenizers: [{ type: 'Digits' }, BYTES] }).encode('The jury said it')).toEqual(bytesOf('The jury said it'));
  });

  test('a normalizer that makes text grow without bound stops at the budget of encode, by name; the tokenizer stays usable', async () => {
    const grow = { type: 'Replace', pattern: { String: 'a' }, content: 'a'.repeat(64) };
    const tok = new api.HfTokenizer({ tokenizer: byteTokenizer(undefined, { type: 'Sequence', normalizers: [grow, grow, grow, grow] }) });
    // 1,000 characters may make 256 * 1,000 + 65,536; the second Replace would write 4,096,000.
    await expectNamed(() => tok.encode('a'.repeat(1000)),
      /^encode: the tokenizer\.json's normalizer\.normalizers\[1\] wrote more than the 321536 characters allowed for a text of 1000 \(256 per character and 65536 more/);
    expect(tok.encode('b')).toEqual([98]);
    // A regex Replace stops as soon as it passes the budget.
    const regexGrow = { type: 'Replace', pattern: { Regex: '.' }, content: 'x'.repeat(64) };
    const tok2 = new api.HfTokenizer({ tokenizer: byteTokenizer(undefined, { type: 'Sequence', normalizers: [regexGrow, regexGrow] }) });
    await expectNamed(() => tok2.encode('y'.repeat(5000)), /^encode: the tokenizer\.json's normalizer\.normalizers\[1\] wrote more than the 1345536 characters/);
  });

  test('fields of the wrong kind and vocabularies giving one id to two tokens are named errors', async () => {
    for (const vocab of ['x', null, 7, ['a']]) {
      await expectNamed(() => new api.BpeTokenizer({ vocab, merges: '' }), /^vocab\.json/);
      await expectNamed(() => new api.HfTokenizer({ tokenizer: { ...byteTokenizer(), model: { type: 'BPE', vocab, merges: [] } } }), /^tokenizer\.json: model\.vocab must be an object/);
    }
    await expectNamed(() => new api.BpeTokenizer({ vocab: { a: 0, b: 1, c: 1 }, merges: '' }), /^vocab\.json: tokens "b" and "c" both have the id 1/);
    await expectNamed(() => new api.HfTokenizer({ tokenizer: { ...byteTokenizer(), model: { type: 'BPE', vocab: { ...BYTE_VOCAB, extra: 5 }, merges: [] } } }),
      /^tokenizer\.json: model\.vocab: tokens "\u0105" and "extra" both have the id 5|^tokenizer\.json: model\.vocab: tokens ".*" and "extra" both have the id 5/);
    const fields = [
      [{ type: 'ByteLevel', add_prefix_space: 1 }, /pre_tokenizer\.add_prefix_space must be a boolean, got 1/],
      [{ type: 'Split', pattern: { Regex: 'a' }, behavior: 'Isolated', invert: 'no' }, /pre_tokenizer\.invert must be a boolean/],
      [{ type: 'Split', pattern: { Regex: 7 }, behavior: 'Isolated' }, /pre_tokenizer\.pattern must be \{ String \} or \{ Regex \}, got an object/],
      [{ type: 'Sequence', pretokenizers: 'x' }, /pre_tokenizer\.pretokenizers must be a list, got "x"/],
      [{ type: 'Metaspace', replacement: 5 }, /pre_tokenizer\.replacement must be a string/],
    ];
    for (const [pre, message] of fields) await expectNamed(() => new api.HfTokenizer({ tokenizer: byteTokenizer(pre) }), message);
  });

  test('a GPT-2 folder whose vocab.json is "x" or null loads to a named error', async () => {
    const attn = await api.loadAttention();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vocab-kind-'));
    try {
      for (const file of ['config.json', 'merges.txt', 'model.safetensors']) fs.symlinkSync(path.join(root, 'web/models/brown-gpt2', file), path.join(dir, file));
      for (const vocab of ['"x"', 'null', '[1, 2]']) {
        fs.writeFileSync(path.join(dir, 'vocab.json'), vocab);
        await expectNamed(() => attn.loadModel(dir), /vocab\.json/);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
