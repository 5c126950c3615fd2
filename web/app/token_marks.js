// What the marks inside drawn tokens mean, for a legend where tokens are shown (the page's line
// under its token chips, the widget's line under its view): views/dom.js's tokenLabel writes a
// token's leading space as "␣"; BERT's WordPiece writes "##" in the token itself.
export const TOKEN_MARKS = {
  gpt2: { mark: '␣', text: '“␣” is a space: a GPT-2 token carries the space before its word' },
  bert: { mark: '##', text: '“##” joins a piece to the one before it: one word, several tokens' },
};

/** The explanations of the marks that occur in `text` (what a view drew). */
export const marksIn = (text) => Object.values(TOKEN_MARKS).filter((m) => text.includes(m.mark)).map((m) => m.text);
