// WordPiece with BERT's basic tokenizer on tricky text, against ids written by an independent
// Python implementation of Hugging Face BertTokenizer's rules (tests/fixtures/wordpiece).
const fs = require('node:fs');
const path = require('node:path');
const { api, root } = require('./helpers.cjs');

const dir = path.join(root, 'tests/fixtures/wordpiece');
const cases = JSON.parse(fs.readFileSync(path.join(dir, 'cases.json'), 'utf8'));
const vocab = fs.readFileSync(path.join(dir, 'vocab.txt'), 'utf8');
const list = Array.isArray(cases) ? cases : cases.cases;

test('the fixture covers the tricky cases', () => {
  expect(list.length).toBeGreaterThanOrEqual(15);
});

test.each(list.map((c) => [c.name, c]))('%s', (_, c) => {
  const tok = new api.WordPieceTokenizer({ vocab, doLowerCase: c.do_lower_case });
  const enc = tok.encode(c.text);
  expect(enc.tokens).toEqual(c.expected.tokens);
  expect(enc.ids).toEqual(c.expected.input_ids);
  expect(enc.tokenTypes).toEqual(c.expected.token_type_ids);
});

test('tokenizer.json gives the same ids as vocab.txt', () => {
  const lines = vocab.split('\n').filter((l, i, all) => l !== '' || i < all.length - 1);
  const json = { normalizer: { type: 'BertNormalizer', lowercase: true, strip_accents: null, handle_chinese_chars: true, clean_text: true },
    model: { type: 'WordPiece', vocab: Object.fromEntries(lines.map((t, i) => [t, i])) } };
  const a = api.WordPieceTokenizer.fromTokenizerJson(json), b = new api.WordPieceTokenizer({ vocab });
  for (const c of list.filter((x) => x.do_lower_case)) expect(a.encode(c.text).ids).toEqual(b.encode(c.text).ids);
  expect(() => api.WordPieceTokenizer.fromTokenizerJson({ model: { type: 'BPE' } })).toThrow(/expected a WordPiece model/);
  // The Hub's compact bert-base-uncased tokenizer.json has no model.type.
  const compact = { ...json, model: { unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: json.model.vocab } };
  expect(api.WordPieceTokenizer.fromTokenizerJson(compact).encode('the cat').ids).toEqual(b.encode('the cat').ids);
  expect(() => api.WordPieceTokenizer.fromTokenizerJson({ model: { vocab: json.model.vocab, merges: [] } })).toThrow(/expected a WordPiece model/);
});

test('line and paragraph separators split words, as Python\'s str.split() does', () => {
  const tok = new api.WordPieceTokenizer({ vocab: '[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\n' });
  expect(tok.encode('a\u2028b\u2029a').tokens).toEqual(['[CLS]', 'a', 'b', 'a', '[SEP]']);
});

test('truncation drops tokens from the longer text first, keeping [CLS]/[SEP]', () => {
  const tok = new api.WordPieceTokenizer({ vocab: '[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nb\n' });
  expect(tok.encode('a a a a a a', { maxLength: 5 }).tokens).toEqual(['[CLS]', 'a', 'a', 'a', '[SEP]']);
  expect(tok.encode(['a a a a', 'b'], { maxLength: 6 }).tokens).toEqual(['[CLS]', 'a', 'a', '[SEP]', 'b', '[SEP]']);
  expect(tok.encode(['a a a a', 'b'], { maxLength: 6 }).tokenTypes).toEqual([0, 0, 0, 0, 1, 1]);
  expect(() => tok.encode('a', { maxLength: 2 })).toThrow(/leaves no room/);
  expect(tok.decode(tok.encode('a b').ids)).toBe('a b');
});
