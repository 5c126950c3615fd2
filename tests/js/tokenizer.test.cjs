// The byte-level BPE tokenizer on a hand-made vocabulary: merges by rank, bytes for unknown
// characters, special tokens matched whole (and only exactly), clear errors for broken files.
const { api } = require('./helpers.cjs');

// GPT-2's byte -> printable character table for the bytes used here: printable ASCII maps to
// itself, space (0x20) to U+0120 "Ġ".
function tinyVocab(specials = ['<|endoftext|>']) {
  const vocab = {};
  let id = 0;
  for (let b = 33; b <= 126; b++) vocab[String.fromCharCode(b)] = id++;
  vocab['\u0120'] = id++;  // space
  for (const t of ['th', 'the', '\u0120the', 'ca', 'cat', '\u0120cat']) vocab[t] = id++;
  for (const t of specials) vocab[t] = id++;
  const merges = '#version: 0.2\nt h\nth e\nc a\nca t\n\u0120 the\n\u0120 cat\n';
  return { vocab, merges };
}

test('merges apply by rank and unknown merges fall back to bytes', () => {
  const tok = new api.BpeTokenizer(tinyVocab());
  const ids = tok.encode('the cat sat');
  expect(ids.map((i) => tok.tokenText(i))).toEqual(['the', ' cat', ' ', 's', 'a', 't']);
  expect(tok.decode(ids)).toBe('the cat sat');
});

test('special tokens are matched whole, with regex characters escaped', () => {
  const tok = new api.BpeTokenizer(tinyVocab(['<|endoftext|>', '<|im.start|>', '<|a(b|>']));
  const eot = tok.tokenId('<|endoftext|>'), im = tok.tokenId('<|im.start|>'), ab = tok.tokenId('<|a(b|>');
  expect(tok.encode('<|endoftext|>the')).toEqual([eot, tok.tokenId('the')]);
  expect(tok.encode('<|im.start|>cat<|a(b|>')).toEqual([im, tok.tokenId('cat'), ab]);
  const lookalike = tok.encode('<|imXstart|>');
  expect(lookalike).not.toContain(im);
  expect(lookalike.every((i) => Number.isInteger(i))).toBe(true);
  expect(tok.tokenText(eot)).toBe('<|endoftext|>');
  expect(tok.tokenText(9999)).toBe('<|9999|>');
});

test('broken tokenizer files give AttentionErrors', () => {
  expect(() => new api.BpeTokenizer({ vocab: {}, merges: '' })).toThrow(/vocab is empty/);
  expect(() => new api.BpeTokenizer({ vocab: { a: -1 }, merges: '' })).toThrow(/invalid id -1/);
  expect(() => new api.BpeTokenizer({ vocab: { a: 0 }, merges: 'justone\n' })).toThrow(/merge 1 is malformed/);
  expect(() => api.BpeTokenizer.fromTokenizerJson({ model: { type: 'WordPiece' } })).toThrow(/expected a BPE model/);
  const tok = new api.BpeTokenizer({ vocab: { a: 0 }, merges: '' });
  expect(() => tok.encode('b')).toThrow(/"b" is not in the vocabulary/);
});

test('a token holding part of a character reads as its bytes, never as U+FFFD', () => {
  const fs = require('node:fs');
  const path = require('node:path');
  const dir = path.join(__dirname, '../../web/models/brown-gpt2');
  const tok = new api.BpeTokenizer({ vocab: JSON.parse(fs.readFileSync(path.join(dir, 'vocab.json'), 'utf8')), merges: fs.readFileSync(path.join(dir, 'merges.txt'), 'utf8') });
  const text = 'café 🙂 naïve';
  const ids = tok.encode(text);
  const texts = ids.map((i) => tok.tokenText(i));
  expect(texts.join('')).not.toContain('\ufffd');
  expect(texts.some((t) => /^(<0x[0-9A-F]{2}>)+$/.test(t))).toBe(true); // Brown is ASCII, so no merge joins the emoji's 4 bytes
  // Byte notation and whole characters together spell the text.
  const bytes = texts.flatMap((t) => (/^(<0x[0-9A-F]{2}>)+$/.test(t) ? t.match(/[0-9A-F]{2}/g).map((h) => parseInt(h, 16)) : [...Buffer.from(t, 'utf8')]));
  expect(Buffer.from(bytes).toString('utf8')).toBe(text);
  expect(tok.decode(ids)).toBe(text);
  // A leading U+FEFF (a byte order mark) is text like any other: it decodes back.
  expect(tok.decode(tok.encode('\ufeffhi'))).toBe('\ufeffhi');
});
