// The regular expressions of a tokenizer.json (a Split pre-tokenizer's or a Replace's pattern) are
// written for Oniguruma, the engine Hugging Face's `tokenizers` compiles them with. This reads the
// part of its syntax that tokenizer files use and compiles it for linear_regex.ts, a matcher whose
// time is linear in the text (the file comes from whoever published it: see there why not
// JavaScript's RegExp). What it cannot read faithfully, or not in linear time, is refused by name.
//
// Read as Oniguruma reads them: \s is Unicode's White_Space, \d any decimal digit (\p{Nd}), \w a
// letter, mark, decimal digit or connector (JavaScript's \w is ASCII only), \h a hexadecimal digit,
// "." any character but "\n", ^ and $ the start and end of a line ("\n" ends one), \A \z \Z the
// text's; a class may hold a class ([^(\s|[.,])], as BLOOM's pattern has), which joins it.
import { AttentionError } from '../errors.js';
import { CharSet, LinearRegex, quote } from './linear_regex.js';
import type { Anchor, RegexNode } from './linear_regex.js';

const SUPPORTED = 'literals, ., classes (nested ones join) with ranges and \\p{..}, \\s \\S \\d \\D \\w \\W \\h \\H, ^ $ \\A \\z \\Z, groups, ' +
  'alternatives, greedy and lazy quantifiers, lookarounds of a fixed run of characters, (?i:..) of literals';
/** The longest pattern read (the longest real ones, DeepSeek's letter classes, are under 1,000). */
export const MAX_PATTERN_LENGTH = 65536;
/** The deepest nesting of groups and classes. */
const MAX_DEPTH = 64;
/** The longest lookaround: its characters are read at each place it is tried. */
const MAX_LOOKAROUND = 32;

const propertyCache = new Map<string, RegExp>();
/** \p{name}: a general category or binary property as JavaScript names it, else a script (\p{Han}). */
function property(name: string): RegExp | undefined {
  let re = propertyCache.get(name);
  if (re) return re;
  for (const form of [name, `Script=${name}`]) {
    try {
      re = new RegExp(`^\\p{${form}}$`, 'u');
      break;
    } catch { /* the next form */ }
  }
  if (re) propertyCache.set(name, re);
  return re;
}
const propertyTest = (re: RegExp) => (cp: number) => re.test(String.fromCodePoint(cp));
const WHITE = propertyTest(property('White_Space')!);
const DIGIT = propertyTest(property('Nd')!);
const LETTER = property('L')!, MARK = property('M')!, CONNECTOR = property('Pc')!;
const WORD = (cp: number) => { const c = String.fromCodePoint(cp); return LETTER.test(c) || MARK.test(c) || DIGIT(cp) || CONNECTOR.test(c); };
const HEX = (cp: number) => (cp >= 48 && cp <= 57) || (cp >= 65 && cp <= 70) || (cp >= 97 && cp <= 102);
const not = (test: (cp: number) => boolean) => (cp: number) => !test(cp);
/** The class escapes, each with its negation in upper case. */
const CLASS_ESCAPES: Record<string, (cp: number) => boolean> = {
  s: WHITE, S: not(WHITE), d: DIGIT, D: not(DIGIT), w: WORD, W: not(WORD), h: HEX, H: not(HEX),
};
/** Escapes of one character. */
const CONTROL: Record<string, number> = { n: 10, r: 13, t: 9, f: 12, v: 11, a: 7, e: 27, '0': 0 };
const ANCHOR_ESCAPES: Record<string, Anchor> = { A: 'textStart', z: 'textEnd', Z: 'textEndOrNewline' };

type Test = (cp: number) => boolean;
type Item = { kind: 'char'; cp: number } | { kind: 'test'; test: Test };

class Parser {
  private i = 0;
  private depth = 0;
  private sets = 0;

  constructor(private readonly pattern: string, private readonly where: string) {}

  refuse(what: string): never {
    throw new AttentionError(`${this.where}: the pattern ${quote(this.pattern)} uses ${what}, which is not supported (supported: ${SUPPORTED})`);
  }

  private peek(k = 0): string { return this.pattern[this.i + k] ?? ''; }
  private more(): boolean { return this.i < this.pattern.length; }
  /** The next character (a whole code point) as its code point. */
  private next(): number {
    const cp = this.pattern.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    return cp;
  }

  /** A set node; a set's answers are memoized in a 64 KiB table, so only the first 64 sets get one. */
  private set(test: Test, memo = true): RegexNode {
    return { kind: 'set', set: new CharSet(test, memo && this.sets++ < 64) };
  }

  parse(): RegexNode {
    const node = this.alternation(false);
    if (this.more()) this.refuse(`an unmatched ")" at ${this.i}`);
    return node;
  }

  private alternation(fold: boolean): RegexNode {
    const items = [this.concat(fold)];
    while (this.peek() === '|') { this.i++; items.push(this.concat(fold)); }
    return items.length === 1 ? items[0] : { kind: 'alternation', items };
  }

