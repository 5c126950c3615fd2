// What the marks inside drawn tokens mean, for a legend where tokens are shown (the page's line
// under its token chips, the widget's line under its view): views/dom.js's tokenLabel writes a
// token's leading space as "␣"; BERT's WordPiece writes "##" in the token itself.
export const TOKEN_MARKS = {
  gpt2: { mark: '␣', text: '“␣” is a space: a GPT-2 token carries the space before its word' },
  llama: { mark: '␣', text: '“␣” is a space: a token carries the space before its word' },
  bert: { mark: '##', text: '“##” joins a piece to the one before it: one word, several tokens' },
};

/** The explanations of the marks that occur in `text` (what a view drew), each mark once: the
 * model's own explanation (type: 'gpt2', 'llama', ...) where it has one. */
export const marksIn = (text, type) => {
  const own = TOKEN_MARKS[type];
  const marks = Object.values(TOKEN_MARKS).filter((m, i, all) => all.findIndex((o) => o.mark === m.mark) === i && m.mark !== own?.mark);
  return (own ? [own, ...marks] : marks).filter((m) => text.includes(m.mark)).map((m) => m.text);
};
