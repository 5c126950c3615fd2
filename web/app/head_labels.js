// Head labels from a model's heads.json (tools/train/analyze_heads.py and its BERT twin): each
// head's pattern ("previous-token head", ...), and for a "broad" head its largest average share of
// attention, which says more. The shares a file may measure are named here; any model uses this.
const SHARES = { prev: 'previous', next: 'next', first: 'first', cls: '[CLS]', sep: '[SEP]', self: 'self', punct: 'punctuation' };

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
