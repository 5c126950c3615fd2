// Predictions view: a model's most likely tokens with probability bars (GPT-2's next token, or
// BERT's guesses for one blank). It is drawn as SVG like the other views, so it exports the same way.
import { svg, tokenLabel, widthOf } from './dom.js';
import { textWidth } from './measure.js';

/**
 * data: { predictions: [{ id, text, probability }] }; options.title: the heading to draw (true:
 * "Next token"; false: none, inside a titled panel); options.label: what the list is, for screen readers.
 */
export function renderNextTokenView(container, data, { title = true, label = 'Most likely next tokens' } = {}) {
  const preds = data.predictions ?? [];
  const width = Math.min(widthOf(container), 560);
  const labelW = Math.min(150, Math.max(60, ...preds.map((p) => textWidth(`“${tokenLabel(p.text)}”`, 13) + 12)));
  const barMax = width - labelW - 80;
  const top = title ? 30 : 4, row = 24;
  const height = top + preds.length * row + 8;
  const root = svg('svg', {
    class: 'attn-svg next-view', viewBox: `0 0 ${width} ${height}`, width, height, 'data-view': 'next',
    'font-family': 'system-ui, -apple-system, Segoe UI, sans-serif', 'font-size': 13, role: 'list',
    'aria-label': label,
  });
  root.append(svg('rect', { x: 0, y: 0, width, height, fill: '#ffffff' }));
  if (title) root.append(svg('text', { x: 4, y: 18, 'font-weight': 600, fill: '#1b1f24', text: title === true ? 'Next token' : title }));
  const top1 = preds[0]?.probability || 1;
  preds.forEach((p, k) => {
    const y = top + k * row;
    const g = svg('g', { class: 'prediction', role: 'listitem', 'data-token-id': p.id, 'data-probability': p.probability,
      'aria-label': `${tokenLabel(p.text)}: ${(p.probability * 100).toFixed(1)} percent` });
    g.append(svg('text', { x: labelW - 6, y: y + 15, 'text-anchor': 'end', fill: '#1b1f24', text: `“${tokenLabel(p.text)}”` }));
    g.append(svg('rect', { x: labelW, y: y + 4, width: Math.max(1, (p.probability / top1) * barMax), height: 15, rx: 2, fill: k === 0 ? '#0072B2' : '#6baed6' }));
    g.append(svg('text', { x: labelW + Math.max(1, (p.probability / top1) * barMax) + 6, y: y + 16, fill: '#57606a', 'font-size': 12, text: `${(p.probability * 100).toFixed(1)}%` }));
    root.append(g);
  });
  container.replaceChildren(root);
  return { svg: root };
}
