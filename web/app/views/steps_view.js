// The math, step by step, as HTML. Rebuilds the DOM only when the structure changes (tokens,
// shapes, which matrices); otherwise updates the numbers in place, which keeps a weight cell the
// user is editing focused while the rest recomputes.
import { el, fmt, tokenLabel } from './dom.js';
import { MatrixView, shapeBox, mathName } from './matrix.js';
import { renderWholeMatrix } from './whole_matrix.js';
import { renderNeuron } from './neuron_view.js';

// The softmax table opens on the keys with the largest weights when there are more than this.
const TABLE_ROWS = 16, TABLE_PREVIEW = 8;
// A trained model's weight matrices are folded until the reader opens them: the step is about
// Q, K and V, and the printed weights are most of its height.
const FOLDED = new Set(['wQ', 'wK', 'wV', 'wO']);
// The step bar's short names (a step without one shows its number alone).
const SHORT = { input: 'X', qkv: 'Q K V', rotary: 'rotate', rawScores: 'QKᵀ', scaledScores: '÷ √d', maskedScores: 'mask', weights: 'softmax',
  z: '× V', concat: 'concat', output: '× Wᴼ', residual: '+', blockNorm: 'norm', mlp: 'MLP', blockOut: 'out' };

export class StepsView {
  /** on: { edit(key, index, text), selectQuery(i), showRows(all), picker: draw a query picker of its own
   * (the widget: a page has its own above) } */
  constructor(container, on = {}) {
    this.container = container;
    this.on = on;
    this.signature = null;
    this.matrices = new Map();
    this.details = new Map();
    this.wholes = new Map();
    // Matrices and tables the reader opened in full ("… 120 more rows"): kept across redraws.
    this.expanded = new Set();
  }

  /**
   * rows: null (no choice: the tutorial's example shows every row), or { all, query, tokens, index }
   * for the model: every row, or only the row of the query token (its label, its index in tokens)
   * carried through the steps.
   */
  render(steps, { decimals = 4, rows = null } = {}) {
    this.options = { decimals, rows };
    const signature = JSON.stringify([decimals, !!rows, this.expanded.has('columns'), steps.map((s) => [s.id, s.title, allTerms(s).map((t) =>
      [t.kind, t.key, t.name, t.rows, t.cols, t.editable, t.rowLabels, t.colLabels, t.partial, t.text])])]);
    if (signature !== this.signature) {
      this.build(steps, decimals, !!rows);
      this.signature = signature;
    } else {
      for (const s of steps) {
        for (const t of allTerms(s)) if (t.kind === 'matrix') this.matrices.get(t.key)?.update(t);
        // Same structure, new numbers: the words (they name the layer) and the self-check follow.
        const section = this.container.querySelector(`[data-step-id="${s.id}"]`);
        const explain = section?.querySelector('.step-explain');
        if (explain && s.explain) explain.replaceChildren(mathName(s.explain));
        if (section && s.check != null) section.dataset.check = s.check;
      }
    }
    this.steps = steps;
    this.decimals = decimals;
    this.drawDetails();
    this.drawWholes();
    if (rows) {
      this.rowsBox.checked = !!rows.all;
      this.rowsNote.textContent = rows.all
        ? `Every query token’s row; the row of “${tokenLabel(rows.query)}” is highlighted.`
        : `Following the row of “${tokenLabel(rows.query)}”: ${this.on.picker ? 'pick another token here,' : 'pick another token above, or'}`;
      if (this.picker) {
        // Tokens counted from 1, as everywhere on the page.
        this.picker.replaceChildren(...(rows.tokens ?? []).map((t, i) => el('option', { value: i, text: `${i + 1}: ${tokenLabel(t)}` })));
        this.picker.value = String(rows.index ?? 0);
        this.picker.hidden = !!rows.all;
      }
    }
    this.container.dataset.rows = rows ? (rows.all ? 'all' : 'query') : 'all';
  }

