// The step-by-step math as one standalone SVG (for the SVG and PNG exports): the same steps as the
// HTML view, laid out as equations of bracketed matrices. Every style is an attribute, so the file
// renders the same outside the page.
import { svg, fmt, tokenLabel } from './dom.js';
import { signedColor, weightColor, textOn, MASKED_FILL } from './colors.js';
import { textWidth } from './measure.js';
import { neuronText } from './neuron_view.js';

const FONT = 12, ROW_H = 18, PAD = 16;

// Columns a matrix keeps in the export: an MLP's row of 3,072 hidden units would make an SVG wider
// than a canvas can hold (the PNG export draws it on one).
const EXPORT_COLS = 64;

/** The term with its first EXPORT_COLS columns only, its caption saying so. */
function firstColumns(t) {
  if (t.cols <= EXPORT_COLS) return t;
  const cut = (a) => (a ? Array.from({ length: t.rows }, (_, r) => Array.from(a.slice(r * t.cols, r * t.cols + EXPORT_COLS))).flat() : a);
  return { ...t, cols: EXPORT_COLS, values: cut(t.values), maskedFrom: cut(t.maskedFrom), colLabels: t.colLabels.slice(0, EXPORT_COLS),
    partial: `${t.partial ?? `${t.rows} × ${t.cols}`} (its first ${EXPORT_COLS} columns)` };
}

function matrixBlock(t, decimals) {
  const values = Array.from(t.values, (v) => fmt(v, t.integer ? 0 : decimals));
  const labelW = Math.max(...t.rowLabels.map((l) => textWidth(tokenLabel(l), FONT)), 8) + 8;
  const colW = Math.max(...values.map((v) => textWidth(v, FONT)), ...t.colLabels.map((l) => textWidth(tokenLabel(l), 10))) + 10;
  const caption = `${t.name.replace(/\^/g, '').replace(/_/g, '')}  ${t.partial ?? `${t.rows} × ${t.cols}`}`;
  const gridW = t.cols * colW + 8;
  const width = Math.max(labelW + gridW, textWidth(caption, FONT, 600));
  const height = 18 + 14 + t.rows * ROW_H + 4;
  let maxAbs = 0;
  for (const v of t.values) if (Number.isFinite(v)) maxAbs = Math.max(maxAbs, Math.abs(v));
  return {
    width, height,
    draw(x, y) {
      const g = svg('g', { 'data-step': t.key });
      g.append(svg('text', { x, y: y + 12, 'font-weight': 600, fill: '#1b1f24', text: caption }));
      const gx = x + labelW, gy = y + 32;
      t.colLabels.forEach((l, c) => g.append(svg('text', { x: gx + 4 + c * colW + colW / 2, y: gy - 4, 'text-anchor': 'middle', 'font-size': 10, fill: '#57606a', text: tokenLabel(l) })));
      for (let r = 0; r < t.rows; r++) {
        const ry = gy + r * ROW_H;
        g.append(svg('text', { x: gx - 6, y: ry + 13, 'text-anchor': 'end', fill: '#1b1f24', 'font-weight': r === t.highlightRow ? 700 : 400, text: tokenLabel(t.rowLabels[r]) }));
        for (let c = 0; c < t.cols; c++) {
          const v = t.values[r * t.cols + c];
          let fill = null, color = '#1b1f24';
          if (v === -Infinity || t.maskedFrom?.[r * t.cols + c] === -Infinity) { fill = MASKED_FILL; color = '#57606a'; } else if (t.probability) { fill = weightColor(v); color = textOn(v); } else if (t.signed) fill = signedColor(v, maxAbs);
          const inBlock = t.highlightCols && c >= t.highlightCols[0] && c < t.highlightCols[1];
          if (r === t.highlightRow || inBlock) g.append(svg('rect', { x: gx + 4 + c * colW, y: ry, width: colW, height: ROW_H, fill: '#ffd33d', 'fill-opacity': 0.45 }));
          if (fill) g.append(svg('rect', { x: gx + 6 + c * colW, y: ry + 2, width: colW - 4, height: ROW_H - 4, fill, 'fill-opacity': r === t.highlightRow ? 0.8 : 1 }));
          g.append(svg('text', { x: gx + 4 + (c + 1) * colW - 5, y: ry + 13, 'text-anchor': 'end', fill: color, text: values[r * t.cols + c] }));
        }
      }
      // Square brackets.
      const bh = t.rows * ROW_H, bx2 = gx + gridW;
      g.append(svg('path', { d: `M${gx + 5},${gy} h-5 v${bh} h5 M${bx2 - 5},${gy} h5 v${bh} h-5`, fill: 'none', stroke: '#1b1f24', 'stroke-width': 1.5 }));
      return g;
    },
  };
}

