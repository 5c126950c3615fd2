// A regular-expression matcher whose time is linear in the text: the patterns of a tokenizer.json
// come from whoever published the file, and a backtracking engine (JavaScript's RegExp, Oniguruma)
// takes exponential time on some of them ("(a+)+$" on "aaa…a!": 12 s for 30 characters).
//
// Why an engine and not a table of the known patterns: the patterns in use (GPT-2's, Llama 3's,
// Qwen2's, cl100k/o200k's, Tekken's, BLOOM's, DeepSeek's and their many copies with small edits)
// differ from file to file, and a table would refuse every edit; a Thompson-NFA simulation (Pike's
// VM, as RE2 and Rust's regex crate run) reads any pattern of the syntax subset they use in
// O(text x pattern) time, with the leftmost-first (Perl / Oniguruma) choice between alternatives,
// so the spans it finds are those a backtracking engine finds. What a Pike VM cannot do in linear
// time, backreferences and lookarounds of unbounded length, the parser (onig_regex.ts) refuses by
// name; a lookaround of a few fixed characters ("(?!\S)", the one real patterns use) is a check of
// the next characters, made in constant time.
//
// One search is linear in the text; finding all matches restarts after each one, and a pattern
// whose higher-priority alternatives run far past where a lower one matches ("a*b|a" on "aaaa…")
// rescans: so every text also has a budget of steps proportional to its length and the program's
// size, far above what the real patterns use (tests/js/hardening_tokenizer.test.cjs measures it),
// and a pattern that needs more is stopped with a named error.
import { AttentionError } from '../errors.js';

/** A set of code points (a literal, a class, an escape like \p{L}); with `memo`, its answers
 * for the first 65,536 code points are kept in a table (a literal's test is cheaper than one). */
export class CharSet {
  private bmp: Uint8Array | undefined;  // 0 unknown, 1 no, 2 yes
  constructor(private readonly test: (cp: number) => boolean, private readonly memo = true) {}
  has(cp: number): boolean {
    if (!this.memo || cp >= 0x10000) return this.test(cp);
    const table = this.bmp ??= new Uint8Array(0x10000);
    const known = table[cp];
    if (known !== 0) return known === 2;
    const yes = this.test(cp);
    table[cp] = yes ? 2 : 1;
    return yes;
  }
}

/** The parsed pattern. */
export type RegexNode =
  | { kind: 'set'; set: CharSet }
  | { kind: 'concat'; items: RegexNode[] }
  | { kind: 'alternation'; items: RegexNode[] }
  | { kind: 'repeat'; node: RegexNode; min: number; max: number; lazy: boolean }
  | { kind: 'assert'; at: Anchor }
  /** A lookahead / lookbehind of a fixed run of single characters: "(?!\S)" is { sets: [\S], negate }. */
  | { kind: 'look'; behind: boolean; negate: boolean; sets: CharSet[] };

/** ^ $ (Oniguruma's: the start / end of a line, a line ending at "\n"), \A, \z, \Z. */
export type Anchor = 'lineStart' | 'lineEnd' | 'textStart' | 'textEnd' | 'textEndOrNewline';

// Instructions.
const CHAR = 0, SPLIT = 1, JUMP = 2, ASSERT = 3, LOOK = 4, MATCH = 5;
const ANCHORS: Anchor[] = ['lineStart', 'lineEnd', 'textStart', 'textEnd', 'textEndOrNewline'];

/** The most instructions a program may have (a{1000}{1000} would have a million). */
export const MAX_PROGRAM = 20000;
/** Steps allowed per character of a text and instruction of the program (the real patterns use
 * under 2; see the test). A step is a thread moved over a character or through an instruction. */
export const STEPS_PER_CHARACTER_AND_INSTRUCTION = 16;

/** The size a node compiles to, so that an oversized program is refused before it is built. */
function programSize(node: RegexNode): number {
  switch (node.kind) {
    case 'set': case 'assert': case 'look': return 1;
    case 'concat': return node.items.reduce((n, item) => n + programSize(item), 0);
    case 'alternation': return node.items.reduce((n, item) => n + programSize(item) + 2, 0);
    default: {
      const body = programSize(node.node) + 2;
      return body * (node.max === Infinity ? node.min + 1 : node.max);
    }
  }
}

/** A compiled pattern: find() gives the leftmost-first match starting at or after an index. */
export class LinearRegex {
  private readonly op: number[] = [];
  private readonly x: number[] = [];
  private readonly y: number[] = [];
  private readonly sets: CharSet[] = [];
  private readonly looks: Array<{ behind: boolean; negate: boolean; sets: CharSet[] }> = [];
  // Thread lists (program counters and the index each thread's match began at) and the marks of
  // the instructions already on the list being built.
  private readonly mark: Int32Array;
  private readonly lists: Int32Array[];
  private readonly stack: number[] = [];
  private readonly starts: number[] | undefined;
  private stamp = 0;
  /** Where the match find() returned begins. */
  matchStart = -1;
  private steps = 0;
  private budget = 0;

