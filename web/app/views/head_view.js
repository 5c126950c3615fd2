// Head view (the layout BertViz made familiar): the tokens twice, queries on the left and keys on
// the right, one line per (query, key) pair whose opacity is the attention weight and whose
// colour is the head. Hovering or focusing a token isolates its lines.
import { svg, numList, tokenLabel, widthOf } from './dom.js';
import { headColor } from './colors.js';
import { textWidth } from './measure.js';
import { kvSuffix } from './kv_groups.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
const ROW = 24;
const FONT = 13;

/**
 * data: { tokens, keyTokens?, nLayer, nHead, attention (L x H x n x m), headLabel(l, h), headColor?(h) (a model's own head colours) }
 * sel: { layer, head: number | 'all', query }; options.onlyQuery: draw the lines of that query only
 * (while text streams in, the newest token's attention, cheap enough to redraw per token)
 * on: { select({ query }) }
 */
export function renderHeadView(container, data, sel, on = {}, { onlyQuery = null } = {}) {
  const queries = data.tokens;
  const keys = data.keyTokens ?? data.tokens;
  const n = queries.length, m = keys.length;
  const width = widthOf(container);
  const heads = sel.head === 'all' ? Array.from({ length: data.nHead }, (_, h) => h) : [sel.head];

  const labelW = Math.min(160, Math.max(48, ...[...queries, ...keys].map((t) => textWidth(tokenLabel(t), FONT) + 14)));
  const gap = Math.max(60, Math.min(380, width - 2 * labelW - 16));
  const xL = 8 + labelW, xR = xL + gap;
  const top = 52;
  const height = top + Math.max(n, m) * ROW + 12;
  const keysText = data.keyTokens ? data.keyLabel ?? 'keys (second sentence: cross-attention)' : 'keys';
  const legend = heads.map((h) => {
    const label = data.headLabel?.(sel.layer, h);
    return { h, text: `Head ${h + 1}${heads.length === 1 ? kvSuffix(data, h) : ''}${label && heads.length === 1 ? ` · ${label}` : ''}` };
  });
  const legendW = 74 + legend.reduce((a, { text }) => a + textWidth(text, FONT) + 30, 0);
  // Wide enough for the key tokens, the keys' caption and the legend (the SVG scales down, never clips).
  const total = Math.max(xR + labelW + 8, xR + textWidth(keysText, 11) + 8, legendW);

  const root = svg('svg', {
    class: 'attn-svg head-view', viewBox: `0 0 ${total} ${height}`, width: total, height,
    'font-family': 'system-ui, -apple-system, Segoe UI, sans-serif', 'font-size': FONT, role: 'group',
    'aria-label': `Head view, layer ${sel.layer + 1}, ${sel.head === 'all' ? 'all heads' : `head ${sel.head + 1}`}`,
    'data-view': 'heads', 'data-layer': sel.layer, 'data-head': sel.head === 'all' ? 'all' : sel.head,
  });
  root.append(svg('rect', { x: 0, y: 0, width: total, height, fill: '#ffffff' }));

  // Legend: one chip per drawn head, with the head's label when the model card gives one.
  let lx = 8;
  root.append(svg('text', { x: lx, y: 18, 'font-weight': 600, fill: '#1b1f24', text: `Layer ${sel.layer + 1}` }));
  lx += 66;
  for (const { h, text } of legend) {
    root.append(svg('rect', { x: lx, y: 8, width: 12, height: 12, rx: 2, fill: (data.headColor ?? headColor)(h) }));
    root.append(svg('text', { x: lx + 16, y: 18, fill: '#1b1f24', text }));
    lx += textWidth(text, FONT) + 30;
  }
  root.append(svg('text', { x: xL, y: top - 12, 'text-anchor': 'end', fill: '#57606a', 'font-size': 11, text: 'queries' }));
  root.append(svg('text', { x: xR, y: top - 12, fill: '#57606a', 'font-size': 11, text: keysText }));

  // Lines first so the tokens stay on top.
  const lines = [];
  const linesLayer = svg('g', { class: 'lines' });
  root.append(linesLayer);
  const base = (h) => ((sel.layer * data.nHead + h) * n) * m;
  for (const h of heads) {
    for (let i = 0; i < n; i++) {
      if (onlyQuery !== null && i !== onlyQuery) continue;
      const row = data.attention.subarray(base(h) + i * m, base(h) + (i + 1) * m);
      // What every line of the row shares sits on its group (fewer attributes: faster redraws).
      const g = svg('g', { class: 'attn-row', 'data-head': h, 'data-query': i, 'data-weights': numList(row),
        stroke: (data.headColor ?? headColor)(h), 'stroke-width': 2.2, 'stroke-linecap': 'round' });
      const y1 = top + i * ROW + ROW / 2 - 4;
      for (let j = 0; j < m; j++) {
        const w = row[j];
        if (!(w >= 0.002)) continue; // invisible anyway; keeps the DOM small
        const line = document.createElementNS(SVG_NS, 'line');
        line.setAttribute('x1', xL + 6);
        line.setAttribute('y1', y1);
        line.setAttribute('x2', xR - 6);
        line.setAttribute('y2', top + j * ROW + ROW / 2 - 4);
        line.setAttribute('stroke-opacity', Math.min(1, w).toFixed(4));
        line.dataset.key = j;
        lines.push({ line, i, j });
        g.append(line);
      }
      linesLayer.append(g);
    }
  }

  const tokenNodes = { q: [], k: [] };
  const highlight = svg('rect', { class: 'tok-highlight', x: 0, y: 0, width: labelW, height: ROW - 4, rx: 3, fill: '#fff3bf', visibility: 'hidden' });
  root.append(highlight);

  // Isolate one token's lines: a query shows its row, a key its column.
  function isolate(side, index) {
    for (const { line, i, j } of lines) {
      const show = side === null || (side === 'q' ? i === index : j === index);
      line.setAttribute('visibility', show ? 'visible' : 'hidden');
    }
    if (side === null) highlight.setAttribute('visibility', 'hidden');
    else {
      highlight.setAttribute('x', side === 'q' ? xL - labelW + 2 : xR + 2);
      highlight.setAttribute('y', top + index * ROW - 2);
      highlight.setAttribute('visibility', 'visible');
    }
  }

  function addTokens(side, list, x, anchor) {
    list.forEach((t, idx) => {
      const isQuery = side === 'q';
      const node = svg('text', {
        class: `tok tok-${side}${isQuery && idx === sel.query ? ' tok-selected' : ''}`, x, y: top + idx * ROW + ROW / 2,
        'text-anchor': anchor, fill: '#1b1f24', tabindex: 0, 'data-index': idx, 'data-side': side,
        'font-weight': isQuery && idx === sel.query ? 700 : 400,
        'aria-label': `${isQuery ? 'query' : 'key'} token ${idx + 1}: ${t}`,
        text: tokenLabel(t),
      });
      tokenNodes[side].push(node);
      root.append(node);
    });
  }
  addTokens('q', queries, xL - 2, 'end');
  addTokens('k', keys, xR + 4, 'start');

  // One set of listeners on the view for every token (redraws per streamed token stay cheap).
  const tokenOf = (e) => {
    const node = e.target.closest?.('.tok');
    return node ? { side: node.dataset.side, idx: Number(node.dataset.index) } : null;
  };
  const onToken = (handler) => (e) => { const t = tokenOf(e); if (t) handler(t, e); };
  root.addEventListener('pointerover', onToken(({ side, idx }) => isolate(side, idx)));
  root.addEventListener('pointerout', onToken(() => isolate(null)));
  root.addEventListener('focusin', onToken(({ side, idx }) => isolate(side, idx)));
  root.addEventListener('focusout', onToken(() => isolate(null)));
  root.addEventListener('click', onToken(({ side, idx }) => { if (side === 'q') on.select?.({ query: idx }); }));
  root.addEventListener('keydown', onToken(({ side, idx }, e) => {
    const col = tokenNodes[side];
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      col[Math.max(0, Math.min(col.length - 1, idx + (e.key === 'ArrowDown' ? 1 : -1)))].focus();
    } else if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
      const other = tokenNodes[side === 'q' ? 'k' : 'q'];
      other[Math.min(other.length - 1, idx)]?.focus();
    } else if ((e.key === 'Enter' || e.key === ' ') && side === 'q') {
      on.select?.({ query: idx });
    } else return;
    e.preventDefault();
  }));

  container.replaceChildren(root);
  return { svg: root };
}
