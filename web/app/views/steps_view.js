// The math, step by step, as HTML. Rebuilds the DOM only when the structure changes (tokens,
// shapes, which matrices); otherwise updates the numbers in place, which keeps a weight cell the
// user is editing focused while the rest recomputes.
import { el, fmt, tokenLabel } from './dom.js';
import { MatrixView, shapeBox, mathName } from './matrix.js';

export class StepsView {
  /** on: { edit(key, index, text), selectQuery(i) } */
  constructor(container, on = {}) {
    this.container = container;
    this.on = on;
    this.signature = null;
    this.matrices = new Map();
    this.details = new Map();
  }

  render(steps, { decimals = 4 } = {}) {
    const signature = JSON.stringify([decimals, steps.map((s) => [s.id, s.title, allTerms(s).map((t) =>
      [t.kind, t.key, t.name, t.rows, t.cols, t.editable, t.rowLabels, t.colLabels, t.partial, t.text])])]);
    if (signature !== this.signature) {
      this.build(steps, decimals);
      this.signature = signature;
    } else {
      for (const s of steps) {
        for (const t of allTerms(s)) if (t.kind === 'matrix') this.matrices.get(t.key)?.update(t);
        // Same structure, new numbers: the words (they name the layer) and the self-check follow.
        const section = this.container.querySelector(`[data-step-id="${s.id}"]`);
        const explain = section?.querySelector('.step-explain');
        if (explain && s.explain) explain.replaceChildren(mathName(s.explain));
        if (section && s.check != null) section.dataset.check = s.check;
        const d = this.details.get(s.id);
        if (d) d.replaceChildren(...detailNodes(s.detail, decimals));
      }
    }
  }

  build(steps, decimals) {
    this.matrices.clear();
    this.details.clear();
    const ctx = { decimals, onEdit: this.on.edit, onRow: this.on.selectQuery };
    const term = (t) => {
      if (t.kind === 'op') return el('span', { class: 'op', 'aria-hidden': t.text.trim() === '' ? 'true' : null }, mathName(t.text));
      if (t.kind === 'shape') return shapeBox(t);
      const view = new MatrixView(t, ctx);
      this.matrices.set(t.key, view);
      return view.el;
    };
    const sections = steps.map((s, index) => {
      const section = el('section', { class: 'step', 'data-step-id': s.id, ...(s.check != null ? { 'data-check': s.check } : {}) },
        el('h3', {}, el('span', { class: 'step-num', text: `${index + 1}` }), ' ', mathName(s.title)),
        s.explain ? el('p', { class: 'step-explain' }, mathName(s.explain)) : null);
      if (s.terms?.length) section.append(el('div', { class: 'eq' }, s.terms.map(term)));
      for (const g of s.groups ?? []) section.append(el('div', { class: 'eq' }, g.map(term)));
      if (s.detail) {
        const d = el('div', { class: 'step-detail' }, detailNodes(s.detail, decimals));
        this.details.set(s.id, d);
        section.append(d);
      }
      return section;
    });
    this.container.replaceChildren(...sections);
  }
}

function allTerms(step) {
  return [...(step.terms ?? []), ...(step.groups ?? []).flat()];
}

/** The written-out arithmetic for the chosen query: dot products, or the softmax of its row. */
function detailNodes(detail, decimals) {
  if (!detail) return [];
  const f = (x) => fmt(x, decimals);
  const paren = (x) => (x < 0 ? `(${f(x)})` : f(x));
  return detail.map((d) => {
    if (d.kind === 'note') return el('p', { text: d.text });
    if (d.kind === 'dot') {
      const sum = d.parts.map((p) => `${paren(p.a)} × ${paren(p.b)}`).join(' + ');
      return el('p', { class: 'dot-line' }, el('span', { class: 'dot-lhs', text: `q“${tokenLabel(d.query)}” · k“${tokenLabel(d.key)}”` }),
        ` = ${sum} = `, el('strong', { text: f(d.result) }));
    }
    // Softmax of one row as a small table: score, minus the row max, exponent, share.
    const rows = d.keys.map((k, j) => el('tr', {},
      el('th', { scope: 'row', text: tokenLabel(k) }),
      el('td', { text: f(d.scores[j]) }),
      el('td', { text: Number.isFinite(d.scores[j]) ? f(d.scores[j] - d.max) : '−∞' }),
      el('td', { text: d.exps[j].toFixed(decimals + 1) }),
      el('td', {}, el('strong', { text: d.weights[j].toFixed(decimals + 1) }))));
    return el('div', { class: 'softmax-detail' },
      el('p', { text: `Softmax of the row for “${tokenLabel(d.query)}”: subtract the row maximum (${f(d.max)}), exponentiate, divide by the sum (${d.sum.toFixed(decimals + 1)}).` }),
      el('div', { class: 'mx-scroll' }, el('table', { class: 'softmax-table' },
        el('thead', {}, el('tr', {}, el('th', { text: 'key' }), el('th', { text: 's' }), el('th', { text: 's − max' }),
          el('th', { text: 'e^(s − max)' }), el('th', { text: '÷ Σ = weight' }))),
        el('tbody', {}, rows))));
  });
}
