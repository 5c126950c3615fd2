// Model view: every layer x every head as a small heatmap, so patterns (previous-token heads,
// heads that park on the first token) stand out at a glance. Click or press Enter on one to open
// it as a full heatmap.
import { svg, widthOf } from './dom.js';
import { weightColor, weightRgb, MASKED_RGB } from './colors.js';
import { kvBrackets } from './kv_groups.js';

const FONT = 12;
// Above this many cells in total, thumbnails are drawn on a canvas and embedded as images:
// a few hundred thousand SVG rects would make the page sluggish.
const MAX_RECTS = 40000;

/**
 * data: { tokens, keyTokens?, nLayer, nHead, attention (L x H x n x m), masked?(i, j), headLabel(l, h) }
 * sel: { layer, head }
 * on: { select({ layer, head, view }) }
 */
export function renderModelView(container, data, sel, on = {}) {
  const n = data.tokens.length, m = (data.keyTokens ?? data.tokens).length;
  const { nLayer: L, nHead: H } = data;
  const width = widthOf(container);
  // Room above the head titles for the K/V groups' brackets (grouped-query attention).
  const left = 64, top = data.kvHeadOf ? 60 : 40, gap = 10;
  const size = Math.max(44, Math.min(140, Math.floor((width - left - 8 - gap * (H - 1)) / H)));
  const total = left + H * size + (H - 1) * gap + 8;
  const height = top + L * (size + gap + 14) + 4;
  const asImages = L * H * n * m > MAX_RECTS;

  const root = svg('svg', {
    class: 'attn-svg model-view', viewBox: `0 0 ${total} ${height}`, width: total, height,
    'font-family': 'system-ui, -apple-system, Segoe UI, sans-serif', 'font-size': FONT, role: 'group',
    'aria-label': `Model view: ${L} layers by ${H} heads`, 'data-view': 'model',
  });
  root.append(svg('rect', { x: 0, y: 0, width: total, height, fill: '#ffffff' }));
  for (let h = 0; h < H; h++)
    root.append(svg('text', { x: left + h * (size + gap) + size / 2, y: top - 10, 'text-anchor': 'middle', fill: '#57606a', text: `Head ${h + 1}` }));
  if (data.kvHeadOf) root.append(...kvBrackets(data.kvHeadOf, { x: (h) => left + h * (size + gap), size, y: top - 30 }));

  const thumbs = [];
  for (let l = 0; l < L; l++) {
    const y = top + l * (size + gap + 14);
    root.append(svg('text', { x: left - 8, y: y + size / 2 + 4, 'text-anchor': 'end', fill: '#57606a', text: `Layer ${l + 1}` }));
    for (let h = 0; h < H; h++) {
      const x = left + h * (size + gap);
      const label = data.headLabel?.(l, h);
      const selected = l === sel.layer && h === sel.head;
      const g = svg('g', {
        class: 'thumb', tabindex: 0, role: 'button', 'data-layer': l, 'data-head': h,
        'aria-label': `Layer ${l + 1}, head ${h + 1}${label ? `, ${label}` : ''}: open as heatmap`,
        'aria-pressed': selected ? 'true' : 'false',
      });
      g.append(svg('title', { text: `Layer ${l + 1} · Head ${h + 1}${label ? ` · ${label}` : ''}` }));
      g.append(svg('rect', { x: x - 1, y: y - 1, width: size + 2, height: size + 2, fill: '#ffffff', stroke: '#d0d7de' }));
      const base = (l * H + h) * n * m;
      if (asImages) g.append(svg('image', { x, y, width: size, height: size, href: thumbnailUrl(data, base, n, m), preserveAspectRatio: 'none' }));
      else {
        const cw = size / m, ch = size / n;
        const cells = svg('g', { 'shape-rendering': 'crispEdges' });
        for (let i = 0; i < n; i++)
          for (let j = 0; j < m; j++) {
            const masked = data.masked?.(i, j);
            // Zero (or masked) cells stay the background: fewer elements, same picture.
            if (masked) { if (n <= 24) cells.append(svg('rect', { x: x + j * cw, y: y + i * ch, width: cw, height: ch, fill: '#f0f0f0' })); continue; }
            const w = data.attention[base + i * m + j];
            if (w < 0.01) continue;
            cells.append(svg('rect', { x: x + j * cw, y: y + i * ch, width: cw + 0.3, height: ch + 0.3, fill: weightColor(w) }));
          }
        g.append(cells);
      }
      if (label) g.append(svg('text', { x: x + size / 2, y: y + size + 11, 'text-anchor': 'middle', 'font-size': 9.5, fill: '#57606a', text: shorten(label, size) }));
      const frame = svg('rect', {
        class: 'thumb-frame', x: x - 2, y: y - 2, width: size + 4, height: size + 4, fill: 'none', rx: 2,
        stroke: selected ? '#d4380d' : 'transparent', 'stroke-width': 2,
      });
      g.append(frame);
      const open = () => on.select?.({ layer: l, head: h, view: 'heatmap' });
      g.addEventListener('click', open);
      g.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') { open(); e.preventDefault(); return; }
        const moves = { ArrowUp: -H, ArrowDown: H, ArrowLeft: -1, ArrowRight: 1 };
        if (moves[e.key] !== undefined) {
          thumbs[Math.max(0, Math.min(thumbs.length - 1, l * H + h + moves[e.key]))].focus();
          e.preventDefault();
        }
      });
      g.addEventListener('focus', () => { if (!selected) frame.setAttribute('stroke', '#0969da'); });
      g.addEventListener('blur', () => { if (!selected) frame.setAttribute('stroke', 'transparent'); });
      thumbs.push(g);
      root.append(g);
    }
  }
  container.replaceChildren(root);
  return { svg: root };
}

function thumbnailUrl(data, base, n, m) {
  const canvas = document.createElement('canvas');
  canvas.width = m; canvas.height = n;
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(m, n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < m; j++) {
      const c = data.masked?.(i, j) ? MASKED_RGB : weightRgb(data.attention[base + i * m + j]);
      img.data.set([...c, 255], (i * m + j) * 4);
    }
  ctx.putImageData(img, 0, 0);
  return canvas.toDataURL('image/png');
}

// Short names for a label under a small thumbnail, so its score stays readable ("prev 0.53").
const SHORT = { 'previous-token': 'prev', 'current-token': 'self', 'next-token': 'next', induction: 'induct', alignment: 'align' };

function shorten(text, px) {
  const max = Math.max(6, Math.floor(px / 5.4));
  if (text.length <= max) return text;
  const [name, ...rest] = text.split(' · ');
  const short = [SHORT[name] ?? name, ...rest].join(' ');
  return short.length <= max ? short : short.slice(0, max - 1) + '…';
}
