// Head labels for the views, from a model's heads.json (tools/heads/label_heads.mjs, with the
// library's rules: headRules, bindings/ts/analysis/head_rules.ts): each head's label with the score
// that earned it ("previous-token · 0.53", "sink · 0.98"), a sentence saying what the labels used
// mean, and the head a model opens on.
import { headRules } from '../../dist/analysis.js';

const { LABELS, BROAD, labelText } = headRules;

/** heads.json -> labels[layer][head] (a string or null), or null without a usable file. */
export function headLabels(heads, nLayer, nHead) {
  if (!Array.isArray(heads?.heads)) return null;
  const labels = Array.from({ length: nLayer }, () => new Array(nHead).fill(null));
  for (const h of heads.heads)
    if (h.layer < nLayer && h.head < nHead && typeof h.label === 'string') labels[h.layer][h.head] = labelText(h.label, h.score);
  return labels;
}

/** A sentence explaining the labels a heads.json uses, each with how it is measured. */
export function labelNote(heads) {
  const used = new Set(Array.isArray(heads?.heads) ? heads.heads.map((h) => h.label) : []);
  const parts = [...LABELS, BROAD].filter((r) => used.has(r.name))
    .map((r) => `${/^[aeiou]/.test(r.name) ? 'an' : 'a'} “${r.name}” head ${r.means}${r.measured ? ` (score: ${r.measured}; the label needs at least ${r.min})` : ''}`);
  if (!parts.length) return '';
  const text = parts.join('; ');
  return `${text[0].toUpperCase()}${text.slice(1)}. Each score is measured on held-out text through this library (tools/heads/label_heads.mjs); a head gets the first label whose score clears its threshold, the sink label first.`;
}

// The patterns a learner sees most clearly at a glance, best first: their lines form a shape.
const OPENING_LABELS = ['previous-token', 'next-token', 'induction', 'alignment', 'local', 'current-token'];

/** Where the demo opens for a model: its clearest labelled head (highest score of the first label
 * in OPENING_LABELS that any head has), else layer 1 head 1. */
export function openingHead(labels) {
  for (const want of OPENING_LABELS) {
    let best = null;
    (labels ?? []).forEach((heads, layer) => heads.forEach((text, head) => {
      const [name, score] = String(text).split(' · ');
      if (name === want && (!best || Number(score) > best.score)) best = { layer, head, score: Number(score) };
    }));
    if (best) return { layer: best.layer, head: best.head };
  }
  return { layer: 0, head: 0 };
}
