// The texts and vocabularies the tokenizer tests and the tokenizer perf check make: seeded, so a
// failure names a text that can be made again.
const fs = require('node:fs');
const path = require('node:path');
const { root } = require('./helpers.cjs');
const { documentationText } = require('./documentation.cjs');

/** A seeded generator. */
function random(seed) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}
const pick = (rnd, s) => s[Math.floor(rnd() * s.length)];
const randomText = (rnd, alphabet, n) => Array.from({ length: n }, () => pick(rnd, alphabet)).join('');

/** WordPiece: a made-up vocabulary of letters, continuations and 20,000 random pieces. */
function letterVocab(seed) {
  const rnd = random(seed), letters = 'abcdefghijklmnopqrstuvwxyz';
  const vocab = new Set(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...letters, ...Array.from(letters, (c) => '##' + c), ...'.,!?']);
  while (vocab.size < 20000) vocab.add((rnd() < 0.5 ? '' : '##') + randomText(rnd, letters, 2 + Math.floor(rnd() * 8)));
  return [...vocab];
}

const brownDir = path.join(root, 'web/models/brown-gpt2');
/** brown-gpt2's byte-level BPE files. */
const brownFiles = () => ({
  vocab: JSON.parse(fs.readFileSync(path.join(brownDir, 'vocab.json'), 'utf8')),
  merges: fs.readFileSync(path.join(brownDir, 'merges.txt'), 'utf8'),
});

/** `size` characters of ordinary prose (this repository's docs and code), and of each hostile
 * kind: words with no end, one character repeated, emoji, accented letters, CJK, 100-letter words. */
function adversarialTexts(size) {
  const rnd = random(9);
  const prose = [documentationText(), ...['web/README.md', 'bindings/ts/models/gpt2_model.ts', 'bindings/ts/models/bert_model.ts']
    .map((f) => fs.readFileSync(path.join(root, f), 'utf8'))].join('\n');
  const ordinary = prose.repeat(Math.ceil(size / prose.length)).slice(0, size);
  const letters = randomText(rnd, 'abcdefghijklmnopqrstuvwxyz', size);
  const adversarial = {
    'letters, no spaces': letters, 'one repeated letter': 'e'.repeat(size), 'one repeated symbol': '!'.repeat(size),
    emoji: '\u{1F600}'.repeat(size / 2), 'accented letters': randomText(rnd, '\u00e9\u00e0\u00fc\u00f8\u00e7\u00f1', size), CJK: randomText(rnd, '\u4e2d\u6587\u5b57\u8a9e', size),
    'no-space words of 100 letters': letters.replace(/(.{99})./g, '$1.'),
  };
  return { ordinary, adversarial };
}

module.exports = { adversarialTexts, brownDir, brownFiles, letterVocab, pick, random, randomText };
