// One labelled matrix in HTML: caption with name and shape, row and column labels, brackets,
// tinted cells, optionally editable. update() changes the numbers in place, so an input being
// typed in keeps its focus and caret while everything around it recomputes.
import { el, fmt, numList, tokenLabel } from './dom.js';
import { signedColor, weightColor, textOn, MASKED_FILL } from './colors.js';
import { textWidth } from './measure.js';

/**
 * Text with ^Q, ^K, ^V, ^O, ^T as superscripts and _1, _k, _h as subscripts (text nodes only; the
 * short lists keep words like c_proj and d_model as they are, and a GGUF type name such as Q5_0 or
 * Q8_0, a capital and a digit before the underscore, too).
 */
export function mathName(name) {
  const out = el('span', { class: 'mx-name' });
  const re = /\^([QKVOT])|(?<![A-Z]\d)_(\d+|k|h)(?![a-z])/g;
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

/**
 * The columns to draw: every one, or (maxCols set, more columns than that, and the reader has not
 * asked for all) a window: the first ones, or column 0 and the columns up to a little past
 * focusCol (the query's own key: what it attends to most often sits just before it). Numbers are
 * column indices; { gap: k } stands for k columns left out.
 */
export function shownColumns(cols, maxCols, focusCol, focusAfter = 2, all = false) {
  const every = Array.from({ length: cols }, (_, c) => c);
  if (all || !maxCols || cols <= maxCols + 1) return every;
  if (focusCol === undefined || focusCol < maxCols - 2) {
    const end = focusCol === undefined ? maxCols - 1 : Math.max(maxCols - 1, Math.min(cols - 1, focusCol + focusAfter));
    return [...every.slice(0, Math.min(end, maxCols - 1) + 1), ...(cols - 1 > Math.min(end, maxCols - 1) ? [{ gap: cols - 1 - Math.min(end, maxCols - 1) }] : [])];
  }
  const end = Math.min(cols - 1, focusCol + focusAfter);
  const start = end - (maxCols - 2);
  const tail = end < cols - 1 ? [{ gap: cols - 1 - end }] : [];
  if (start <= 2) return [...every.slice(0, end + 1), ...tail]; // a gap of one column hides nothing worth a gap
  return [0, { gap: start - 1 }, ...every.slice(start, end + 1), ...tail];
}

export class MatrixView {
  /**
   * term: see steps_model.js, and: rowIndex (the token index of each row, for data-row); maxRows
   * (rows open at first, the rest behind a button); maxCols, focusCol, focusAfter (the column window,
   * see shownColumns; "…" opens every column of every matrix); maskedFrom (the masked scores: masked
   * weights read 0, greyed).
   * ctx: { decimals, onEdit(key, index, text), onRow(i), expanded: Set of matrix keys opened in full
   * ('columns': every column), onColumns(): the reader asked for every column }
   */
  constructor(term, ctx) {
    this.term = term;
    this.ctx = ctx;
    const { rows, cols, key } = term;
    this.scroll = el('div', { class: 'mx-scroll' });
    this.more = null;
    if (term.maxRows && rows > term.maxRows) {
      this.more = el('button', { type: 'button', class: 'mx-more', onclick: () => this.toggleRows() });
    }
    this.el = el('figure', { class: `mx${term.compact ? ' mx-compact' : ''}`, 'data-step': key, 'data-shape': `${rows}x${cols}` },
      el('figcaption', {}, mathName(term.name), ' ', el('span', { class: 'mx-shape', text: term.partial ?? `${rows} × ${cols}` })),
      this.scroll, this.more);
    this.build();
    this.update(term);
  }

  /** Rows drawn: all, or the first maxRows until the reader asks for the rest. */
  get shownRows() {
    const { rows, maxRows, key } = this.term;
    return maxRows && rows > maxRows && !this.ctx.expanded?.has(key) ? maxRows : rows;
  }

  toggleRows() {
    const { key } = this.term;
    this.ctx.expanded ??= new Set();
    if (this.ctx.expanded.has(key)) this.ctx.expanded.delete(key); else this.ctx.expanded.add(key);
    this.build();
    this.update(this.term);
  }

  build() {
    const { term, ctx } = this;
    const { cols } = term;
    const rows = this.shownRows;
    const sums = term.rowSums ? 1 : 0;
    this.columns = shownColumns(cols, term.maxCols, term.focusCol, term.focusAfter, !!ctx.expanded?.has('columns'));
    this.drawn = this.columns.filter((c) => typeof c === 'number');
    const width = this.drawn.length + sums;
    this.cells = [];
    this.rowHeads = [];
    const grid = el('div', { class: 'mx-grid' });
    this.grid = grid;
    this.template = null;
    const colLabel = (c) => tokenLabel(term.colLabels[c] ?? String(c + 1));
    // The widest column label (tokens, in the labels' 11px font), for the fixed column width below.
    this.labelWidth = 0;
    for (const c of this.drawn) this.labelWidth = Math.max(this.labelWidth, textWidth(colLabel(c), 11));
    grid.append(el('span', { class: 'mx-corner' }));
    for (const c of this.columns) {
      if (typeof c === 'number') grid.append(el('span', { class: 'mx-col', text: colLabel(c) }));
      else {
        grid.append(el('button', { type: 'button', class: 'mx-col mx-gap-open', title: `${c.gap} columns left out here: show every column`,
          'aria-label': `show ${c.gap} more columns`, text: `+${c.gap}`, onclick: () => ctx.onColumns?.() }));
      }
    }
    if (sums) grid.append(el('span', { class: 'mx-col mx-sum', text: 'Σ' }));
    for (let r = 0; r < rows; r++) {
      const head = el('span', { class: 'mx-row', 'data-row': term.rowIndex?.[r] ?? r, text: tokenLabel(term.rowLabels[r] ?? String(r + 1)) });
      if (ctx.onRow && term.highlightRow !== undefined && !term.partial) {
        head.classList.add('mx-row-pick');
        head.setAttribute('title', 'Show the steps for this query token');
        head.addEventListener('click', () => ctx.onRow(r));
      }
      this.rowHeads.push(head);
      grid.append(head);
      for (const c of this.columns) {
        if (typeof c !== 'number') {
          grid.append(el('span', { class: 'mx-gap', 'aria-hidden': 'true', text: '…' }));
          continue;
        }
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
        } else cell = document.createElement('span');
        this.cells.push(cell);
        grid.append(cell);
      }
      if (sums) {
        const s = el('span', { class: 'mx-c mx-sum' });
        this.cells.push(s);
        grid.append(s);
      }
    }
    this.rowWidth = width;
    grid.append(el('span', { class: 'mx-bracket', 'aria-hidden': 'true', style: `grid-column: 2 / span ${this.columns.length}; grid-row: 2 / span ${rows}` }));
    if (term.editable) grid.style.gridTemplateColumns = `auto repeat(${this.columns.length}, auto)${sums ? ' auto' : ''}`;
    this.scroll.replaceChildren(grid);
    if (this.more) {
      const hidden = term.rows - rows;
      this.more.textContent = hidden > 0 ? `… ${hidden} more rows: show all ${term.rows}` : `show the first ${term.maxRows} rows only`;
      this.more.setAttribute('aria-expanded', hidden > 0 ? 'false' : 'true');
    }
  }

  update(term) {
    this.term = term;
    const { cols, values, maskedFrom } = term;
    const rows = this.shownRows;
    const { decimals } = this.ctx;
    const sums = term.rowSums ? 1 : 0;
    const drawn = this.drawn;
    let maxAbs = 0;
    for (const v of values) if (Number.isFinite(v)) maxAbs = Math.max(maxAbs, Math.abs(v));
    const digits = term.integer ? 0 : decimals;
    const texts = term.editable ? null : new Array(rows * drawn.length);
    if (texts) {
      // Every column as wide as the widest number (monospace: a width in ch) or label: fixed tracks
      // spare the browser sizing each column from its content.
      let chars = 1;
      for (let r = 0, k = 0; r < rows; r++) {
        for (const c of drawn) {
          const t = fmt(values[r * cols + c], digits);
          texts[k++] = t;
          if (t.length > chars) chars = t.length;
        }
      }
      if (sums) chars = Math.max(chars, 2 + decimals);
      const pad = term.compact ? 8 : 12;
      const track = `max(${chars + 0.5}ch + ${pad}px, ${Math.ceil(this.labelWidth + 6)}px)`;
      const template = `auto ${this.columns.map((c) => (typeof c === 'number' ? track : '3.4em')).join(' ')}${sums ? ` ${track}` : ''}`;
      if (template !== this.template) {
        this.grid.style.gridTemplateColumns = template;
        this.template = template;
      }
    }
    for (let r = 0; r < rows; r++) {
      const head = this.rowHeads[r];
      // The whole row, drawn or not: what tests and scripts read back.
      head.dataset.values = numList(values.subarray ? values.subarray(r * cols, (r + 1) * cols) : values.slice(r * cols, (r + 1) * cols));
      head.classList.toggle('mx-hl', r === term.highlightRow);
      let sum = 0;
      for (let c = 0; c < cols; c++) {
        const v = values[r * cols + c];
        sum += Number.isFinite(v) ? v : 0;
      }
      drawn.forEach((c, k) => {
        const v = values[r * cols + c];
        const cell = this.cells[r * this.rowWidth + k];
        const inBlock = term.highlightCols && c >= term.highlightCols[0] && c < term.highlightCols[1];
        if (term.editable) {
          cell.classList.toggle('mx-hl', r === term.highlightRow);
          cell.classList.toggle('mx-hc', !!inBlock);
          const input = cell.firstChild;
          // Never rewrite what the user is typing; otherwise show the current value.
          if (input !== input.getRootNode().activeElement && (!validNumber(input.value) || Number(input.value) !== v)) input.value = String(v);
          input.setAttribute('aria-invalid', validNumber(input.value) ? 'false' : 'true');
          return;
        }
        // One className write per cell (not several classList toggles): "every row" draws thousands.
        const hiddenKey = maskedFrom && maskedFrom[r * cols + c] === -Infinity; // a masked key's weight: 0, greyed
        cell.className = `mx-c${r === term.highlightRow ? ' mx-hl' : ''}${inBlock ? ' mx-hc' : ''}${hiddenKey ? ' mx-masked' : ''}`;
        cell.textContent = texts[r * drawn.length + k];
        // No title with the exact value (a string per cell): the row's data-values holds them.
        cell.title = hiddenKey ? 'weight 0: this key is masked (its score is −∞)' : v === -Infinity ? '−∞: masked' : '';
        let bg = '', fg = '';
        if (v === -Infinity || hiddenKey) { bg = MASKED_FILL; fg = '#57606a'; } else if (term.probability) { bg = weightColor(v); fg = textOn(v); } else if (term.signed) bg = signedColor(v, maxAbs);
        cell.style.background = bg;
        cell.style.color = fg;
      });
      if (sums) {
        const s = this.cells[r * this.rowWidth + drawn.length];
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
