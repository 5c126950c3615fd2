// The rotation step's written-out part: one query/key pair (the chosen query token and a key the
// reader picks), its score before and after the rotation, the same pair moved to other positions
// (together: the score stays; apart: it changes), and a chart of the score against the distance
// between the two. Built with dom.js only (text, never markup), drawn again on every render.
import { el, svg, fmt, tokenLabel, numList } from './dom.js';
import { inverseFrequencies, dot, scoreAt } from '../rotary.js';

// The key the reader picked, per query head and query token (kept while other things redraw).
const picked = new Map();

/** The key a pair opens on: the one the query attends to most, leaving out position 0 (never
 * rotated, and where sinks rest), else position 0. */
function openingKey(weights, qi, n) {
  let best = qi > 0 ? 1 : 0;
  for (let j = 1; j <= qi; j++) if (weights[qi * n + j] > weights[qi * n + best]) best = j;
  return best;
}

/** Shifts that keep both positions inside the model's context. */
function together(qi, kj, context) {
  const room = context - 1 - qi;
  return [...new Set([0, 1, 10, 50, room].filter((s) => s >= -kj && s <= room))].sort((a, b) => a - b);
}

/**
 * A detail entry for steps_view.js: { kind: 'node', text (for the SVG export), render(decimals) }.
 * input: { tokens, qi, head, kv, d, qBefore (n x d, this query head), kBefore (n x d, its K/V head),
 * weights (n x n, this head), rotary: { theta, headDim, rotaryDim, scaling, scoreScale, ropeScale }, context }
 */
export function rotaryDetail(input) {
  const { tokens, qi, head, qBefore, kBefore, weights, d } = input;
  const n = tokens.length;
  const freqs = inverseFrequencies(input.rotary);
  const id = `${head}:${qi}:${n}`;
  const keyOf = () => Math.min(qi, picked.get(id) ?? openingKey(weights, qi, n));
  const pair = (kj) => {
    const q = qBefore.subarray(qi * d, (qi + 1) * d), k = kBefore.subarray(kj * d, (kj + 1) * d);
    const r = input.rotary, before = dot(q, k) * (r.scoreScale ?? 1 / Math.sqrt(d));
    const moved = together(qi, kj, input.context).map((s) => ({ qPos: qi + s, kPos: kj + s, score: scoreAt(q, k, qi + s, kj + s, freqs, r) }));
    const curve = Array.from({ length: input.context }, (_, dist) => scoreAt(q, k, dist, 0, freqs, r));
    return { kj, before, after: scoreAt(q, k, qi, kj, freqs, r), moved, curve };
  };
  return {
    kind: 'node',
    // (for the SVG export: the pair on screen, whichever key the reader picked since)
    get text() {
      const p = pair(keyOf());
      return `Query “${tokenLabel(tokens[qi])}” (token ${qi + 1}) and key “${tokenLabel(tokens[p.kj])}” (token ${p.kj + 1}): score before rotation ${p.before.toFixed(4)}, after ${p.after.toFixed(4)}; `
        + `moved together (tokens): ${p.moved.map((m) => `(${m.qPos + 1}, ${m.kPos + 1}) ${m.score.toFixed(4)}`).join(', ')}.`;
    },
    render(decimals) {
      const box = el('div', { class: 'rotary-detail' });
      const draw = () => {
        const p = pair(keyOf());
        box.replaceChildren(...pairNodes(p, input, decimals, (kj) => { picked.set(id, kj); draw(); }));
        Object.assign(box.dataset, { query: String(qi), key: String(p.kj), before: String(p.before), after: String(p.after),
          moved: JSON.stringify(p.moved.map((m) => [m.qPos, m.kPos, m.score])), curve: numList(p.curve) });
      };
      draw();
      return box;
    },
  };
}