  constructor(root: RegexNode, readonly source: string, private readonly where: string) {
    const size = programSize(root);
    if (size > MAX_PROGRAM) throw new AttentionError(`${where}: the pattern ${quote(source)} compiles to ${size} instructions, more than ${MAX_PROGRAM} (a repetition count too large)`);
    this.emit(root);
    this.push(MATCH, 0, 0);
    this.mark = new Int32Array(this.op.length);
    this.lists = [0, 1, 2, 3].map(() => new Int32Array(this.op.length));
    this.starts = this.startClosure();
  }

  /** The threads a match starts with (in priority order), when they do not depend on where it
   * starts (no anchor or lookaround before the first character): added at every index, so kept. */
  private startClosure(): number[] | undefined {
    const out: number[] = [], seen = new Set<number>(), stack = [0];
    while (stack.length) {
      const at = stack.pop()!;
      if (seen.has(at)) continue;
      seen.add(at);
      const op = this.op[at];
      if (op === ASSERT || op === LOOK) return undefined;
      if (op === JUMP) stack.push(this.x[at]);
      else if (op === SPLIT) stack.push(this.y[at], this.x[at]);
      else out.push(at);
    }
    return out;
  }

  get size(): number { return this.op.length; }

  private push(op: number, x: number, y: number): number {
    this.op.push(op); this.x.push(x); this.y.push(y);
    return this.op.length - 1;
  }

  private emit(node: RegexNode): void {
    switch (node.kind) {
      case 'set': this.sets.push(node.set); this.push(CHAR, this.sets.length - 1, 0); return;
      case 'assert': this.push(ASSERT, ANCHORS.indexOf(node.at), 0); return;
      case 'look': this.looks.push(node); this.push(LOOK, this.looks.length - 1, 0); return;
      case 'concat': for (const item of node.items) this.emit(item); return;
      case 'alternation': {
        // SPLIT a, next; a; JUMP end; next: SPLIT b, ...: the first alternative has priority.
        const jumps: number[] = [];
        node.items.forEach((item, i) => {
          const last = i === node.items.length - 1;
          const split = last ? -1 : this.push(SPLIT, 0, 0);
          if (split >= 0) this.x[split] = this.op.length;
          this.emit(item);
          if (!last) { jumps.push(this.push(JUMP, 0, 0)); this.y[split] = this.op.length; }
        });
        for (const j of jumps) this.x[j] = this.op.length;
        return;
      }
      default: this.emitRepeat(node.node, node.min, node.max, node.lazy);
    }
  }

  /** x{min,max}: min copies, then (max - min) optional ones or a loop. Greedy: the SPLIT's first
   * branch enters the body; lazy: it skips. */
  private emitRepeat(body: RegexNode, min: number, max: number, lazy: boolean): void {
    for (let i = 0; i < min; i++) this.emit(body);
    const split = (): number => this.push(SPLIT, 0, 0);
    const branch = (at: number, enter: number, skip: number) => {
      this.x[at] = lazy ? skip : enter;
      this.y[at] = lazy ? enter : skip;
    };
    if (max === Infinity) {
      const loop = split();
      this.emit(body);
      this.push(JUMP, loop, 0);
      branch(loop, loop + 1, this.op.length);
      return;
    }
    const splits: number[] = [];
    for (let i = min; i < max; i++) {
      splits.push(split());
      this.emit(body);
    }
    for (const at of splits) branch(at, at + 1, this.op.length);
  }

  /** Checks an anchor at index i of text. */
  private anchor(kind: number, text: string, i: number): boolean {
    switch (ANCHORS[kind]) {
      case 'lineStart': return i === 0 || text.charCodeAt(i - 1) === 10;
      case 'lineEnd': return i === text.length || text.charCodeAt(i) === 10;
      case 'textStart': return i === 0;
      case 'textEnd': return i === text.length;
      default: return i === text.length || (i === text.length - 1 && text.charCodeAt(i) === 10);
    }
  }

  /** Checks a fixed-length lookaround at index i: its characters, read forwards or backwards. */
  private look(index: number, text: string, i: number): boolean {
    const { behind, negate, sets } = this.looks[index];
    let ok = true;
    if (behind) {
      for (let k = sets.length - 1; k >= 0 && ok; k--) {
        if (i <= 0) { ok = false; break; }
        const low = text.charCodeAt(i - 1), high = i >= 2 ? text.charCodeAt(i - 2) : 0;
        const pair = (low & 0xfc00) === 0xdc00 && (high & 0xfc00) === 0xd800;
        const cp = pair ? text.codePointAt(i - 2)! : low;
        ok = sets[k].has(cp);
        i -= pair ? 2 : 1;
      }
    } else {
      for (const set of sets) {
        if (i >= text.length) { ok = false; break; }
        const cp = text.codePointAt(i)!;
        if (!set.has(cp)) { ok = false; break; }
        i += cp > 0xffff ? 2 : 1;
      }
    }
    return ok !== negate;
  }

