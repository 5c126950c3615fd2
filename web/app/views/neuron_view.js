// The neuron view (BertViz's name for it): how the score of the followed query with one key is
// made, dimension by dimension. q · k = Σ_d q_d × k_d, so each product is drawn as a bar (orange
// above the line when it adds to the score, blue below when it takes away) and the bars add up to
// the score the QKᵀ step prints. A learner picks the key; it opens on the key the query attends to
// most. The tutorial's d_k = 2 also writes every key's products out in full.
import { el, svg, fmt, num, tokenLabel } from './dom.js';

// Products written out in full for every key up to this d_k (the tutorial's two numbers).
const WRITTEN_DK = 4;
// The largest products listed under the bars.
const LISTED = 5;
// The bars' colours: the hues of the signed matrices (colors.js signedColor), at full strength.
const POSITIVE = '#d95f02', NEGATIVE = '#2171b5';

/** q_d × k_d for d < dK: query row qi of q (rows x dK) and key row j of k. */
export function dimProducts(q, k, qi, j, dK) {
  return Array.from({ length: dK }, (_, d) => {
    const a = q[qi * dK + d], b = k[j * dK + d];
    return { a, b, p: a * b };
  });
}

/**
 * The QKᵀ step's detail for query qi: its row of q, every key (k: m x dK), the row of raw scores
 * (the trace's, which the products must add up to), and which keys the mask hides.
 */
export function neuronDetail({ qt, kt, q, k, raw, weights, masked, qi, dK }) {
  const m = kt.length;
  const row = (t) => Array.from(t.subarray(qi * m, (qi + 1) * m));
  const w = row(weights), hidden = row(masked).map((s) => s === -Infinity);
  // The key the query attends to most (the first key when every key is masked).
  const open = w.map((_, j) => j).filter((j) => !hidden[j]);
  const defaultKey = open.reduce((best, j) => (w[j] > w[best] ? j : best), open[0] ?? 0);
  return {
    kind: 'neuron', qi, query: qt[qi], keys: kt, q, k, dK, raw: row(raw), hidden, defaultKey,
    written: dK <= WRITTEN_DK,
  };
}

/** The detail as nodes. state: { neuronKey: { qi, key } } kept by the step view across redraws. */
export function renderNeuron(d, decimals, state, redraw) {
  const f = (x) => fmt(x, decimals);
  const paren = (x) => (x < 0 ? `(${f(x)})` : f(x));
  const pick = state.neuronKey;
  const j = pick && pick.qi === d.qi && pick.key < d.keys.length ? pick.key : d.defaultKey;
  const parts = dimProducts(d.q, d.k, d.qi, j, d.dK);
  const sum = parts.reduce((s, x) => s + x.p, 0);
  const nodes = [];
  if (d.written)
    for (let key = 0; key < d.keys.length; key++) {
      const line = dimProducts(d.q, d.k, d.qi, key, d.dK).map((x) => `${paren(x.a)} × ${paren(x.b)}`).join(' + ');
      nodes.push(el('p', { class: 'dot-line' }, el('span', { class: 'dot-lhs', text: `q“${tokenLabel(d.query)}” · k“${tokenLabel(d.keys[key])}”` }),
        ` = ${line} = `, el('strong', { text: f(d.raw[key]) })));
    }
  const picker = el('select', {
    class: 'neuron-key', 'aria-label': 'Key to take apart',
    onchange: (e) => { state.neuronKey = { qi: d.qi, key: Number(e.target.value) }; redraw(); },
  }, d.keys.map((t, i) => el('option', { value: i, text: `${i + 1}: ${tokenLabel(t)}${d.hidden[i] ? ' (masked)' : ''}` })));
  picker.value = String(j);
  const top = parts.map((x, dim) => ({ ...x, dim })).sort((a, b) => Math.abs(b.p) - Math.abs(a.p)).slice(0, Math.min(LISTED, d.dK));
  const plus = parts.reduce((s, x) => s + Math.max(0, x.p), 0), minus = parts.reduce((s, x) => s + Math.min(0, x.p), 0);
  nodes.push(el('div', { class: 'neuron', 'data-neuron-key': j, 'data-neuron-sum': num(sum), 'data-neuron-score': num(d.raw[j]) },
    el('p', {}, el('strong', { text: 'Neuron view: ' }),
      `the score of “${tokenLabel(d.query)}” with key `, picker,
      ` is the sum of ${d.dK} products q[d] × k[d], one per dimension d of the head. Orange bars add to the score, blue ones take away.`),
    bars(parts, d.keys[j]),
    el('p', { class: 'dot-line' }, `largest: ${top.map((x) => `d${x.dim + 1}: ${paren(x.a)} × ${paren(x.b)} = ${f(x.p)}`).join(' · ')}`),
    el('p', {}, `Σ = ${f(plus)} from the positive products ${minus < 0 ? '− ' : '+ '}${f(Math.abs(minus))} from the negative ones = `,
      el('strong', { class: 'neuron-sum', text: f(sum) }),
      `: the QKᵀ entry of “${tokenLabel(d.keys[j])}” above (${f(d.raw[j])}), before the scaling.`
      + (d.hidden[j] ? ' This key is masked: the score is computed, then replaced by −∞.' : ''))));
  return nodes;
}

/** The detail as one line of text (the SVG export): every key's products written out (d_k up to
 * 4), else the products of the default key. */
export function neuronText(d, decimals) {
  const f = (x) => fmt(x, decimals);
  const line = (j) => `q“${tokenLabel(d.query)}” · k“${tokenLabel(d.keys[j])}” = ${dimProducts(d.q, d.k, d.qi, j, d.dK).map((x) => `${f(x.a)} × ${f(x.b)}`).join(' + ')} = ${f(d.raw[j])}`;
  return d.written ? d.keys.map((_, j) => line(j)).join('; ') : line(d.defaultKey);
}

/** One bar per dimension, up for a positive product, down for a negative one, to one scale. */
function bars(parts, key) {
  const n = parts.length, barW = n > 96 ? 4 : n > 48 ? 6 : n > 16 ? 9 : 18, half = 40;
  const width = n * barW + 2, maxAbs = Math.max(...parts.map((x) => Math.abs(x.p)), 1e-12);
  const g = svg('svg', { class: 'neuron-bars', width, height: 2 * half + 14, viewBox: `0 0 ${width} ${2 * half + 14}`, role: 'img',
    'aria-label': `The ${n} products q[d] × k[d] for key “${tokenLabel(key)}”` });
  g.append(svg('line', { x1: 0, x2: width, y1: half, y2: half, stroke: '#8c959f' }));
  parts.forEach((x, d) => {
    const h = (Math.abs(x.p) / maxAbs) * (half - 2);
    const rect = svg('rect', { x: 1 + d * barW, y: x.p >= 0 ? half - h : half, width: Math.max(1, barW - 1), height: Math.max(h, 0.5),
      fill: x.p < 0 ? NEGATIVE : POSITIVE });
    rect.append(svg('title', { text: `d${d + 1}: ${x.a.toFixed(4)} × ${x.b.toFixed(4)} = ${x.p.toFixed(4)}` }));
    g.append(rect);
  });
  // Dimension numbers under the first bar and every 8th.
  for (let d = 0; d < n; d += n > 16 ? 8 : 1)
    g.append(svg('text', { x: 1 + d * barW + barW / 2, y: 2 * half + 12, 'text-anchor': 'middle', 'font-size': 9, fill: '#57606a', text: String(d + 1) }));
  return el('div', { class: 'mx-scroll' }, g);
}
