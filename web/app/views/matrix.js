// One labelled matrix in HTML: caption with name and shape, row and column labels, brackets,
// tinted cells, optionally editable. update() changes the numbers in place, so an input being
// typed in keeps its focus and caret while everything around it recomputes.
import { el, fmt, numList, tokenLabel } from './dom.js';
import { signedColor, weightColor, textOn, MASKED_FILL } from './colors.js';

/**
 * Text with ^Q, ^K, ^V, ^O, ^T as superscripts and _1, _k, _h as subscripts (text nodes only; the
 * short lists keep words like c_proj and d_model as they are).
 */
export function mathName(name) {
  const out = el('span', { class: 'mx-name' });
  const re = /\^([QKVOT])|_(\d+|k|h)(?![A-Za-z])/g;
  let at = 0, m;
  while ((m = re.exec(name))) {
    out.append(name.slice(at, m.index), m[1] ? el('sup', { text: m[1] }) : el('sub', { text: m[2] }));
    at = m.index + m[0].length;
  }
  out.append(name.slice(at));
  return out;
}

/** What an editable cell accepts: a finite number (a typographic minus is fine). */
export function validNumber(text) {
  const t = String(text).trim().replace(/\u2212/g, '-');
  return t !== '' && Number.isFinite(Number(t));
}

export class MatrixView {
  /** term: see steps_model.js; ctx: { decimals, onEdit(key, index, text), onRow(i) } */
  constructor(term, ctx) {
    this.term = term;
    this.ctx = ctx;
    const { rows, cols, key } = term;
    const sums = term.rowSums ? 1 : 0;
    this.cells = [];
    this.rowHeads = [];
    const grid = el('div', { class: 'mx-grid', style: `grid-template-columns: auto repeat(${cols}, auto)${sums ? ' auto' : ''}` });
    grid.append(el('span', { class: 'mx-corner' }));
    for (let c = 0; c < cols; c++) grid.append(el('span', { class: 'mx-col', text: tokenLabel(term.colLabels[c] ?? String(c + 1)) }));
    if (sums) grid.append(el('span', { class: 'mx-col mx-sum', text: 'Σ' }));
    for (let r = 0; r < rows; r++) {
      const head = el('span', { class: 'mx-row', 'data-row': r, text: tokenLabel(term.rowLabels[r] ?? String(r + 1)) });
      if (ctx.onRow && term.highlightRow !== undefined && !term.partial) {
        head.classList.add('mx-row-pick');
        head.setAttribute('title', 'Show the steps for this query token');
        head.addEventListener('click', () => ctx.onRow(r));
      }
      this.rowHeads.push(head);
      grid.append(head);
      for (let c = 0; c < cols; c++) {
        const i = r * cols + c;
        let cell;
        if (term.editable) {
          cell = el('span', { class: 'mx-c mx-edit' }, el('input', {
            class: 'mx-in', type: 'text', inputmode: 'decimal', spellcheck: 'false', autocomplete: 'off', size: 6,
            'aria-label': `${term.name} row ${r + 1}, column ${c + 1}`, 'data-edit': term.editable, 'data-index': i,
            oninput: (e) => {
              e.target.setAttribute('aria-invalid', validNumber(e.target.value) ? 'false' : 'true');
              ctx.onEdit?.(term.editable, i, e.target.value);
            },
          }));
        } else cell = el('span', { class: 'mx-c' });
        this.cells.push(cell);
        grid.append(cell);
      }
      if (sums) {
        const s = el('span', { class: 'mx-c mx-sum' });
        this.cells.push(s);
        grid.append(s);
      }
    }
    grid.append(el('span', { class: 'mx-bracket', 'aria-hidden': 'true', style: `grid-column: 2 / span ${cols}; grid-row: 2 / span ${rows}` }));
    this.el = el('figure', { class: `mx${term.compact ? ' mx-compact' : ''}`, 'data-step': key, 'data-shape': `${rows}x${cols}` },
      el('figcaption', {}, mathName(term.name), ' ', el('span', { class: 'mx-shape', text: term.partial ?? `${rows} × ${cols}` })),
      el('div', { class: 'mx-scroll' }, grid));
    this.update(term);
  }

  update(term) {
    this.term = term;
    const { rows, cols, values } = term;
    const { decimals } = this.ctx;
    const sums = term.rowSums ? 1 : 0;
    let maxAbs = 0;
    for (const v of values) if (Number.isFinite(v)) maxAbs = Math.max(maxAbs, Math.abs(v));
    this.el.dataset.values = numList(values);
    for (let r = 0; r < rows; r++) {
      const row = values.slice ? values.slice(r * cols, (r + 1) * cols) : Array.from(values).slice(r * cols, (r + 1) * cols);
      const head = this.rowHeads[r];
      head.dataset.values = numList(row);
      head.classList.toggle('mx-hl', r === term.highlightRow);
      let sum = 0;
      for (let c = 0; c < cols; c++) {
        const v = values[r * cols + c];
        sum += Number.isFinite(v) ? v : 0;
        const cell = this.cells[r * (cols + sums) + c];
        const inBlock = term.highlightCols && c >= term.highlightCols[0] && c < term.highlightCols[1];
        cell.classList.toggle('mx-hl', r === term.highlightRow);
        cell.classList.toggle('mx-hc', !!inBlock);
        if (term.editable) {
          const input = cell.firstChild;
          // Never rewrite what the user is typing; otherwise show the current value.
          if (input !== input.getRootNode().activeElement && (!validNumber(input.value) || Number(input.value) !== v)) input.value = String(v);
          input.setAttribute('aria-invalid', validNumber(input.value) ? 'false' : 'true');
          continue;
        }
        cell.textContent = fmt(v, term.integer ? 0 : decimals);
        cell.title = Number.isFinite(v) ? String(v) : (v < 0 ? '−∞ (masked)' : String(v));
        let bg = '', fg = '';
        if (v === -Infinity) { bg = MASKED_FILL; fg = '#57606a'; } else if (term.probability) { bg = weightColor(v); fg = textOn(v); } else if (term.signed) bg = signedColor(v, maxAbs);
        cell.style.background = bg;
        cell.style.color = fg;
      }
      if (sums) {
        const s = this.cells[r * (cols + 1) + cols];
        s.textContent = fmt(sum, decimals);
        s.title = String(sum);
        s.classList.toggle('mx-hl', r === term.highlightRow);
      }
    }
  }
}

/** A shape-only placeholder for matrices too large to print (the model's weight slices). */
export function shapeBox(term) {
  return el('figure', { class: 'mx mx-shape-only', 'data-step': term.key, 'data-shape': `${term.rows}x${term.cols}` },
    el('figcaption', {}, mathName(term.name), ' ', el('span', { class: 'mx-shape', text: `${term.rows} × ${term.cols}` })),
    el('div', { class: 'mx-placeholder', style: `aspect-ratio: ${Math.max(1, Math.min(2.2, term.cols / term.rows)).toFixed(2)}` },
      el('span', {}, mathName(term.note ?? 'not printed'))));
}
