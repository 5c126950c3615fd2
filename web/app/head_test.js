// "Test this head": a learner re-checks a head's label on text in front of them, with the same
// measurements that labelled it (the library's headRules). Induction: random words written twice, each row
// of the second copy scored by its weight on the token after the word's first occurrence;
// previous-token: each row's weight on the token before it. The heatmap outlines those cells.
import { headRules } from '../../dist/analysis.js';

const { PROBE_WORDS, randomWords, seeded, inductionRows, inductionRowScores, previousRowScores } = headRules;

// The labels a learner can test, and the test each gets.
const TESTS = { induction: 'induction', 'previous-token': 'previous' };
const PROBE_LENGTH = 10;

/** A picker label ("previous-token · 0.53") -> the test for its head, or null. */
export function testFor(labelText) {
  return TESTS[String(labelText ?? '').split(' · ')[0]] ?? null;
}

/** Random words written twice (words: the model's one-token probe words, from its heads.json). */
export function repeatedWords(words, seed) {
  const drawn = randomWords(words?.length ? words : PROBE_WORDS, PROBE_LENGTH, seeded(seed));
  return [...drawn, ...drawn].join(' ');
}

/**
 * The test on one run (ids with the start token, attention L x H x n x n): each scored row
 * { query, target, weight, top } and the summary { mean, top }, or null without rows.
 */
export function runHeadTest(kind, run, nHead, layer, head, causal) {
  const n = run.ids.length, lh = layer * nHead + head;
  const rows = kind === 'induction'
    ? inductionRowScores(run.attention, n, lh, inductionRows(run.ids), causal)
    : previousRowScores(run.attention, n, lh, causal);
  if (!rows.length) return null;
  const mean = rows.reduce((a, r) => a + r.weight, 0) / rows.length;
  return { kind, layer, head, rows, mean, top: rows.filter((r) => r.top).length };
}

/** The result in words, with the head's held-out score when its label is the one tested. */
export function testSummary(test, labelText) {
  const what = test.kind === 'induction'
    ? 'random words written twice: each outlined cell is the word that came after this row’s word the first time'
    : 'each outlined cell is the token just before the row’s token';
  const name = Object.keys(TESTS).find((label) => TESTS[label] === test.kind);
  const [labelled, score] = String(labelText ?? '').split(' · ');
  const heldOut = labelled === name ? score : null;
  return `Test of “${name}” on this text (${what}; its weight is written at the row’s end): mean weight on the outlined cells`
    + ` ${test.mean.toFixed(2)} over ${test.rows.length} rows, the row’s largest weight in ${test.top} of ${test.rows.length}`
    + ` (solid outline)${heldOut ? `; on held-out text the score was ${heldOut}` : ''}.`;
}
