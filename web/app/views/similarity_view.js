// Compare sentences: the cosine similarity of every pair of sentence embeddings as a heatmap
// (symmetric, ones on the diagonal). The colours stretch over the range the off-diagonal values
// take, because a model's sentence vectors often all point roughly the same way: what shows the
// clusters is which pairs are more alike than the rest.
import { svg, fmt, num, numList, widthOf } from './dom.js';
import { weightColor, textOn } from './colors.js';
import { textWidth } from './measure.js';

const FONT = 12;
const MAX_LABEL = 46;

/** "3. The sentence…", cut to `px` wide (and to MAX_LABEL characters). */
function label(text, i, px) {
  let t = text.length > MAX_LABEL ? text.slice(0, MAX_LABEL - 1) + '…' : text;
  while (t.length > 4 && textWidth(`${i + 1}. ${t}`, FONT) > px) t = t.slice(0, -2) + '…';
  return `${i + 1}. ${t}`;
}

/** data: { sentences, matrix (k x k), pooling } */
export function renderSimilarityView(container, data) {
  const { sentences, matrix } = data;
  const k = sentences.length;
  let lo = 1;
  for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) if (i !== j) lo = Math.min(lo, matrix[i * k + j]);
  // The scale's low end: the smallest off-diagonal value, rounded down to 0.05 (and below 1).
  lo = k > 1 ? Math.min(0.95, Math.floor(lo * 20) / 20) : 0;
  const shade = (v) => (v - lo) / (1 - lo);

  const width = widthOf(container);
  const labelW = Math.min(Math.floor(width * 0.5), Math.max(60, ...sentences.map((s, i) => textWidth(label(s, i, Infinity), FONT) + 12)));
  const labels = sentences.map((s, i) => label(s, i, labelW - 12));
  const cell = Math.max(18, Math.min(60, Math.floor((width - labelW - 24) / Math.max(1, k))));
  const showValues = cell >= 36;
  const top = 44, left = labelW + 4;
  const legendY = top + k * cell + 26;
  const gridW = Math.max(k * cell, 260);
  const title = `Cosine similarity of the sentence embeddings (${data.pooling === 'cls' ? '[CLS]' : 'mean pooling'})`;
  const total = Math.max(left + gridW + 12, textWidth(title, 13, 600) + 12), height = legendY + 46;

  const root = svg('svg', {
    class: 'attn-svg similarity-view', viewBox: `0 0 ${total} ${height}`, width: total, height, role: 'img',
    'font-family': 'system-ui, -apple-system, Segoe UI, sans-serif', 'font-size': FONT, 'data-view': 'compare',
    'aria-label': `Cosine similarity of ${k} sentence embeddings`,
  });
  root.append(svg('rect', { x: 0, y: 0, width: total, height, fill: '#ffffff' }));
  root.append(svg('text', { x: 4, y: 18, 'font-weight': 600, fill: '#1b1f24', 'font-size': 13, text: title }));
  sentences.forEach((_, j) => root.append(svg('text', {
    x: left + j * cell + cell / 2, y: top - 8, 'text-anchor': 'middle', fill: '#57606a', text: String(j + 1),
  })));
  labels.forEach((l, i) => {
    const t = svg('text', { x: left - 6, y: top + i * cell + cell / 2 + 4, 'text-anchor': 'end', fill: '#1b1f24', text: l });
    t.append(svg('title', { text: sentences[i] }));
    root.append(t);
  });

  const cells = svg('g', { class: 'cells', 'shape-rendering': 'crispEdges' });
  for (let i = 0; i < k; i++) {
    const row = matrix.subarray(i * k, (i + 1) * k);
    const g = svg('g', { class: 'sim-row', 'data-index': i, 'data-values': numList(row) });
    for (let j = 0; j < k; j++) {
      const v = row[j];
      const rect = svg('rect', { x: left + j * cell, y: top + i * cell, width: cell, height: cell, fill: weightColor(shade(v)), stroke: '#ffffff', 'stroke-width': 1, 'data-value': num(v) });
      rect.append(svg('title', { text: `${i + 1} and ${j + 1}: ${v.toFixed(4)}` }));
      g.append(rect);
      if (showValues) g.append(svg('text', { x: left + j * cell + cell / 2, y: top + i * cell + cell / 2 + 4, 'text-anchor': 'middle', 'font-size': 11,
        fill: textOn(shade(v)), 'pointer-events': 'none', text: fmt(v, 2) }));
    }
    cells.append(g);
  }
  root.append(cells);

  // Legend: the stretched scale, lo .. 1.
  const id = `sim-legend-${++counter}`;
  const grad = svg('linearGradient', { id, x1: 0, x2: 1, y1: 0, y2: 0 });
  for (let s = 0; s <= 10; s++) grad.append(svg('stop', { offset: `${s * 10}%`, 'stop-color': weightColor(s / 10) }));
  root.append(svg('defs', {}, grad));
  const legendW = Math.min(220, gridW - 20);
  root.append(svg('text', { x: left, y: legendY - 6, fill: '#57606a', 'font-size': 11, text: `cosine similarity (colours span ${fmt(lo, 2)} to 1)` }));
  root.append(svg('rect', { x: left, y: legendY, width: legendW, height: 12, fill: `url(#${id})`, stroke: '#8c959f', 'stroke-width': 0.5 }));
  for (const t of [0, 0.5, 1]) {
    root.append(svg('line', { x1: left + t * legendW, x2: left + t * legendW, y1: legendY + 12, y2: legendY + 16, stroke: '#57606a' }));
    root.append(svg('text', { x: left + t * legendW, y: legendY + 28, 'text-anchor': 'middle', fill: '#57606a', 'font-size': 10, text: fmt(lo + t * (1 - lo), 2) }));
  }
  container.replaceChildren(root);
  return { svg: root };
}

let counter = 0;