  build(steps, decimals, rowsChoice) {
    this.matrices.clear();
    this.details.clear();
    this.wholes.clear();
    const ctx = { decimals, onEdit: this.on.edit, onRow: this.on.selectQuery, expanded: this.expanded, onColumns: () => this.showColumns(true) };
    const term = (t) => {
      if (t.kind === 'op') return el('span', { class: 'op', 'aria-hidden': t.text.trim() === '' ? 'true' : null }, mathName(t.text));
      if (t.kind === 'shape') return shapeBox(t);
      const view = new MatrixView(t, ctx);
      this.matrices.set(t.key, view);
      return rowsChoice && FOLDED.has(t.key) ? this.folded(t, view.el) : view.el;
    };
    const sections = steps.map((s, index) => {
      const section = el('section', { class: 'step', 'data-step-id': s.id, ...(s.check != null ? { 'data-check': s.check } : {}) },
        el('h3', {}, el('span', { class: 'step-num', text: `${index + 1}` }), ' ', mathName(s.title)),
        s.explain ? el('p', { class: 'step-explain' }, mathName(s.explain)) : null);
      // The whole S x S matrix first: the picture is what the step shows, the tables its numbers.
      if (s.whole) {
        const box = el('div', { class: 'whole-wrap' });
        this.wholes.set(s.id, box);
        section.append(box);
      }
      if (s.terms?.length) section.append(el('div', { class: 'eq' }, s.terms.map(term)));
      for (const g of s.groups ?? []) section.append(el('div', { class: 'eq' }, g.map(term)));
      if (s.detail) {
        const d = el('div', { class: 'step-detail' });
        this.details.set(s.id, d);
        section.append(d);
      }
      return section;
    });
    const bar = [];
    if (rowsChoice) {
      this.rowsBox = el('input', { type: 'checkbox', id: 'steps-all-rows', onchange: (e) => this.on.showRows?.(e.target.checked) });
      this.rowsNote = el('span', {});
      this.picker = this.on.picker ? el('select', { class: 'steps-query', 'aria-label': 'Query token to follow', onchange: (e) => this.on.selectQuery?.(Number(e.target.value)) }) : null;
      const fewer = this.expanded.has('columns')
        ? [' · ', el('button', { type: 'button', class: 'mx-more', text: 'fewer columns', onclick: () => this.showColumns(false) })] : [];
      bar.push(el('p', { class: 'steps-rows' }, this.rowsNote, ' ', this.picker, this.picker ? ' or ' : null,
        el('label', { class: 'steps-rows-toggle' }, this.rowsBox, ' show every row'), ...fewer));
    }
    this.container.replaceChildren(stepBar(steps, (id) => this.openOn(id)), ...bar, ...sections);
    showMaskedKeys(this.container);
  }

  /** A weight matrix inside a fold, its name and shape on the closed fold (the equation keeps its place). */
  folded(t, node) {
    const key = `fold:${t.key}`;
    const fold = el('details', { class: 'mx-fold', 'data-fold': t.key, ...(this.expanded.has(key) ? { open: true } : {}),
      ontoggle: (e) => { if (e.target.open) this.expanded.add(key); else this.expanded.delete(key); } },
    el('summary', {}, mathName(t.name), ' ', el('span', { class: 'mx-shape', text: `${t.rows} × ${t.cols} · show the numbers` })), node);
    return fold;
  }

  /** Scrolls step `id` to the top of the screen, under the step bar. */
  openOn(id) {
    const section = this.container.querySelector(`[data-step-id="${id}"]`);
    // The step's title just under the bar, however many rows the bar wraps to (three on a phone).
    const bar = this.container.querySelector('.steps-bar');
    if (section && bar) section.style.scrollMarginTop = `${bar.offsetHeight + 8}px`;
    section?.scrollIntoView({ block: 'start' });
  }

  /** The whole matrices (masked scores, weights), drawn again on every render at the pane's width,
   * in the frame after the tables: the step's numbers come first, the pictures (up to two of
   * 128 x 128 cells) right after, so opening the view waits for neither. */
  drawWholes() {
    cancelAnimationFrame(this.wholeFrame ?? 0);
    this.wholeFrame = requestAnimationFrame(() => {
      for (const s of this.steps) {
        const box = this.wholes.get(s.id);
        if (box?.isConnected && s.whole) renderWholeMatrix(box, s.whole, this.decimals);
      }
    });
  }

  /** Every column of every matrix (the reader clicked a "+112"), or the windows again. */
  showColumns(all) {
    if (all) this.expanded.add('columns'); else this.expanded.delete('columns');
    this.render(this.steps, this.options);
  }

  /** The written-out arithmetic (dot products, the softmax table), drawn again on every render. */
  drawDetails() {
    for (const s of this.steps) {
      const d = this.details.get(s.id);
      if (d) d.replaceChildren(...detailNodes(s.detail, this.decimals, this.expanded, this, () => this.drawDetails()));
    }
  }
}

/** A row wider than its box (a phone) starts scrolled so its first masked key (−∞, or weight 0 on
 * grey) is in view: the mask is what the step teaches, and it sits at the row's right end. The
 * scroll stops at a cell's edge, right of the pinned row label: no cell shows half under it. */
