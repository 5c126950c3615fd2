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