function pairNodes(p, { tokens, qi, d }, decimals, choose) {
  const f = (x) => fmt(x, decimals);
  const q = `“${tokenLabel(tokens[qi])}”`, k = `“${tokenLabel(tokens[p.kj])}”`;
  const select = el('select', { 'aria-label': 'Key of the pair', onchange: (e) => choose(Number(e.target.value)) },
    tokens.slice(0, qi + 1).map((tok, j) => el('option', { value: j, text: `${j + 1}: ${tokenLabel(tok)}`, selected: j === p.kj })));
  const apart = [1, 2, 4, 8].map((s) => (p.kj - s >= 0 ? { qPos: qi, kPos: p.kj - s, dist: qi - p.kj + s } : null)).filter(Boolean);
  const cell = (text, attrs = {}) => el('td', { style: 'padding: 1px 10px; text-align: right', ...attrs, text });
  const row = (what, m, score) => el('tr', { class: `rotary-${what}` }, cell(what, { style: 'padding: 1px 10px; color: #57606a' }),
    cell(String(m.qPos + 1)), cell(String(m.kPos + 1)), cell(String(m.qPos - m.kPos)), cell(f(score), what === 'here' ? { style: 'padding: 1px 10px; text-align: right; font-weight: 600' } : {}));
  return [
    el('p', {}, `The query ${q} (token ${qi + 1}) with the key `, select, '.'),
    el('p', {}, `Score before the rotation, q · k / √${d}: ${f(p.before)}. After it, at tokens ${qi + 1} and ${p.kj + 1}: `,
      el('strong', { text: f(p.after) }), ` (step 5's score for ${k}).`),
    el('table', { class: 'rotary-moved', style: 'border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 4px 0' },
      el('caption', { style: 'text-align: left', text: 'The same two vectors at other positions' }),
      el('thead', {}, el('tr', {}, ['', 'query at token', 'key at token', 'distance', 'score'].map((t) => el('th', { style: 'padding: 1px 10px; text-align: right', text: t })))),
      el('tbody', {},
        p.moved.map((m) => row(m.qPos === qi ? 'here' : 'together', m, m.score)),
        apart.map((m) => row('apart', m, p.curve[m.dist])))),
    el('p', { class: 'help', text: `Moved together the score stays ${f(p.after)}; moved apart it changes. The chart: the score of these two vectors against the distance between them (dashed: without the rotation, ${f(p.before)} at every distance).` }),
    chart(p, qi - p.kj),
  ];
}

/** Score against distance (0 .. context − 1): a line, this pair's distance marked, and the score
 * without rotation (the same at every distance) dashed. */
function chart(p, here) {
  const W = 420, H = 150, left = 42, right = 10, top = 10, bottom = 30;
  const values = [...p.curve, p.before];
  let lo = Math.min(...values), hi = Math.max(...values);
  if (hi - lo < 1e-9) { lo -= 1; hi += 1; }
  const x = (dist) => left + (dist / Math.max(1, p.curve.length - 1)) * (W - left - right);
  const y = (s) => top + (hi - s) / (hi - lo) * (H - top - bottom);
  const line = p.curve.map((s, dist) => `${x(dist).toFixed(1)},${y(s).toFixed(1)}`).join(' ');
  const axis = { stroke: '#8c959f', 'stroke-width': 1 };
  const label = (attrs, text) => svg('text', { 'font-size': 11, fill: '#57606a', ...attrs, text });
  return svg('svg', { class: 'rotary-chart', viewBox: `0 0 ${W} ${H}`, width: '100%', role: 'img', style: `max-width: ${W}px`,
    'aria-label': `Score against distance, from 0 to ${p.curve.length - 1}; at this pair's distance ${here}: ${p.after.toFixed(3)}` },
  svg('line', { x1: left, y1: top, x2: left, y2: H - bottom, ...axis }),
  svg('line', { x1: left, y1: H - bottom, x2: W - right, y2: H - bottom, ...axis }),
  label({ x: left - 4, y: top + 8, 'text-anchor': 'end' }, hi.toFixed(1)),
  label({ x: left - 4, y: H - bottom, 'text-anchor': 'end' }, lo.toFixed(1)),
  label({ x: left, y: H - bottom + 14, 'text-anchor': 'middle' }, '0'),
  label({ x: W - right, y: H - bottom + 14, 'text-anchor': 'end' }, String(p.curve.length - 1)),
  label({ x: (left + W - right) / 2, y: H - 4, 'text-anchor': 'middle' }, 'distance: query position − key position'),
  svg('line', { x1: left, y1: y(p.before), x2: W - right, y2: y(p.before), stroke: '#8c959f', 'stroke-dasharray': '4 3' }),
  svg('polyline', { points: line, fill: 'none', stroke: '#0969da', 'stroke-width': 1.5 }),
  svg('circle', { cx: x(here), cy: y(p.after), r: 4, fill: '#d4380d' }),
  // (a white outline keeps the label readable over the line)
  label({ x: Math.min(x(here) + 6, W - right - 60), y: Math.max(top + 10, y(p.after) - 6), fill: '#d4380d', stroke: '#fff', 'stroke-width': 3, 'paint-order': 'stroke' }, 'this pair'));
}
