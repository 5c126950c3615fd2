// One labelling rule set for the attention heads of every model (GPT-2, BERT, Llama, the
// pronunciation model's cross-attention), exported by the package as `headRules`. The build-time
// tool (tools/heads/label_heads.mjs), its test, the quality tool's seeded draws and the demo's head
// labels and "test this head" all use these functions (from dist/), so a label, its score and what
// a learner can re-measure on the page are the same thing.
//
// A head's scores are averages over the rows (queries) of held-out text; a head gets a label only
// if that label's score clears its threshold. The sink rule comes first: a head that puts most of
// its weight on the first token (or [CLS]/[SEP], <s>/</s>) is a sink even if it also touches the
// induction target, because the pattern a learner sees is the column on the first token.

/** What a model's attention is, for the rules: a decoder's (causal), an encoder's
 * (bidirectional), or an encoder-decoder's cross-attention. */
export type HeadKind = 'causal' | 'bidirectional' | 'cross';

/** One label's rule. */
export interface HeadRule {
  /** The label ("previous-token"). */
  name: string;
  /** The score it reads (a key of the head's scores). */
  score: string;
  /** The score's threshold. */
  min: number;
  /** The kinds of attention it applies to (all when absent). */
  kinds?: readonly HeadKind[];
  /** What a head with the label does, in words. */
  means: string;
  /** How the score is measured, in words. */
  measured: string;
}

/** A head's scores by name (sink, induction, previous, ...). */
export type HeadScores = Record<string, number>;

/** The labels, in the order they are tried; `score` names the measurement, `min` its threshold. */
export const LABELS: readonly HeadRule[] = [
  { name: 'sink', score: 'sink', min: 0.5,
    means: 'puts most of its attention on the first token (GPT-2: <|endoftext|>; BERT: [CLS] and [SEP]; pronunciation: <s> and </s>), a resting place when nothing else matters',
    measured: 'mean weight on those tokens, over the rows of held-out text' },
  { name: 'induction', score: 'induction', min: 0.15, kinds: ['causal', 'bidirectional'],
    means: 'finds where the current token appeared before and looks at the token that came right after it, so the model can copy what came next last time',
    measured: 'random words written twice: mean weight, over the second copy’s rows, on the token after the word’s first occurrence (a uniform row gives about 0.05)' },
  { name: 'previous-token', score: 'previous', min: 0.4, kinds: ['causal', 'bidirectional'],
    means: 'looks at the token just before',
    measured: 'mean weight on the previous token, over the rows of held-out text' },
  { name: 'next-token', score: 'next', min: 0.4, kinds: ['bidirectional'],
    means: 'looks at the token just after (only an encoder such as BERT can)',
    measured: 'mean weight on the next token, over the rows of held-out text' },
  { name: 'alignment', score: 'alignment', min: 0.85, kinds: ['cross'],
    means: 'follows the letters left to right: its most-attended letter moves on as the sounds are written, so each sound reads its own letters',
    measured: 'share of steps whose most-attended letter is at or after the previous step’s and within two letters of it, over held-out words' },
  { name: 'current-token', score: 'self', min: 0.4, kinds: ['causal', 'bidirectional'],
    means: 'looks at the token itself',
    measured: 'mean weight on the token itself' },
  { name: 'local', score: 'local', min: 0.5, kinds: ['causal', 'bidirectional'],
    means: 'looks at the token and its close neighbours (the two before it; in BERT one on each side)',
    measured: 'mean weight on that window, over rows with at least 8 other tokens to choose from' },
];

/** What a head with no label does. */
export const BROAD: { readonly name: 'broad'; readonly means: string } = { name: 'broad', means: 'spreads its attention; no rule above holds on held-out text' };

/** The label of a head from its scores: { label, score } (score null for broad). */
export function labelHead(scores: Partial<HeadScores>, kind: HeadKind): { label: string; score: number | null } {
  for (const rule of LABELS) {
    if (rule.kinds && !rule.kinds.includes(kind)) continue;
    const s = scores[rule.score];
    if (s !== undefined && Number.isFinite(s) && s >= rule.min) return { label: rule.name, score: s };
  }
  return { label: BROAD.name, score: null };
}

/** The rule for a label name (or broad). */
export const ruleFor = (name: string): HeadRule | typeof BROAD | null => LABELS.find((r) => r.name === name) ?? (name === BROAD.name ? BROAD : null);

/** "previous-token · 0.52", "sink · 0.98", "broad". */
export const labelText = (label: string, score: number | null | undefined): string =>
  (typeof score === 'number' && Number.isFinite(score) ? `${label} · ${score.toFixed(2)}` : label);

