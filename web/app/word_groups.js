// Which tokens of the strip are pieces of one word ("␣fisher" "men", "didn" "'t", BERT's "fish"
// "##erm" "##en"), so the strip can underline each word once; and what byte tokens stand for
// (GPT-2's "<0xC3>" "<0xA9>" are the two UTF-8 bytes of "é", which has no token of its own).

const BYTE = /^<0x([0-9A-Fa-f]{2})>$/;
const SPECIAL = /^(<\|.*\|>|\[[A-Z]+\]|<\/?s>|<unk>|<pad>)$/;
const WORDISH = /[\p{L}\p{N}]/u;

const isByte = (t) => BYTE.test(t);
// A token that can be part of a word: letters or digits, a byte of a character, or a lone space
// before the bytes of an accented letter (GPT-2 writes " é" as " " then the bytes).
const wordish = (t) => isByte(t) || WORDISH.test(t);

/** Text as BERT's lower-casing tokenizer sees it: lower case, accents stripped. */
const folded = (s) => s.normalize('NFD').replace(/\p{Mn}/gu, '').toLowerCase();

/**
 * For each token, whether it continues the word of the token before it. type: the model type
 * ('gpt2' / 'llama': a word starts at a token with a leading space; 'bert': "##" continues a word,
 * and punctuation inside a word of the text, "didn't", "u.s", joins its neighbours). text: the
 * sentence (for BERT's punctuation).
 */
export function continuesWord(tokens, { type, text = '' }) {
  const out = tokens.map(() => false);
  if (type === 'bert') {
    const source = folded(text).replace(/\s+/g, ' ');
    const bare = (t) => t.replace(/^##/, '');
    tokens.forEach((t, i) => {
      if (i === 0 || SPECIAL.test(t)) return;
      if (t.startsWith('##')) out[i] = true;
      // One punctuation token between two pieces the text writes without spaces ("didn't").
      const next = tokens[i + 1];
      if (!WORDISH.test(t) && next && !SPECIAL.test(next) && wordish(tokens[i - 1]) && wordish(next) && !SPECIAL.test(tokens[i - 1])
        && source.includes(bare(tokens[i - 1]) + t + bare(next))) {
        out[i] = true;
        out[i + 1] = true;
      }
    });
    return out;
  }
  if (type !== 'gpt2' && type !== 'llama') return out;
  tokens.forEach((t, i) => {
    const prev = tokens[i - 1];
    if (i === 0 || SPECIAL.test(t) || SPECIAL.test(prev) || /^[ ▁Ġ]/.test(t)) return; // a leading space starts a word
    // No space before it: a piece of the word before when both are word-like ("." after a word stands alone).
    out[i] = wordish(t) && (wordish(prev) || prev.trim() === '');
  });
  return out;
}

/**
 * The runs of byte tokens, each with the characters its bytes spell: [{ from, to, text }]
 * (token indices, `to` exclusive). A run that is not whole UTF-8 spells "�".
 */
export function byteRuns(tokens) {
  const runs = [];
  for (let i = 0; i < tokens.length; i++) {
    if (!isByte(tokens[i])) continue;
    let j = i;
    while (j < tokens.length && isByte(tokens[j])) j++;
    const bytes = Uint8Array.from(tokens.slice(i, j), (t) => parseInt(BYTE.exec(t)[1], 16));
    runs.push({ from: i, to: j, text: new TextDecoder().decode(bytes) });
    i = j - 1;
  }
  return runs;
}

/** The line that explains byte chips where they appear, or '' (each character once). */
export function byteNote(tokens) {
  const runs = byteRuns(tokens);
  if (!runs.length) return '';
  const chars = [...new Set(runs.map((r) => r.text))];
  const first = tokens.slice(runs[0].from, runs[0].to).join('');
  return `${first}${chars.length > 1 ? ', …' : ''}: the UTF-8 bytes of ${chars.map((c) => `“${c}”`).join(', ')};`
    + ` the vocabulary has no token for ${chars.length > 1 ? 'them' : 'it'}`;
}
