// A whole S x S matrix of the step view (the masked scores, the attention weights) as one SVG
// picture: every row and column, scaled to the pane's width (never cut, never scrolled sideways),
// −∞ cells grey with their sign, the followed query's row outlined. The tables around it print
// one row's numbers; this is the triangle a tutorial draws.
import { svg, fmt, tokenLabel, widthOf } from './dom.js';
import { signedColor, weightColor, weightRgb, textOn, MASKED_FILL, MASKED_RGB } from './colors.js';
import { textWidth } from './measure.js';

const FONT = 11;
// Cells at most this big (a short sentence stays a compact picture, above the fold), and at least
// this small before the picture scales down as a whole (an SVG viewBox: it stays whole).
const MAX_CELL = 30, MIN_CELL = 9;
const LABEL_MAX = 96;
// Above this many cells the cells are one image (a pixel each, scaled up): 128 x 128 rects cost a
// page seconds to lay out; an image costs a canvas.
const MAX_RECTS = 1024;

/**
 * whole: { key, name, values (n x m), rows, cols, rowLabels, colLabels, highlightRow, kind: 'scores'
 * (signed, −∞ masked) | 'weights' (0..1, masked keys grey), maskedFrom (the masked scores, for 'weights') }
 */
export function renderWholeMatrix(container, whole, decimals) {
  const { values, rows: n, cols: m, rowLabels, colLabels, highlightRow: hl } = whole;
  const width = Math.max(200, widthOf(container));
  const labelW = Math.min(LABEL_MAX, Math.max(24, ...rowLabels.map((t) => textWidth(tokenLabel(t), FONT) + 10)));
  const cell = Math.max(MIN_CELL, Math.min(MAX_CELL, Math.floor((width - labelW - 8) / m)));
  const colLabelH = Math.min(LABEL_MAX, Math.max(...colLabels.map((t) => textWidth(tokenLabel(t), FONT))) + 10);
  const left = labelW + 4, top = colLabelH + 4;
  const total = left + m * cell + 4, height = top + n * cell + 4;
  const finite = Array.from(values).filter(Number.isFinite);
  const maxAbs = Math.max(1e-9, ...finite.map(Math.abs));
  const root = svg('svg', {
    class: 'attn-svg whole-matrix', viewBox: `0 0 ${total} ${height}`, width: total, height, 'data-whole': whole.key,
    'data-rows': n, 'data-cols': m, role: 'img', 'font-family': 'system-ui, -apple-system, Segoe UI, sans-serif', 'font-size': FONT,
    'aria-label': `${whole.name}: all ${n} × ${m} entries${hl !== undefined ? `, the row of “${tokenLabel(rowLabels[hl])}” outlined` : ''}`,
  });
  root.append(svg('rect', { x: 0, y: 0, width: total, height, fill: '#ffffff' }));
  colLabels.forEach((t, j) => {
    const x = left + j * cell + cell / 2 + 4, y = top - 4;
    root.append(svg('text', { x, y, transform: `rotate(-90 ${x} ${y})`, fill: '#1b1f24', text: clip(tokenLabel(t), colLabelH - 8) }));
  });
  const showText = cell >= 22;
  const hiddenAt = (i, j) => (whole.kind === 'weights' ? !Number.isFinite(whole.maskedFrom?.[i * m + j] ?? 0) : !Number.isFinite(values[i * m + j]));
  if (n * m > MAX_RECTS) {
    root.append(cellImage(whole, { left, top, cell, maxAbs, hiddenAt }));
    rowLabels.forEach((t, i) => root.append(svg('text', { x: left - 4, y: top + i * cell + cell / 2 + 4, 'text-anchor': 'end', fill: '#1b1f24',
      'font-weight': i === hl ? 700 : 400, text: clip(tokenLabel(t), labelW - 8) })));
  }
  for (let i = 0; i < n && n * m <= MAX_RECTS; i++) {
    root.append(svg('text', { x: left - 4, y: top + i * cell + cell / 2 + 4, 'text-anchor': 'end', fill: '#1b1f24',
      'font-weight': i === hl ? 700 : 400, text: clip(tokenLabel(rowLabels[i]), labelW - 8) }));
    const g = svg('g', { class: 'whole-row', 'data-row': i });
    for (let j = 0; j < m; j++) {
      const v = values[i * m + j];
      const hidden = hiddenAt(i, j);
      const fill = hidden ? MASKED_FILL : whole.kind === 'weights' ? weightColor(v) : signedColor(v, maxAbs);
      const x = left + j * cell, y = top + i * cell;
      g.append(svg('rect', { class: hidden ? 'whole-masked' : null, x, y, width: cell - 1, height: cell - 1, fill }));
      // The mask's −∞ is what the step teaches: written in every masked cell that has room.
      if (hidden && whole.kind === 'scores' && cell >= 14)
        g.append(svg('text', { x: x + cell / 2 - 0.5, y: y + cell / 2 + 3.5, 'text-anchor': 'middle', fill: '#57606a', 'font-size': Math.min(FONT, cell - 4), text: '−∞' }));
      else if (showText && !hidden && cell >= 30)
        g.append(svg('text', { x: x + cell / 2, y: y + cell / 2 + 3.5, 'text-anchor': 'middle', 'font-size': 9,
          fill: whole.kind === 'weights' ? textOn(v) : '#1b1f24', text: fmt(v, 1) }));
    }
    root.append(g);
  }
  if (hl !== undefined && hl >= 0 && hl < n)
    root.append(svg('rect', { class: 'whole-followed', x: left - 1.5, y: top + hl * cell - 1.5, width: m * cell + 2, height: cell + 2,
      fill: 'none', stroke: '#bf8700', 'stroke-width': 3 }));
  container.replaceChildren(root);
  return root;
}

/** Every cell as one pixel of an image, drawn `cell` px wide (the masked ones grey). */
function cellImage({ values, rows: n, cols: m, kind }, { left, top, cell, maxAbs, hiddenAt }) {
  const canvas = document.createElement('canvas');
  canvas.width = m;
  canvas.height = n;
  const g = canvas.getContext('2d'), image = g.createImageData(m, n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < m; j++) {
      const v = values[i * m + j];
      const rgb = hiddenAt(i, j) ? MASKED_RGB : kind === 'weights' ? weightRgb(v) : signedColor(v, maxAbs).match(/\d+/g).map(Number);
      image.data.set([...rgb, 255], (i * m + j) * 4);
    }
  g.putImageData(image, 0, 0);
  return svg('image', { class: 'whole-cells', x: left, y: top, width: m * cell, height: n * cell, preserveAspectRatio: 'none',
    href: canvas.toDataURL('image/png'), style: 'image-rendering: pixelated' });
}

/** A label cut to `px` (with …) so it stays in its margin. */
function clip(text, px) {
  if (textWidth(text, FONT) <= px) return text;
  let t = text;
  while (t.length > 1 && textWidth(`${t}…`, FONT) > px) t = t.slice(0, -1);
  return `${t}…`;
}
