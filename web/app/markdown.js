// The Markdown the model cards are written in, as DOM nodes: headings, paragraphs, lists, tables,
// code blocks (fenced or indented), inline code, bold, italics and links. Every piece of text
// becomes a text node (nothing is parsed as HTML), and links keep only http(s) and relative URLs.
import { el } from './views/dom.js';

const TABLE_RULE = /^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;
// A code span as CommonMark reads one: a run of n backticks, then the text up to the next run of
// exactly n (so ``` `` ``` holds two backticks, and `a|b` in a table cell keeps its pipe).
const CODE_SPAN = '(?<!`)(`+)(?!`)([\\s\\S]*?[^`])\\1(?!`)';

/** A code span's text: one space is taken off each end when both ends have one (`` `a` `` -> `a`). */
const codeText = (t) => (/^ [\s\S]*[^ ][\s\S]* $/.test(t) ? t.slice(1, -1) : t);

const INLINE = new RegExp(`${CODE_SPAN}|\\*\\*(.+?)\\*\\*|(?<![\\w*])[*_]([^*_\\s][^*_]*?)[*_](?![\\w*])|\\[([^\\]]+)\\]\\(([^)\\s]+)\\)`, 'g');

/** Inline Markdown -> nodes: `code` (``with ` inside``), **bold**, *italic* / _italic_, [text](url). */
function inline(text, base) {
  const out = [];
  const pattern = new RegExp(INLINE); // (its own lastIndex: bold and italics recurse)
  let last = 0;
  for (let m; (m = pattern.exec(text)); last = pattern.lastIndex) {
    if (m.index > last) out.push(document.createTextNode(text.slice(last, m.index)));
    if (m[2] !== undefined) out.push(el('code', { text: codeText(m[2]) }));
    else if (m[3] !== undefined) out.push(el('strong', {}, ...inline(m[3], base)));
    else if (m[4] !== undefined) out.push(el('em', {}, ...inline(m[4], base)));
    else out.push(link(m[5], m[6], base));
  }
  if (last < text.length) out.push(document.createTextNode(text.slice(last)));
  return out;
}

function link(text, href, base) {
  let url = null;
  try {
    url = new URL(href, base);
  } catch { /* not a URL: the text alone */ }
  if (!url || !['http:', 'https:'].includes(url.protocol)) return document.createTextNode(text);
  return el('a', { href: url.href, text, rel: 'noopener' });
}

/** A table row's cells: split at each pipe outside a code span and not escaped (\| reads as |). */
function cells(line) {
  const row = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  const out = [];
  let start = 0;
  for (const m of row.matchAll(new RegExp(`${CODE_SPAN}|\\\\\\||\\|`, 'g'))) {
    if (m[0] !== '|') continue; // a code span or an escaped pipe stays in its cell
    out.push(row.slice(start, m.index));
    start = m.index + 1;
  }
  out.push(row.slice(start));
  return out.map((c) => c.trim().replace(/\\\|/g, '|'));
}

/** Markdown text -> a DocumentFragment. base: the URL relative links resolve against. */
export function renderMarkdown(text, base) {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const frag = document.createDocumentFragment();
  let i = 0;
  const para = [];
  const flush = () => {
    if (para.length) frag.append(el('p', {}, ...inline(para.join(' '), base)));
    para.length = 0;
  };
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (!line.trim()) { flush(); i++; continue; }
    if ((m = line.match(/^```(\S*)\s*$/))) {
      flush();
      const code = [];
      for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) code.push(lines[i]);
      frag.append(el('pre', {}, el('code', { text: code.join('\n') })));
      i++;
      continue;
    }
    if (/^ {4}/.test(line) && !para.length) {
      const code = [];
      for (; i < lines.length && (/^ {4}/.test(lines[i]) || !lines[i].trim()); i++) code.push(lines[i].slice(4));
      while (code.length && !code[code.length - 1].trim()) code.pop();
      frag.append(el('pre', {}, el('code', { text: code.join('\n') })));
      continue;
    }
    if ((m = line.match(/^(#{1,6})\s+(.*?)\s*#*\s*$/))) {
      flush();
      frag.append(el(`h${m[1].length}`, {}, ...inline(m[2], base)));
      i++;
      continue;
    }
    if (line.trim().startsWith('|') && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1])) {
      flush();
      const head = cells(line);
      const rows = [];
      for (i += 2; i < lines.length && lines[i].trim().startsWith('|'); i++) rows.push(cells(lines[i]));
      frag.append(el('div', { class: 'table-wrap' }, el('table', {},
        el('thead', {}, el('tr', {}, ...head.map((c) => el('th', {}, ...inline(c, base))))),
        el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((c) => el('td', {}, ...inline(c, base)))))))));
      continue;
    }
    if ((m = line.match(/^\s*([-*]|\d+\.)\s+/))) {
      flush();
      const ordered = /\d/.test(m[1]);
      const items = [];
      for (; i < lines.length; i++) {
        const item = lines[i].match(/^\s*([-*]|\d+\.)\s+(.*)$/);
        if (item) items.push([item[2]]);
        else if (lines[i].trim() && /^\s+/.test(lines[i]) && items.length) items[items.length - 1].push(lines[i].trim());
        else break;
      }
      frag.append(el(ordered ? 'ol' : 'ul', {}, ...items.map((parts) => el('li', {}, ...inline(parts.join(' '), base)))));
      continue;
    }
    para.push(line.trim());
    i++;
  }
  flush();
  return frag;
}