  /** Adds the thread at pc (and the threads its jumps, splits and assertions lead to, in priority
   * order) to a list, unless already there. */
  private add(list: Int32Array, starts: Int32Array, count: number, pc: number, text: string, i: number, start: number, stack: number[]): number {
    stack.push(pc);
    while (stack.length) {
      const at = stack.pop()!;
      if (this.mark[at] === this.stamp) continue;
      this.mark[at] = this.stamp;
      this.steps++;
      switch (this.op[at]) {
        case JUMP: stack.push(this.x[at]); break;
        case SPLIT: stack.push(this.y[at], this.x[at]); break;
        case ASSERT: if (this.anchor(this.x[at], text, i)) stack.push(at + 1); break;
        case LOOK: if (this.look(this.x[at], text, i)) stack.push(at + 1); break;
        default: list[count] = at; starts[count] = start; count++;
      }
    }
    return count;
  }

  /** Starts the step budget for a text: all find() calls on it share it. */
  begin(text: string): void {
    this.steps = 0;
    this.budget = STEPS_PER_CHARACTER_AND_INSTRUCTION * (text.length + 1) * (this.op.length + 1);
  }

  /** The steps spent since begin() (for the tests' measure of the real patterns). */
  get stepsUsed(): number { return this.steps; }

  /** The leftmost-first match at or after `from`: its end (a UTF-16 index; its start is then in
   * matchStart), or -1. */
  find(text: string, from: number): number {
    const stack = this.stack;
    let clist = this.lists[0], cstart = this.lists[1], nlist = this.lists[2], nstart = this.lists[3];
    let matchStart = -1, matchEnd = -1, i = from;
    this.stamp++;
    let ccount = this.add(clist, cstart, 0, 0, text, i, i, stack);
    // (No thread left: done once a match is found; before, a match may still begin further on.)
    while (ccount > 0 || (matchStart < 0 && i < text.length)) {
      if (this.steps > this.budget) {
        throw new AttentionError(`${this.where}: the pattern ${quote(this.source)} needs more than ${this.budget} steps on a text of ${text.length} characters ` +
          `(${STEPS_PER_CHARACTER_AND_INSTRUCTION} per character and instruction: its matches overlap so that finding them all takes time quadratic in the text)`);
      }
      const cp = i < text.length ? text.codePointAt(i)! : -1, width = cp > 0xffff ? 2 : 1;
      this.stamp++;
      let ncount = 0;
      for (let t = 0; t < ccount; t++) {
        const pc = clist[t];
        this.steps++;
        if (this.op[pc] === MATCH) {
          // Threads after this one have lower priority: they are dropped.
          matchStart = cstart[t]; matchEnd = i;
          break;
        }
        if (cp >= 0 && this.sets[this.x[pc]].has(cp)) {
          const to = pc + 1, op = this.op[to];
          // (a character or the end needs no closure: put it on the list directly)
          if (op === CHAR || op === MATCH) {
            if (this.mark[to] !== this.stamp) { this.mark[to] = this.stamp; nlist[ncount] = to; nstart[ncount++] = cstart[t]; this.steps++; }
          } else ncount = this.add(nlist, nstart, ncount, to, text, i + width, cstart[t], stack);
        }
      }
      if (cp < 0) break;
      i += width;
      // A match may begin at the next index only while none has been found (leftmost first).
      if (matchStart < 0) {
        if (this.starts === undefined) ncount = this.add(nlist, nstart, ncount, 0, text, i, i, stack);
        else {
          for (const pc of this.starts) {
            if (this.mark[pc] !== this.stamp) { this.mark[pc] = this.stamp; nlist[ncount] = pc; nstart[ncount++] = i; }
          }
          this.steps += this.starts.length;
        }
      }
      const list = clist, starts = cstart;
      clist = nlist; cstart = nstart; nlist = list; nstart = starts;
      ccount = ncount;
    }
    this.matchStart = matchStart;
    return matchStart < 0 ? -1 : matchEnd;
  }

  /** Calls visit(start, end) for every match, left to right, as String.prototype.matchAll finds
   * them (after an empty match the search resumes one character on). */
  each(text: string, visit: (start: number, end: number) => void): void {
    this.begin(text);
    let from = 0;
    while (from <= text.length) {
      const m = this.find(text, from);
      if (m < 0) return;
      visit(this.matchStart, m);
      if (m > this.matchStart) from = m;
      else from = m + ((text.codePointAt(m) ?? 0) > 0xffff ? 2 : 1);
    }
  }

  /** text with each match replaced by `content`, or undefined as soon as it passes `max` characters. */
  replace(text: string, content: string, max = Infinity): string | undefined {
    let out = '', last = 0;
    let over = false;
    this.each(text, (start, end) => {
      if (over) return;
      out += text.slice(last, start) + content;
      last = end;
      over = out.length > max;
    });
    if (over) return undefined;
    out += text.slice(last);
    return out.length > max ? undefined : out;
  }
}

/** A pattern as quoted in an error (cut when long). */
export function quote(pattern: string): string {
  return JSON.stringify(pattern.length > 80 ? pattern.slice(0, 80) + '…' : pattern);
}