  private concat(fold: boolean): RegexNode {
    const items: RegexNode[] = [];
    while (this.more() && this.peek() !== '|' && this.peek() !== ')') {
      let atom = this.atom(fold);
      for (let q = this.quantifier(); q; q = this.quantifier()) {
        if (atom.kind === 'assert' || atom.kind === 'look') this.refuse('a quantifier on an anchor or lookaround');
        atom = { kind: 'repeat', node: atom, ...q };
      }
      items.push(atom);
    }
    return items.length === 1 ? items[0] : { kind: 'concat', items };
  }

  /** ?, *, +, {n}, {n,}, {n,m}, {,m}, each optionally lazy (?); possessive forms are refused. */
  private quantifier(): { min: number; max: number; lazy: boolean } | undefined {
    const c = this.peek();
    let min: number, max: number;
    if (c === '?' || c === '*' || c === '+') {
      this.i++;
      [min, max] = c === '?' ? [0, 1] : c === '*' ? [0, Infinity] : [1, Infinity];
    } else if (c === '{') {
      const m = /^\{(\d*)(,?)(\d*)\}/.exec(this.pattern.slice(this.i, this.i + 24));
      if (!m || (m[1] === '' && m[3] === '') || (m[1] === '' && m[2] === '')) return undefined;  // a literal "{", as in Oniguruma
      this.i += m[0].length;
      min = m[1] === '' ? 0 : Number(m[1]);
      max = m[2] === '' ? min : m[3] === '' ? Infinity : Number(m[3]);
      if (min > max) this.refuse(`the repetition ${m[0]} (its minimum above its maximum)`);
      if (min > 100000 || (max !== Infinity && max > 100000)) this.refuse(`the repetition ${m[0]} (more than 100000)`);
    } else return undefined;
    let lazy = false;
    if (this.peek() === '?') { this.i++; lazy = true; } else if (this.peek() === '+' && c !== '{') this.refuse(`a possessive quantifier ${c}+`);
    return { min, max, lazy };
  }

  private atom(fold: boolean): RegexNode {
    const c = this.peek();
    if (c === '(') return this.group(fold);
    if (c === '*' || c === '+' || c === '?') this.refuse(`a quantifier ${c} with nothing before it`);
    if (c === '[') {
      if (fold) this.refuse('a class inside a case-insensitive group (?i:..)');
      return this.set(this.charClass());
    }
    this.i++;
    if (c === '.') return this.set((cp) => cp !== 10);
    if (c === '^') return { kind: 'assert', at: 'lineStart' };
    if (c === '$') return { kind: 'assert', at: 'lineEnd' };
    if (c === '\\') {
      const e = this.peek();
      if (ANCHOR_ESCAPES[e]) { this.i++; return { kind: 'assert', at: ANCHOR_ESCAPES[e] }; }
      const item = this.escape(false);
      if (item.kind === 'test') {
        if (fold) this.refuse('a class escape inside a case-insensitive group (?i:..)');
        return this.set(item.test);
      }
      return this.literal(item.cp, fold);
    }
    this.i--;
    return this.literal(this.next(), fold);
  }

  /** One character; in a case-insensitive group also its other case (as "s" matches "S"). */
  private literal(cp: number, fold: boolean): RegexNode {
    if (!fold) return this.set((x) => x === cp, false);
    const ch = String.fromCodePoint(cp);
    const forms = new Set([cp, ...[ch.toLowerCase(), ch.toUpperCase()].filter((f) => [...f].length === 1).map((f) => f.codePointAt(0)!)]);
    return this.set((x) => forms.has(x), false);
  }

  private group(fold: boolean): RegexNode {
    if (++this.depth > MAX_DEPTH) this.refuse(`groups and classes nested more than ${MAX_DEPTH} deep`);
    this.i++;  // (
    let look: { behind: boolean; negate: boolean } | undefined;
    const rest = this.pattern.slice(this.i, this.i + 4);
    if (rest.startsWith('?:')) this.i += 2;
    else if (rest.startsWith('?i:')) { this.i += 3; fold = true; } else if (/^\?<?[=!]/.test(rest)) {
      const behind = rest[1] === '<';
      look = { behind, negate: rest[behind ? 2 : 1] === '!' };
      this.i += behind ? 3 : 2;
    } else if (rest.startsWith('?')) this.refuse(`the group (${rest}..`);
    const body = this.alternation(fold);
    if (this.peek() !== ')') this.refuse('an unclosed group');
    this.i++;
    this.depth--;
    if (!look) return body;
    const sets = fixedRun(body);
    if (!sets) this.refuse('a lookaround that is not a fixed run of characters (as "(?!\\S)")');
    if (sets!.length > MAX_LOOKAROUND) this.refuse(`a lookaround of more than ${MAX_LOOKAROUND} characters`);
    return { kind: 'look', ...look, sets: sets! };
  }

