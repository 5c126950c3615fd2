// Heatmap of one head: query tokens down, key tokens across, the weight as colour, the exact value
// on hover or keyboard focus, and a legend for the colour scale. Masked cells (causal) are grey.
import { el, svg, fmt, numList, tokenLabel, widthOf } from './dom.js';
import { weightColor, textOn, MASKED_FILL } from './colors.js';
import { textWidth } from './measure.js';

const FONT = 12;

/**
 * data: { tokens, keyTokens?, nHead, attention (L x H x n x m), masked?(i, j), headLabel(l, h),
 *         test?: a "test this head" result (head_test.js): its cells outlined, each row's weight at the right,
 *         title?(layer): a title of its own, view?: the name it is drawn under (another view's map: the rollout) }
 * sel: { layer, head (number), query }
 * on: { select({ query }) }
 */
export function renderHeatmapView(container, data, sel, on = {}) {
  const queries = data.tokens, keys = data.keyTokens ?? data.tokens;
  const n = queries.length, m = keys.length;
  const head = sel.head === 'all' ? 0 : sel.head;
  const width = widthOf(container);
  const labelW = Math.min(150, Math.max(40, ...queries.map((t) => textWidth(tokenLabel(t), FONT) + 12)));
  const cell = Math.max(12, Math.min(56, Math.floor((width - labelW - 24) / m)));
  // Narrow columns get vertical labels (diagonal ones would overlap their neighbours).
  const angle = cell < 20 ? -90 : -45;
  const colLabelH = Math.min(120, Math.max(30, ...keys.map((t) => textWidth(tokenLabel(t), FONT) * (angle === -90 ? 1 : 0.72) + 16)));
  const showValues = cell >= 40;
  const top = 30 + colLabelH, left = labelW + 4;
  const legendY = top + n * cell + 22;
  const gridW = Math.max(m * cell, 240);
  const test = data.test && data.test.layer === sel.layer && data.test.head === head ? data.test : null;
  const scoreW = test ? 52 : 0; // the test's per-row weight, right of the grid
  const label = data.headLabel?.(sel.layer, head);
  const title = data.title?.(sel.layer) ?? `Layer ${sel.layer + 1} · Head ${head + 1}${label ? ` · ${label}` : ''}${data.keyTokens ? ` · cross-attention (${data.keyLabel ?? 'keys: second sentence'})` : ''}`;
  const legendW = Math.min(220, gridW - 90);
  const MASKED_LEGEND = 'masked: weight 0';
  // Wide enough for the title and the legend too (the SVG scales down to the container, never cuts them off).
  const total = Math.max(left + gridW + scoreW + 12, textWidth(title, 13, 600) + 12,
    data.masked ? left + legendW + 32 + textWidth(MASKED_LEGEND, 11) + 8 : 0);
  const height = legendY + 46;

  const root = svg('svg', {
    class: 'attn-svg heatmap-view', viewBox: `0 0 ${total} ${height}`, width: total, height,
    'font-family': 'system-ui, -apple-system, Segoe UI, sans-serif', 'font-size': FONT, tabindex: 0, role: 'grid',
    'aria-label': `${data.title ? title : `Attention heatmap, layer ${sel.layer + 1}, head ${head + 1}`}. Arrow keys move between cells.`,
    'data-view': data.view ?? 'heatmap', 'data-layer': sel.layer, 'data-head': head,
  });
  root.append(svg('rect', { x: 0, y: 0, width: total, height, fill: '#ffffff' }));
  root.append(svg('text', { x: 4, y: 18, 'font-weight': 600, fill: '#1b1f24', 'font-size': 13, text: title }));

  // Column labels, rotated so long tokens fit; row labels right-aligned.
  keys.forEach((t, j) => {
    const x = left + j * cell + cell / 2 + (angle === -90 ? 4 : 0), y = top - 6;
    root.append(svg('text', { x, y, transform: `rotate(${angle} ${x} ${y})`, fill: '#1b1f24', text: tokenLabel(t) }));
  });
  queries.forEach((t, i) => {
    root.append(svg('text', {
      x: left - 6, y: top + i * cell + cell / 2 + 4, 'text-anchor': 'end', fill: '#1b1f24',
      'font-weight': i === sel.query ? 700 : 400, text: tokenLabel(t),
    }));
  });

  const base = (sel.layer * data.nHead + head) * n * m;
  const cells = svg('g', { class: 'cells', 'shape-rendering': 'crispEdges' });
  root.append(cells);
  for (let i = 0; i < n; i++) {
    const row = data.attention.subarray(base + i * m, base + (i + 1) * m);
    const g = svg('g', { class: 'attn-row', 'data-head': head, 'data-query': i, 'data-weights': numList(row), role: 'row' });
    for (let j = 0; j < m; j++) {
      const masked = data.masked?.(i, j);
      const w = row[j];
      g.append(svg('rect', {
        x: left + j * cell, y: top + i * cell, width: cell, height: cell,
        fill: masked ? MASKED_FILL : weightColor(w), stroke: '#ffffff', 'stroke-width': 0.5,
      }));
      if (showValues) {
        g.append(svg('text', {
          x: left + j * cell + cell / 2, y: top + i * cell + cell / 2 + 4, 'text-anchor': 'middle', 'font-size': 11,
          fill: masked ? '#6e7781' : textOn(w), 'pointer-events': 'none', text: masked ? fmt(0, 2) : fmt(w, 2),
        }));
      }
    }
    cells.append(g);
  }
  if (test) root.append(testMarks(test, { left, top, cell, m, decimals: 2 }));
  const cursor = svg('rect', { width: cell, height: cell, fill: 'none', stroke: '#d4380d', 'stroke-width': 2, visibility: 'hidden', 'pointer-events': 'none' });
  root.append(cursor);

  // Legend: the scale from 0 to 1 with ticks, and the grey of masked cells.
  const defs = svg('defs');
  const grad = svg('linearGradient', { id: `heat-legend-${uid()}`, x1: 0, x2: 1, y1: 0, y2: 0 });
  for (let k = 0; k <= 10; k++) grad.append(svg('stop', { offset: `${k * 10}%`, 'stop-color': weightColor(k / 10) }));
  defs.append(grad);
  root.append(defs);
  root.append(svg('text', { x: left, y: legendY - 6, fill: '#57606a', 'font-size': 11, text: 'attention weight' }));
  root.append(svg('rect', { x: left, y: legendY, width: legendW, height: 12, fill: `url(#${grad.id})`, stroke: '#8c959f', 'stroke-width': 0.5 }));
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    root.append(svg('line', { x1: left + t * legendW, x2: left + t * legendW, y1: legendY + 12, y2: legendY + 16, stroke: '#57606a' }));
    root.append(svg('text', { x: left + t * legendW, y: legendY + 28, 'text-anchor': 'middle', fill: '#57606a', 'font-size': 10, text: String(t) }));
  }
  if (data.masked) {
    root.append(svg('rect', { x: left + legendW + 16, y: legendY, width: 12, height: 12, fill: MASKED_FILL }));
    root.append(svg('text', { x: left + legendW + 32, y: legendY + 10, fill: '#57606a', 'font-size': 11, text: MASKED_LEGEND }));
  }

  // The exact value: a tooltip that follows the pointer, and a readout line (also for keyboards).
  const tip = el('div', { class: 'heat-tip', role: 'status', 'aria-live': 'polite', hidden: true });
  const readout = el('p', { class: 'heat-readout', 'aria-live': 'polite', text: 'Hover a cell (or focus the map and use the arrow keys) for its exact weight.' });
  let active = null;
  function show(i, j, clientX, clientY) {
    active = [i, j];
    const w = data.attention[base + i * m + j];
    const masked = data.masked?.(i, j);
    const text = `query “${tokenLabel(queries[i])}” (${i + 1}) → key “${tokenLabel(keys[j])}” (${j + 1}): ${masked ? '0 (masked)' : w.toFixed(6)}`;
    readout.textContent = text;
    readout.dataset.value = String(w);
    cursor.setAttribute('x', left + j * cell);
    cursor.setAttribute('y', top + i * cell);
    cursor.setAttribute('visibility', 'visible');
    if (clientX !== undefined) {
      const box = wrap.getBoundingClientRect();
      tip.textContent = masked ? 'masked: 0' : w.toFixed(6);
      tip.hidden = false;
      tip.style.left = `${clientX - box.left + wrap.scrollLeft + 12}px`;
      tip.style.top = `${clientY - box.top + wrap.scrollTop + 12}px`;
    }
  }
  function hide() {
    tip.hidden = true;
    cursor.setAttribute('visibility', 'hidden');
  }
  // Map a pointer position to a cell through the SVG's own transform (it may be scaled down).
  function cellAt(e) {
    const pt = root.createSVGPoint();
    pt.x = e.clientX; pt.y = e.clientY;
    const p = pt.matrixTransform(root.getScreenCTM().inverse());
    const j = Math.floor((p.x - left) / cell), i = Math.floor((p.y - top) / cell);
    return i >= 0 && i < n && j >= 0 && j < m ? [i, j] : null;
  }
  root.addEventListener('pointermove', (e) => {
    const at = cellAt(e);
    if (at) show(at[0], at[1], e.clientX, e.clientY); else hide();
  });
  root.addEventListener('pointerleave', hide);
  root.addEventListener('click', (e) => { const at = cellAt(e); if (at) on.select?.({ query: at[0] }); });
  root.addEventListener('keydown', (e) => {
    const [i, j] = active ?? [sel.query ?? 0, 0];
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (moves[e.key]) {
      const [di, dj] = moves[e.key];
      show(Math.max(0, Math.min(n - 1, i + di)), Math.max(0, Math.min(m - 1, j + dj)));
      e.preventDefault();
    } else if (e.key === 'Enter' && active) {
      on.select?.({ query: active[0] });
      e.preventDefault();
    }
  });
  root.addEventListener('focus', () => { if (!active) show(Math.min(sel.query ?? 0, n - 1), 0); });

  const wrap = el('div', { class: 'heat-wrap' }, root, tip);
  container.replaceChildren(wrap, readout);
  return { svg: root };
}

/** The test's cells outlined, and each tested row's weight on its cell written at the row's end. */
function testMarks(test, { left, top, cell, m, decimals }) {
  const g = svg('g', { class: 'head-test-marks', 'pointer-events': 'none' });
  for (const r of test.rows) {
    g.append(svg('rect', {
      class: 'test-target', 'data-query': r.query, 'data-key': r.target, x: left + r.target * cell + 1, y: top + r.query * cell + 1,
      width: cell - 2, height: cell - 2, fill: 'none', stroke: '#1b1f24', 'stroke-width': 2, 'stroke-dasharray': r.top ? null : '3 2',
    }));
    g.append(svg('text', {
      class: 'test-score', 'data-query': r.query, x: left + m * cell + 6, y: top + r.query * cell + cell / 2 + 4,
      fill: '#1b1f24', 'font-size': 11, 'font-weight': r.top ? 700 : 400, text: fmt(r.weight, decimals),
    }));
  }
  return g;
}

let counter = 0;
const uid = () => (++counter).toString(36);
