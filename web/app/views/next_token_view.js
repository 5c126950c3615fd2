// Predictions view: a model's most likely tokens with probability bars (GPT-2's next token, or
// BERT's guesses for one blank). It is drawn as SVG like the other views, so it exports the same way.
import { svg, tokenLabel, widthOf } from './dom.js';
import { textWidth } from './measure.js';

/** A probability as a percentage with enough digits to tell neighbours apart (3 significant). */
export function percent(p) {
  const v = p * 100;
  if (v >= 99.95 && v < 100) return v.toFixed(3) === '100.000' ? '>99.999%' : `${v.toFixed(3)}%`; // not "100.0%" unless it is
  return `${v >= 10 ? v.toFixed(1) : v >= 0.001 ? v.toPrecision(3) : v.toExponential(1)}%`;
}

/**
 * data: { predictions: [{ id, text, probability }], endOfText?: { probability, text } (the model
 * would end the text here; predictions are then what follows if it does not) }; options.title: the heading to draw (true:
 * "Next token"; false: none, inside a titled panel); options.label: what the list is, for screen readers.
 */
export function renderNextTokenView(container, data, { title = true, label = 'Most likely next tokens' } = {}) {
  const preds = data.predictions ?? [];
  const width = Math.min(widthOf(container), 560);
  const labelW = Math.min(150, Math.max(60, ...preds.map((p) => textWidth(`“${tokenLabel(p.text)}”`, 13) + 12)));
  const barMax = width - labelW - 80;
  const end = data.endOfText;
  const top = (title ? 30 : 4) + (end ? 58 : 0), row = 24;
  const height = top + preds.length * row + 8;
  const root = svg('svg', {
    class: 'attn-svg next-view', viewBox: `0 0 ${width} ${height}`, width, height, 'data-view': 'next',
    'font-family': 'system-ui, -apple-system, Segoe UI, sans-serif', 'font-size': 13, role: 'list',
    'aria-label': label,
  });
  root.append(svg('rect', { x: 0, y: 0, width, height, fill: '#ffffff' }));
  if (title) root.append(svg('text', { x: 4, y: 18, 'font-weight': 600, fill: '#1b1f24', text: title === true ? 'Next token' : title }));
  if (end) {
    const y = title ? 30 : 4;
    // Three short lines: the panel can be narrow (a phone, the side column).
    root.append(svg('text', { x: 4, y: y + 14, fill: '#1b1f24', text: 'Most likely, the text ends here:' }));
    root.append(svg('text', { class: 'end-of-text', x: 4, y: y + 32, fill: '#1b1f24', 'font-weight': 600, 'data-probability': end.probability,
      text: `${tokenLabel(end.text)} ${percent(end.probability)}` }));
    root.append(svg('text', { x: 4, y: y + 50, fill: '#57606a', 'font-size': 12, text: 'If it goes on, the next token is:' }));
  }
  const top1 = preds[0]?.probability || 1;
  preds.forEach((p, k) => {
    const y = top + k * row;
    const g = svg('g', { class: 'prediction', role: 'listitem', 'data-token-id': p.id, 'data-probability': p.probability,
      'aria-label': `${tokenLabel(p.text)}: ${percent(p.probability)}` });
    g.append(svg('text', { x: labelW - 6, y: y + 15, 'text-anchor': 'end', fill: '#1b1f24', text: `“${tokenLabel(p.text)}”` }));
    g.append(svg('rect', { x: labelW, y: y + 4, width: Math.max(1, (p.probability / top1) * barMax), height: 15, rx: 2, fill: k === 0 ? '#0072B2' : '#6baed6' }));
    g.append(svg('text', { x: labelW + Math.max(1, (p.probability / top1) * barMax) + 6, y: y + 16, fill: '#57606a', 'font-size': 12, text: percent(p.probability) }));
    root.append(g);
  });
  container.replaceChildren(root);
  return { svg: root };
}