  /** A class "[...]" (the "[" not yet read) as a test of a code point. */
  private charClass(): Test {
    if (++this.depth > MAX_DEPTH) this.refuse(`groups and classes nested more than ${MAX_DEPTH} deep`);
    this.i++;  // [
    const negate = this.peek() === '^';
    if (negate) this.i++;
    const ranges: number[] = [], tests: Test[] = [];
    let first = true;
    for (;;) {
      if (!this.more()) this.refuse('an unclosed character class');
      const c = this.peek();
      if (c === ']' && !first) { this.i++; break; }
      first = false;
      if (c === '[') {
        if (/^\[:\^?[a-z]+:\]/.test(this.pattern.slice(this.i, this.i + 16))) this.refuse('a POSIX bracket [:name:]');
        tests.push(this.charClass());
        continue;
      }
      if (c === '&' && this.peek(1) === '&') this.refuse('a class intersection &&');
      const item = this.classItem();
      if (item.kind === 'test') { tests.push(item.test); continue; }
      // A range a-b (a "-" first, last, or after a range is itself).
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== '') {
        this.i++;
        const end = this.classItem();
        if (end.kind !== 'char') this.refuse('a range that ends in a class escape');
        if ((end as { cp: number }).cp < item.cp) this.refuse('a range whose end is before its start');
        ranges.push(item.cp, (end as { cp: number }).cp);
      } else ranges.push(item.cp, item.cp);
    }
    this.depth--;
    return (cp) => {
      let yes = false;
      for (let r = 0; r < ranges.length && !yes; r += 2) yes = cp >= ranges[r] && cp <= ranges[r + 1];
      for (let t = 0; t < tests.length && !yes; t++) yes = tests[t](cp);
      return yes !== negate;
    };
  }

  private classItem(): Item {
    if (this.peek() === '\\') { this.i++; return this.escape(true); }
    return { kind: 'char', cp: this.next() };
  }

  /** After a backslash: a class escape, \p{..}, or one character. */
  private escape(inClass: boolean): Item {
    if (!this.more()) this.refuse('a trailing backslash');
    const e = this.peek();
    if (CLASS_ESCAPES[e]) { this.i++; return { kind: 'test', test: CLASS_ESCAPES[e] }; }
    if (e === 'p' || e === 'P') {
      const m = /^[pP]\{(\^?)([A-Za-z_=]+)\}/.exec(this.pattern.slice(this.i, this.i + 64));
      if (!m) this.refuse(`\\${e} without a {name}`);
      const re = property(m![2]);
      if (!re) this.refuse(`the property \\${e}{${m![2]}}, which JavaScript does not know`);
      this.i += m![0].length;
      const test = propertyTest(re!);
      return { kind: 'test', test: (e === 'P') !== (m![1] === '^') ? not(test) : test };
    }
    if (e === 'x' || e === 'u') {
      const m = e === 'x' ? /^x(?:\{([0-9A-Fa-f]{1,6})\}|([0-9A-Fa-f]{1,2}))/.exec(this.pattern.slice(this.i, this.i + 10))
        : /^u([0-9A-Fa-f]{4})/.exec(this.pattern.slice(this.i, this.i + 5));
      if (!m) this.refuse(`\\${e} without its hexadecimal digits`);
      const cp = parseInt(m![1] ?? m![2], 16);
      if (cp > 0x10ffff) this.refuse(`the code point \\${m![0]}, past U+10FFFF`);
      this.i += m![0].length;
      return { kind: 'char', cp };
    }
    if (CONTROL[e] !== undefined && !(e === '0' && /[0-7]/.test(this.peek(1)))) { this.i++; return { kind: 'char', cp: CONTROL[e] }; }
    if (/[A-Za-z0-9]/.test(e)) this.refuse(`\\${e}${inClass ? ' in a class' : ''}`);
    return { kind: 'char', cp: this.next() };  // \. \( \- \' ...: the character itself
  }
}

/** A lookaround's body as its run of one-character sets (an alternation of single characters is
 * one set), or undefined when it matches texts of other lengths. */
function fixedRun(node: RegexNode): CharSet[] | undefined {
  if (node.kind === 'set') return [node.set];
  if (node.kind === 'concat') {
    const runs = node.items.map(fixedRun);
    return runs.every((r) => r !== undefined) ? runs.flatMap((r) => r!) : undefined;
  }
  if (node.kind === 'alternation' && node.items.every((item) => item.kind === 'set')) {
    const sets = node.items.map((item) => (item as { set: CharSet }).set);
    return [new CharSet((cp) => sets.some((s) => s.has(cp)), false)];
  }
  if (node.kind === 'repeat' && node.max === node.min && node.min <= MAX_LOOKAROUND) {
    const run = fixedRun(node.node);
    return run && Array.from({ length: node.min }, () => run).flat();
  }
  return undefined;
}

/**
 * An Oniguruma pattern -> a LinearRegex. Throws "<where>: the pattern ... uses <construct>, which
 * is not supported (supported: ...)" for what it cannot read (backreferences, atomic groups,
 * possessive quantifiers, \b, lookarounds of unbounded length, classes in (?i:..)), a pattern over
 * MAX_PATTERN_LENGTH characters or one that compiles too large.
 */
export function onigRegex(pattern: string, where: string): LinearRegex {
  if (pattern.length > MAX_PATTERN_LENGTH) throw new AttentionError(`${where}: the pattern of ${pattern.length} characters is longer than ${MAX_PATTERN_LENGTH}`);
  return new LinearRegex(new Parser(pattern, where).parse(), pattern, where);
}