function showMaskedKeys(container) {
  for (const box of container.querySelectorAll('.mx-scroll')) {
    if (box.scrollWidth <= box.clientWidth) continue;
    const cells = [...box.querySelectorAll('.mx-c')];
    const masked = cells.findIndex((c) => c.classList.contains('mx-masked') || c.textContent.includes('−∞'));
    const label = box.querySelector('.mx-row');
    if (masked < 0 || !label) continue;
    const b = box.getBoundingClientRect(), target = cells[masked].getBoundingClientRect();
    if (target.right <= b.right) continue;
    // The first cell of the row that leaves the masked one at 60 % of the box's width.
    const want = target.left - b.width * 0.6, row = cells.slice(0, masked + 1);
    const first = row.find((c) => c.getBoundingClientRect().left >= want) ?? cells[masked];
    box.scrollLeft += first.getBoundingClientRect().left - label.getBoundingClientRect().right;
  }
}

/** The sticky bar of steps: one button per step, jumping to it. */
function stepBar(steps, open) {
  return el('nav', { class: 'steps-bar', 'aria-label': 'Steps' }, steps.map((s, i) => el('button', {
    type: 'button', 'data-step-link': s.id, title: s.title, onclick: () => open(s.id),
  }, el('span', { class: 'step-num', text: String(i + 1) }), SHORT[s.id] ? ` ${SHORT[s.id]}` : '')));
}

function allTerms(step) {
  return [...(step.terms ?? []), ...(step.groups ?? []).flat()];
}

/** The written-out arithmetic for the chosen query: the neuron view of a score, or the softmax of
 * its row. state: what the reader picked in them (the view), kept across redraws. */
function detailNodes(detail, decimals, expanded, state, redraw) {
  if (!detail) return [];
  return detail.flatMap((d) => {
    // (check: a worked entry's distance from the library's number, for tests)
    if (d.kind === 'note') return el('p', { class: 'step-note', 'data-check': d.check ?? null }, mathName(d.text));
    if (d.kind === 'node') return d.render(decimals); // a step's own drawing (views/rotary_detail.js)
    if (d.kind === 'neuron') return renderNeuron(d, decimals, state, redraw);
    return softmaxTable(d, decimals, expanded, redraw);
  });
}

/**
 * Softmax of one row as a table: score, minus the row max, exponent, share. Many keys: the ones
 * with the largest weights first (in sentence order), the rest behind a button. The key column and
 * the answer column stay in sight while a narrow screen scrolls the table sideways.
 */
function softmaxTable(d, decimals, expanded, redraw) {
  const f = (x) => fmt(x, decimals);
  const m = d.keys.length;
  const open = m <= TABLE_ROWS || expanded.has('softmax');
  let shown = d.keys.map((_, j) => j);
  if (!open) {
    const top = new Set(shown.slice().sort((a, b) => d.weights[b] - d.weights[a]).slice(0, TABLE_PREVIEW));
    shown = shown.filter((j) => top.has(j));
  }
  const rows = shown.map((j) => {
    const hidden = !Number.isFinite(d.scores[j]);
    return el('tr', { class: hidden ? 'sm-masked' : null, 'data-key': j },
      el('th', { scope: 'row', text: tokenLabel(d.keys[j]) }),
      el('td', { text: f(d.scores[j]) }),
      el('td', { text: hidden ? '−∞' : f(d.scores[j] - d.max) }),
      el('td', { text: d.exps[j].toFixed(decimals + 1) }),
      el('td', { class: 'sm-weight' }, el('strong', { text: d.weights[j].toFixed(decimals + 1) })));
  });
  const toggle = () => {
    if (expanded.has('softmax')) expanded.delete('softmax'); else expanded.add('softmax');
    redraw();
  };
  const more = m > TABLE_ROWS
    ? el('p', {}, el('button', { type: 'button', class: 'mx-more', 'aria-expanded': open ? 'true' : 'false', onclick: toggle,
      text: open ? `show only the ${TABLE_PREVIEW} largest weights` : `… ${m - shown.length} more keys: show all ${m}` }))
    : null;
  return el('div', { class: 'softmax-detail' },
    el('p', { text: `Softmax of the row for “${tokenLabel(d.query)}”: subtract the row maximum (${f(d.max)}), exponentiate, divide by the sum (${d.sum.toFixed(decimals + 1)}).`
      + (open ? '' : ` Shown: the ${TABLE_PREVIEW} keys with the largest weights, in sentence order.`) }),
    el('div', { class: 'mx-scroll' }, el('table', { class: 'softmax-table' },
      el('thead', {}, el('tr', {}, el('th', { text: 'key' }), el('th', { text: 's' }), el('th', { text: 's − max' }),
        el('th', { text: 'e^(s − max)' }), el('th', { class: 'sm-weight', text: '÷ Σ = weight' }))),
      el('tbody', {}, rows))),
    more);
}
