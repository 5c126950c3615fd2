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

const LANGS = ['js', 'ts', 'cjs', 'mjs'];

/** The code blocks of one file: { file, lang, code, line } in its order. */
function codeBlocks(file, markdown) {
  const out = [];
  const re = /^```(\w+)\n([\s\S]*?)^```/gm;
  for (let m; (m = re.exec(markdown));)
    if (LANGS.includes(m[1])) out.push({ file, lang: m[1], code: m[2], line: markdown.slice(0, m.index).split('\n').length });
  return out;
}

/** A file name for a block: README.md line 31 -> readme-31, docs/models.md line 12 -> docs-models-12. */
const slug = (b) => `${b.file.replace(/\.md$/, '').replace(/[^\w]+/g, '-').toLowerCase()}-${b.line}`;

/** A program's first line names its file (`// next-word.mjs`); any other block is a fragment. */
const isProgram = (code) => /^\/\/ [\w.-]+\.(mjs|cjs|js|ts|mts)\b/.test(code);

// What the fragments take as given (they say so in their prose).
const CONTEXT = `import type { AttentionModule, Gpt2Model, MultiHeadAttention, PyTorchMultiheadAttentionState } from 'attention-wasm';
declare const attn: AttentionModule, mha: MultiHeadAttention, model: Gpt2Model, state: PyTorchMultiheadAttentionState;
declare const q: Float32Array, k: Float32Array, v: Float32Array, controller: AbortController, output: HTMLElement, commitHash: string;
`;

/** A fragment as a TypeScript module: its imports at the top, the rest inside an async function. */
function fragmentModule(code) {
  const lines = code.split('\n');
  const imports = lines.filter((l) => /^import\b/.test(l));
  const body = lines.filter((l) => !/^import\b/.test(l));
  return `${imports.join('\n')}\n${CONTEXT}export async function fragment() {\n${body.join('\n')}\n}\n`;
}

module.exports = { root, documentationFiles, documentationText, anchors, codeBlocks, slug, isProgram, fragmentModule, LANGS };