// ---- self-attention (GPT-2, BERT) ----------------------------------------------------------
// attention: L x H x n x n (row = query); sinks: the positions a sink head rests on; first..last:
// the rows of real text (GPT-2: from position 2, as position 1's previous token is the sink;
// BERT: the tokens between [CLS] and [SEP]).

/** Attention weights, L x H x n x n (row = query), or one layer's H x n x n. */
export type AttentionWeights = Float32Array;

/** Which rows of a sequence are text: the sink positions, the first and last text row. */
export interface TextRows { sinks: number[]; first: number; last: number; causal: boolean }

/** addSentence's sums for one head. */
export interface SelfSums {
  rows: number; sink: number; self: number; previousRows: number; previous: number; previousTop: number;
  nextRows: number; next: number; localRows: number; local: number;
}

const row = (att: AttentionWeights, n: number, lh: number, q: number) => att.subarray((lh * n + q) * n, (lh * n + q + 1) * n);

/** Sums over the rows of one sequence, added to `acc` (one record per head). */
export function addSentence(acc: SelfSums[], attention: AttentionWeights, n: number, heads: number, { sinks, first, last, causal }: TextRows): SelfSums[] {
  for (let lh = 0; lh < heads; lh++) {
    const a = (acc[lh] ??= { rows: 0, sink: 0, self: 0, previousRows: 0, previous: 0, previousTop: 0, nextRows: 0, next: 0, localRows: 0, local: 0 });
    for (let q = first; q <= last; q++) {
      const w = row(attention, n, lh, q);
      let sink = 0;
      for (const s of sinks) sink += w[s];
      a.rows++;
      a.sink += sink;
      a.self += w[q];
      // Previous / next: only rows whose neighbour is a word, not a sink token.
      if (!sinks.includes(q - 1)) {
        a.previousRows++;
        a.previous += w[q - 1];
        if (argmax(w, causal ? q + 1 : n) === q - 1) a.previousTop++;
      }
      if (!causal && !sinks.includes(q + 1)) {
        a.nextRows++;
        a.next += w[q + 1];
      }
      // The window: t-2..t (causal) or t-1..t+1, without sink tokens, in rows with >= 8 other keys.
      const keys = (causal ? q + 1 : n) - sinks.length;
      if (keys >= 9) {
        a.localRows++;
        for (let k = causal ? q - 2 : q - 1; k <= q + (causal ? 0 : 1); k++) if (!sinks.includes(k)) a.local += w[k];
      }
    }
  }
  return acc;
}

/** Means from addSentence's sums. */
export function selfScores(sums: readonly SelfSums[], causal: boolean): HeadScores[] {
  return sums.map((a) => ({
    sink: a.sink / a.rows, self: a.self / a.rows, previous: a.previous / a.previousRows, previousTop: a.previousTop / a.previousRows,
    ...(causal ? {} : { next: a.next / a.nextRows }), local: a.localRows ? a.local / a.localRows : 0,
  }));
}

function argmax(w: ArrayLike<number>, end: number): number {
  let best = 0;
  for (let k = 1; k < end; k++) if (w[k] > w[best]) best = k;
  return best;
}

// ---- induction: random words written twice ---------------------------------------------------

/** Plain, common words; a probe uses those the model's tokenizer keeps as one token. */
export const PROBE_WORDS: readonly string[] = ('house water number course light table river money music paper road city school church ' +
  'doctor garden window letter family summer winter morning evening island market mountain forest village ' +
  'horse bird fish tree flower stone glass chair door wall floor kitchen bread milk coffee sugar salt ' +
  'apple orange yellow green blue black white brown simple quiet happy angry early late small large ' +
  'young old short long strong weak heavy dark bright cold warm dry wet clean open close begin carry ' +
  'drive write read sing dance sleep listen answer travel follow build break catch choose teach learn ' +
  'friend brother sister mother father child woman captain soldier farmer teacher student king queen ' +
  'army party court board field plant power price value voice story picture language nature science ' +
  'history season moment minute hour week month year ship train plane engine wheel machine metal silver ' +
  'gold iron cotton wood fire smoke snow rain wind cloud storm ocean lake bridge tower station hotel').split(' ');

