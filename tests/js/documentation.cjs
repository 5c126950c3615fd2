// The documentation a user reads: README.md, then every docs/*.md page (sorted by name). Its code
// blocks run in readme.test.cjs, and the tests that check an example or a figure "of the README"
// read all of it, wherever a section now lives. Needs no build.
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');

/** [{ file: 'README.md' | 'docs/<page>.md', text }], README first. */
function documentationFiles() {
  const pages = fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
  return ['README.md', ...pages].map((file) => ({ file, text: fs.readFileSync(path.join(root, file), 'utf8') }));
}

/** README.md and the docs pages as one text. */
const documentationText = () => documentationFiles().map((d) => d.text).join('\n');

/** GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen. */
const anchorOf = (heading) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/ /g, '-');

/** The anchors of a markdown text's headings (outside code blocks). */
function anchors(markdown) {
  const out = new Set();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = !fenced && /^#{1,6} (.+)$/.exec(line);
    if (m) out.add(anchorOf(m[1]));
  }
  return out;
}

module.exports = { root, documentationFiles, documentationText, anchors };