function shapeBlock(t) {
  const caption = `${t.name.replace(/\^/g, '').replace(/_/g, '')}  ${t.rows} × ${t.cols}`;
  const note = t.note ?? 'not printed';
  const width = Math.max(textWidth(caption, FONT, 600), textWidth(note, 10) + 16, 90);
  const height = 18 + 60;
  return {
    width, height,
    draw(x, y) {
      const g = svg('g', { 'data-step': t.key });
      g.append(svg('text', { x, y: y + 12, 'font-weight': 600, fill: '#1b1f24', text: caption }));
      g.append(svg('rect', { x, y: y + 20, width, height: 52, fill: '#f6f8fa', stroke: '#8c959f', 'stroke-dasharray': '4 3' }));
      g.append(svg('text', { x: x + width / 2, y: y + 50, 'text-anchor': 'middle', 'font-size': 10, fill: '#57606a', text: note }));
      return g;
    },
  };
}

function opBlock(t) {
  const width = textWidth(t.text, 16) + 12;
  return { width, height: 20, op: true, draw(x, y, h) { return svg('text', { x: x + 6, y: y + h / 2 + 10, 'font-size': 16, fill: '#1b1f24', text: t.text }); } };
}

function wrap(text, maxChars) {
  const words = text.split(' ');
  const lines = [];
  let line = '';
  for (const w of words) {
    if ((line + ' ' + w).trim().length > maxChars && line) { lines.push(line); line = w; } else line = (line + ' ' + w).trim();
  }
  if (line) lines.push(line);
  return lines;
}

/** steps (from steps_model.js) -> <svg>, with a title line on top. */
export function stepsToSvg(steps, { decimals = 4, title = '' } = {}) {
  const parts = [];
  let y = PAD, width = 600;
  if (title) { parts.push((x) => svg('text', { x, y: y + 14, 'font-size': 16, 'font-weight': 700, fill: '#1b1f24', text: title })); y += 30; }
  steps.forEach((s, index) => {
    const ty = y;
    parts.push((x) => svg('text', { x, y: ty + 14, 'font-size': 14, 'font-weight': 700, fill: '#1b1f24', text: `${index + 1}. ${s.title.replace(/\^/g, '').replace(/_/g, '')}` }));
    y += 22;
    if (s.explain) for (const line of wrap(s.explain, 110)) {
      const ly = y;
      parts.push((x) => svg('text', { x, y: ly + 11, 'font-size': 11, fill: '#57606a', text: line }));
      y += 15;
    }
    const lines = [];
    if (s.terms?.length) lines.push(s.terms);
    lines.push(...(s.groups ?? []));
    for (const terms of lines) {
      const blocks = terms.map((t) => (t.kind === 'matrix' ? matrixBlock(firstColumns(t), decimals) : t.kind === 'shape' ? shapeBlock(t) : opBlock(t)));
      const h = Math.max(...blocks.map((b) => b.height));
      const ly = y + 6;
      let lineW = 0;
      for (const b of blocks) lineW += b.width + 10;
      width = Math.max(width, lineW + 2 * PAD);
      parts.push((x) => {
        const g = svg('g');
        let bx = x;
        for (const b of blocks) { g.append(b.draw(bx, b.op ? ly + 16 : ly, h - 16)); bx += b.width + 10; }
        return g;
      });
      y += h + 12;
    }
    for (const d of s.detail ?? []) {
      let text = '';
      if (d.kind === 'neuron') text = neuronText(d, decimals);
      else if (d.kind === 'softmax') text = `softmax row “${d.query}”: ${d.weights.map((w, j) => `${tokenLabel(d.keys[j])} ${w.toFixed(decimals + 1)}`).join(', ')}`;
      else text = d.text ?? ''; // (a drawing without a text, e.g. block_steps.js's bar strips, is left out)
      for (const line of wrap(text, 130)) {
        const ly = y;
        parts.push((x) => svg('text', { x, y: ly + 12, 'font-size': 11.5, fill: '#1b1f24', text: line }));
        y += 16;
      }
    }
    y += 14;
  });
  const root = svg('svg', { viewBox: `0 0 ${width} ${y}`, width, height: y,
    'font-family': 'system-ui, -apple-system, Segoe UI, sans-serif', 'font-size': FONT });
  root.append(svg('rect', { x: 0, y: 0, width, height: y, fill: '#ffffff' }));
  for (const p of parts) root.append(p(PAD));
  return root;
}