/** A seeded generator (mulberry32) so the tool, the test and the page can name their probe. */
export function seeded(seed: number): () => number {
  let s = seed | 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` distinct words drawn from `words` (no repeats inside one probe). */
export function randomWords<T>(words: readonly T[], count: number, random: () => number): T[] {
  const pool = [...words], out: T[] = [];
  while (out.length < count && pool.length) out.push(pool.splice(Math.floor(random() * pool.length), 1)[0]);
  return out;
}

/** A row a score reads: the query's row and its target key. */
export interface InductionRow { query: number; target: number }

/** One row's numbers: the weight on the target, and whether the target is the row's largest weight. */
export interface RowScore extends InductionRow { weight: number; top: boolean }

/** addInduction's sums for one head. */
export interface InductionSums { rows: number; weight: number; top: number }

/**
 * The induction rows of a token sequence: each query q whose token appeared earlier (last earlier
 * occurrence p, not right before it) has the target p + 1, the token that followed it then.
 * Works for any tokenization: a word split in pieces gives a row per repeated piece.
 */
export function inductionRows(ids: ArrayLike<number>, from = 0): InductionRow[] {
  const seen = new Map<number, number>(), rows: InductionRow[] = [];
  for (let q = 0; q < ids.length; q++) {
    const id = ids[q], before = seen.get(id);
    if (q >= from && before !== undefined && before + 1 < q) rows.push({ query: q, target: before + 1 });
    seen.set(id, q);
  }
  return rows;
}

/** Sums of the induction score (weight on the target; target the row's largest weight). */
export function addInduction(acc: InductionSums[], attention: AttentionWeights, n: number, heads: number, rows: readonly InductionRow[], causal: boolean): InductionSums[] {
  for (let lh = 0; lh < heads; lh++) {
    const a = (acc[lh] ??= { rows: 0, weight: 0, top: 0 });
    for (const { query, target } of rows) {
      const w = row(attention, n, lh, query);
      a.rows++;
      a.weight += w[target];
      if (argmax(w, causal ? query + 1 : n) === target) a.top++;
    }
  }
  return acc;
}

/** Per head: { induction, inductionTop } from addInduction's sums. */
export const inductionScores = (sums: readonly InductionSums[]): HeadScores[] => sums.map((a) => ({ induction: a.weight / a.rows, inductionTop: a.top / a.rows }));

/** One head's induction numbers on one run, per row (what "test this head" prints). */
export function inductionRowScores(attention: AttentionWeights, n: number, lh: number, rows: readonly InductionRow[], causal: boolean): RowScore[] {
  return rows.map(({ query, target }) => {
    const w = row(attention, n, lh, query);
    return { query, target, weight: w[target], top: argmax(w, causal ? query + 1 : n) === target };
  });
}

/** The rows of real text in one run: GPT-2 from position 2 (position 1's previous token is the
 * sink), BERT the tokens between [CLS] and [SEP]; previous-token rows skip a sink neighbour. */
export function textRows(n: number, causal: boolean): TextRows {
  return causal ? { sinks: [0], first: 2, last: n - 1, causal } : { sinks: [0, n - 1], first: 1, last: n - 2, causal };
}

/** One head's previous-token numbers on one run: per row whose previous token is a word. */
export function previousRowScores(attention: AttentionWeights, n: number, lh: number, causal: boolean): RowScore[] {
  const { first, last } = textRows(n, causal), out: RowScore[] = [];
  for (let q = Math.max(first, 2); q <= last; q++) {
    const w = row(attention, n, lh, q);
    out.push({ query: q, target: q - 1, weight: w[q - 1], top: argmax(w, causal ? q + 1 : n) === q - 1 });
  }
  return out;
}

// ---- cross-attention (the pronunciation model: rows = sounds written, keys = <s> letters </s>) --

/** addCrossWord's sums for one head. */
export interface CrossSums { rows: number; sink: number; steps: number; aligned: number }

/** Sums over one word's rows: sink (<s>, </s>) weight, and how regularly the argmax moves on. */
export function addCrossWord(acc: CrossSums[], attention: AttentionWeights, T: number, S: number, heads: number): CrossSums[] {
  for (let lh = 0; lh < heads; lh++) {
    const a = (acc[lh] ??= { rows: 0, sink: 0, steps: 0, aligned: 0 });
    let before = -1;
    for (let t = 0; t < T; t++) {
      const w = attention.subarray((lh * T + t) * S, (lh * T + t + 1) * S);
      a.rows++;
      a.sink += w[0] + w[S - 1];
      // The last row writes </s>; it is allowed to look at the end marker.
      const top = argmax(w, S);
      if (t > 0 && t < T - 1) {
        a.steps++;
        if (top >= before && top <= before + 2 && top > 0 && top < S - 1) a.aligned++;
      }
      before = top;
    }
  }
  return acc;
}

/** Per head: { sink, alignment } from addCrossWord's sums. */
export const crossScores = (sums: readonly CrossSums[]): HeadScores[] => sums.map((a) => ({ sink: a.sink / a.rows, alignment: a.steps ? a.aligned / a.steps : 0 }));
