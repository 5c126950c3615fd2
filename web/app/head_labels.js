// Head labels from a model's heads.json (tools/train/analyze_heads.py and its BERT twin): each
// head's pattern ("previous-token head", ...), and for a "broad" head its largest average share of
// attention, which says more. The shares a file may measure are named here; any model uses this.
const SHARES = { prev: 'previous', next: 'next', first: 'first', cls: '[CLS]', sep: '[SEP]', self: 'self', punct: 'punctuation' };

// What each GPT-2 label means, in plain words, with how it was measured (the rules are in
// tools/train/analyze_heads.py and the model card). Shown beside the views that print labels.
export const GPT2_LABEL_MEANINGS = {
  'previous-token head': 'a “previous-token” head looks at the token just before (measured: it gives the previous token at least 40% of its attention on held-out text)',
  'induction/copy head': 'an “induction/copy” head finds an earlier place where the current token appeared and looks at the token that came right after it, so the model can repeat what came next last time (measured: on a sentence typed twice, tokens of the second copy give that token at least 25% of their attention)',
  'first-token/sink head': 'a “first-token/sink” head puts most of its attention on the first token, a resting place when nothing else matters',
  'current-token head': 'a “self” head looks at the token itself',
  'punctuation head': 'a “punctuation” head looks at commas, periods and quotes',
  'local head': 'a “local” head looks at the token and the two before it',
  broad: '“broad” spreads its attention over many tokens; its label names where the largest average share goes and how much (“previous”: the token just before, “first”: the first token, “self”: the token itself, “punctuation”: commas, periods and quotes)',
};

/** heads.json -> labels[layer][head] (a string or null), or null without a usable file. */
export function headLabels(heads, nLayer, nHead) {
  if (!Array.isArray(heads?.heads)) return null;
  const labels = Array.from({ length: nLayer }, () => new Array(nHead).fill(null));
  for (const h of heads.heads) {
    if (!(h.layer < nLayer && h.head < nHead && typeof h.label === 'string')) continue;
    const [key, share] = Object.keys(SHARES).map((k) => [k, Number(h[k])]).filter(([, v]) => Number.isFinite(v)).sort((a, b) => b[1] - a[1])[0] ?? [];
    labels[h.layer][h.head] = h.label === 'broad' && key ? `broad · ${SHARES[key]} ${Math.round(share * 100)}%` : h.label;
  }
  return labels;
}

/** A sentence explaining the labels a heads.json actually uses (GPT-2 labels), or a general one. */
export function gpt2LabelNote(heads) {
  const used = new Set(Array.isArray(heads?.heads) ? heads.heads.map((h) => h.label) : []);
  const parts = Object.entries(GPT2_LABEL_MEANINGS).filter(([label]) => used.has(label)).map(([, text]) => text);
  if (!parts.length) parts.push(GPT2_LABEL_MEANINGS['first-token/sink head'], GPT2_LABEL_MEANINGS['previous-token head'], GPT2_LABEL_MEANINGS.broad);
  return ` Head labels come from measurements on held-out text (see the model card): ${parts.join('; ')}.`;
}

// The heads a learner sees most clearly at a glance, best first: their lines form a pattern.
const OPENING_LABELS = ['previous-token head', 'induction/copy head'];

/** Where the demo opens for a model: its first head with the clearest label, else layer 1 head 1. */
export function openingHead(labels) {
  for (const want of OPENING_LABELS)
    for (let layer = 0; layer < (labels?.length ?? 0); layer++) {
      const head = labels[layer].indexOf(want);
      if (head >= 0) return { layer, head };
    }
  return { layer: 0, head: 0 };
}
