// Hard texts for the tokenizers of the Llama family (llama_tokenizer.test.cjs,
// sentencepiece_tokenizer.test.cjs): accents, combining marks, CJK, emoji sequences, contractions in
// capitals, digits, code, special tokens inside text, characters only bytes can stand for, long
// runs, whitespace runs, and one text longer than a piece is merged at once.
const HARD = [
  'Hello world', '', ' ', '   leading and   multiple    spaces\t\ttabs\n\n\nnewlines \r\n crlf   ',
  'Café naïve façade — Ångström, Zürich, résumé, e\u0301 vs é', '東京は日本の首都です。中文测试：你好，世界！한국어 텍스트',
  '🦙🙂👩‍👩‍👧‍👦 🇫🇷 flags ✨ 🦙Ꙋ', "I'M HERE, YOU'LL SEE, it's, DON'T, We'Ve 'S", '12345678901 3.14159 1,000,000',
  'def f(x):\n    return x**2  # comment\n', '<s>Hello</s> world<unk> and <s> again',
  '<|begin_of_text|>Hi<|eot_id|>there <|start_header_id|>user<|end_header_id|>\n\nhey <|begin_of_text |>',
  '<|im_start|>system\nYou are nice.<|im_end|>\n<|im_start|>user\n  hi<|im_end|><|end_of_text|>',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 Ꙋ \u0000 control \u0007 \u0085 nel \ufeff bom ￰', 'a'.repeat(3000), '0123456789'.repeat(40), '!?'.repeat(500),
  '\n\n\n\n   \n\t \u3000 full width  \u00a0 nbsp', ' '.repeat(200) + 'x' + '\t'.repeat(50),
  // Llama 2's merges rank "▁▁ ▁▁" before "▁ ▁": merged one at a time, 21 "▁" are 16 + 4 + "▁GNU"
  ' '.repeat(20) + 'GNU GENERAL PUBLIC LICENSE', longProse(70_000),
];
/** Words in a fixed pseudo-random order: one piece of over 65,536 characters for Llama 2 (no
 * pre-tokenizer), which is merged in parts cut where no token can cross. */
function longProse(length) {
  const words = 'the quick brown fox jumps over a lazy dog while café owners sing 東京 songs 🦙 and   spaces\n'.split(' ');
  let text = '', seed = 1;
  while (text.length < length) { seed = (seed * 1103515245 + 12345) % 2147483648; text += words[seed % words.length] + ' '; }
  return text;
}

module.exports = { HARD, longProse };
