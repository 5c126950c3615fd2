// The regular expressions of a tokenizer.json (a Split pre-tokenizer's or a Replace's pattern) are
// written for Oniguruma, the engine Hugging Face's `tokenizers` compiles them with. JavaScript's
// RegExp (with the `u` flag, for \p{L}) reads most of them alike; this translates what differs in
// the patterns of the Llama family and refuses, by name, what it cannot translate faithfully.
import { AttentionError } from '../errors.js';

// Oniguruma's \s is Unicode's White_Space; JavaScript's \s adds U+FEFF and lacks U+0085. Its \d
// is any decimal digit, JavaScript's only 0-9.
const ESCAPES: Record<string, string> = { s: '\\p{White_Space}', S: '\\P{White_Space}', d: '\\p{Nd}', D: '\\P{Nd}' };
// Escapes that mean the same in both engines (\p{..} and \x.. / \u.... are read whole below).
const SAME = new Set('wWnrtfv0'.split(''));
// Characters a `u`-mode RegExp lets (and needs to) be escaped outside a class.
const SYNTAX = new Set('^$\\.*+?()[]{}|/'.split(''));

/**
 * Pattern -> a global, Unicode RegExp. Throws "<where>: the pattern ... uses <construct>, which
 * is not supported (supported: ...)" for anchors and escapes Oniguruma reads otherwise (\A, \z,
 * \h, \b, \G, \K), nested classes and case-insensitive groups other than literal alternatives.
 */
export function onigRegex(pattern: string, where: string): RegExp {
  const refuse = (what: string): never => {
    throw new AttentionError(`${where}: the pattern ${JSON.stringify(pattern.length > 80 ? pattern.slice(0, 80) + '…' : pattern)} uses ${what}, which is not supported ` +
      '(supported: literals, classes with \\p{..}, \\s \\S \\d \\D \\w \\W, groups, lookaheads, quantifiers, (?i:..) of literal alternatives)');
  };
  let out = '', inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const e = pattern[++i];
      if (e === undefined) refuse('a trailing backslash');
      if (e === 'p' || e === 'P' || e === 'x' || e === 'u') {
        // \p{L}, \x41, \x{41}, \u0041: copied whole (a brace form JavaScript lacks fails below)
        const m = /^[pPxu](\{[^}]*\}|[0-9A-Fa-f]{2,4}|[A-Za-z])/.exec(pattern.slice(i));
        if (!m) refuse(`\\${e} without its argument`);
        if (e === 'x' && m![1].startsWith('{')) out += `\\u{${m![1].slice(1, -1)}}`;
        else out += '\\' + m![0];
        i += m![0].length - 1;
      } else if (ESCAPES[e] !== undefined) out += inClass || !'sS'.includes(e) ? ESCAPES[e] : `[${ESCAPES[e]}]`;
      else if (SAME.has(e)) out += '\\' + e;
      else if (/[A-Za-z0-9]/.test(e)) refuse(`\\${e}`);
      else out += SYNTAX.has(e) || (inClass && e === '-') ? '\\' + e : e;  // \# \& \~ \' -> the character
    } else if (inClass) {
      if (c === '[') refuse('a nested character class');
      if (c === ']') inClass = false;
      out += c;
    } else if (c === '[') {
      inClass = true;
      out += c;
      if (pattern[i + 1] === '^') out += pattern[++i];
      if (pattern[i + 1] === ']') { out += '\\]'; i++; }  // "[]..." / "[^]...": a literal ] first
    } else if (pattern.startsWith('(?i:', i)) {
      const end = pattern.indexOf(')', i);
      const body = end < 0 ? '' : pattern.slice(i + 4, end);
      if (!/^[^\\[\]()?*+{}.^$]*$/.test(body) || end < 0) refuse('a case-insensitive group (?i:..) that is not a list of literal alternatives');
      out += '(?:' + body.replace(/[A-Za-z]/g, (ch) => `[${ch.toLowerCase()}${ch.toUpperCase()}]`) + ')';
      i = end;
    } else if (c === '(' && pattern[i + 1] === '?' && !/^\(\?(?:[:=!]|<[=!])/.test(pattern.slice(i))) {
      refuse(`the group ${pattern.slice(i, i + 4)}..`);
    } else out += c;
  }
  if (inClass) refuse('an unclosed character class');
  try {
    return new RegExp(out, 'gu');
  } catch (e) {
    return refuse(`syntax JavaScript cannot read (${(e as Error).message})`);
  }
}
