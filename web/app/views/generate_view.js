// The generate view, for every decoder (GPT-2, the Llama family, BART's decoder): the model writes
// tokens one at a time (the library's generate with attention: true, in the worker) and a slider
// scrubs its steps. For the chosen layer and head it draws the row of the token at that step over
// the tokens before it, and the triangle of the steps up to it: all from the attention the decoding
// steps computed (tokenAttention, read from the KV cache). Nothing is run again: not per token, not
// when the slider moves.
//
// The host (the page's render.js, the widget) gives c.generate = { key (what the generation
// belongs to: the model and its text; another key starts afresh), request (the worker's generate
// payload), start(request, onEvent) -> { done, stop } }. The events (models/decoder_text.js,
// models/bart.js): { start: { columns, rowBase, nLayer, nHead, keyTokens?, word? } }, then per
// step { index, label, self: L x H x (rowBase + index), cross?: L x H x keyTokens.length }.
import { el, fmt, numList, tokenLabel } from './dom.js';
import { weightColor, textOn } from './colors.js';
import { renderWholeMatrix } from './whole_matrix.js';

const sessions = new WeakMap(); // target element -> its generation (kept while other views are shown)

/** Draws the view into target; returns { svg: the triangle (the picture to export) or null }. */
export function renderGenerateView(target, c) {
  let s = sessions.get(target);
  if (s && s.key !== c.generate.key) {
    s.handle?.stop();
    s = null;
  }
  if (!s) sessions.set(target, (s = { key: c.generate.key, steps: [], start: null, step: 0, follow: true, runs: 0, handle: null, ended: null }));
  s.c = c;
  if (!s.root?.isConnected || s.root.parentNode !== target) target.replaceChildren(skeleton(s, target));
  draw(s);
  return { svg: s.svg ?? null };
}

/** What target's generation holds, for the JSON export (export_docs.js), or null before one:
 * { request (its settings), start, steps, step (chosen, 0-based), ended, layer, head (as drawn) }. */
export function generationRecord(target) {
  const s = sessions.get(target);
  if (!s?.start || !s.steps.length) return null;
  const { request, start, steps, step, ended } = s, { layer, head } = s.root.dataset;
  return { request, start, steps, step, ended, layer: Number(layer) - 1, head: head === 'all' ? 'all' : Number(head) - 1 };
}

/** Stops target's generation, if one is running (the widget leaving the page). */
export function stopGenerating(target) {
  sessions.get(target)?.handle?.stop();
}

/** The parts that stay while the view redraws (the slider keeps its focus while it is dragged). */
function skeleton(s, target) {
  s.button = el('button', { type: 'button', class: 'gen-start', onclick: () => begin(s, target) });
  s.stop = el('button', { type: 'button', class: 'gen-stop', text: 'Stop', hidden: true, onclick: () => s.handle?.stop() });
  s.status = el('span', { class: 'gen-status', role: 'status' });
  s.slider = el('input', { type: 'range', class: 'gen-slider', min: 1, max: 1, value: 1, step: 1, 'aria-label': 'Step' });
  s.slider.addEventListener('input', () => pickStep(s, Number(s.slider.value) - 1));
  s.stepText = el('output', { class: 'gen-step-text' });
  s.sliderRow = el('label', { class: 'gen-slider-row' }, el('span', { text: 'Step' }), s.slider, s.stepText);
  s.help = el('p', { class: 'help' });
  s.rows = el('div', { class: 'gen-rows' });
  // The triangles' containers stay (whole_matrix.js measures and observes each container's width once).
  s.triangles = Object.fromEntries(['self', 'cross'].map((part) => {
    const title = el('p', { class: 'gen-part-title' }), box = el('div', { class: 'whole-wrap gen-triangle', 'data-part': part });
    // A click on an earlier step's row goes back to that step (rows drawn as cells: up to 1,024 of them).
    box.addEventListener('click', (e) => {
      const picked = e.target.closest?.('.whole-row');
      if (picked) pickStep(s, Number(picked.dataset.row));
    });
    return [part, { title, box, wrap: el('div', {}, title, box) }];
  }));
  s.root = el('div', { class: 'generate-view' }, el('div', { class: 'gen-bar' }, s.button, s.stop, s.status), s.sliderRow,
    s.help, s.rows, s.triangles.self.wrap, s.triangles.cross.wrap);
  return s.root;
}

/** Shows step t (0-based); the newest step keeps following the generation. */
function pickStep(s, t) {
  s.step = t;
  s.follow = t === s.steps.length - 1;
  draw(s);
}

/** Starts a generation (again: a new seed each time) for the host's text. */
function begin(s, target) {
  if (s.handle) return;
  const g = s.c.generate;
  Object.assign(s, { steps: [], start: null, step: 0, follow: true, ended: null, error: null });
  const request = s.request = { ...g.request, seed: (g.request.seed ?? 1) + s.runs++ };
  s.handle = g.start(request, (e) => {
    if (sessions.get(target) !== s) return;
    if (e.start) s.start = e.start;
    else s.steps.push(e);
    if (s.follow) s.step = s.steps.length - 1;
    draw(s);
  });
  s.handle.done.then((r) => { s.ended = r?.finishReason ?? 'length'; }, (e) => { s.error = e.message; })
    .finally(() => { s.handle = null; if (sessions.get(target) === s) draw(s); });
  draw(s);
}

/** Redraws the controls, then the chosen step (or, before any, what to do). */
function draw(s) {
  const bart = s.c.info?.type === 'bart', T = s.steps.length;
  drawControls(s, bart, T);
  s.svg = null;
  const drawn = !!(s.start && T);
  s.help.hidden = drawn;
  s.rows.hidden = !drawn;
  s.triangles.self.wrap.hidden = !drawn;
  s.triangles.cross.wrap.hidden = !drawn || !bart;
  if (drawn) return drawStep(s, bart, T);
  s.help.textContent = bart
    ? 'Press the button: the decoder writes the word’s sounds one phoneme at a time; then move the slider over its steps.'
    : `Press Generate: the model writes up to ${s.c.generate.request.maxNewTokens} tokens after your text, one at a time, each step reading only the tokens before it. Then move the slider over the steps to see what each new token attended to.`;
}

/** The button, the status and the slider. */
function drawControls(s, bart, T) {
  s.button.textContent = bart ? 'Pronounce ▸' : T ? 'Generate again ▸' : 'Generate ▸';
  s.button.hidden = !!s.handle;
  s.stop.hidden = !s.handle || bart;
  s.status.textContent = s.error ? `Could not generate: ${s.error}` : s.handle ? `writing… ${T} token${T === 1 ? '' : 's'}`
    : s.ended ? `${T} steps${bart ? '' : ` (${sampling(s.request)})`}${s.ended === 'eos' ? ': the model ended the text' : ''}.` : '';
  s.status.classList.toggle('error', !!s.error);
  s.sliderRow.hidden = T === 0;
  s.slider.max = String(Math.max(1, T));
  s.slider.value = String(s.step + 1);
  s.stepText.textContent = `${s.step + 1} of ${T}`;
  Object.assign(s.root.dataset, { steps: String(T), step: String(s.step + 1), generating: s.handle ? '1' : '0', runs: String(s.runs) });
}

/** How a decoder's generation sampled, in words. */
function sampling({ temperature = 0.8, topK = 40, seed }) {
  return temperature === 0 ? 'greedy: the most likely token each time' : `temperature ${temperature}, top-k ${topK || 'all'}, seed ${seed}`;
}

/** The chosen step: its caption, its row (and BART's cross-attention row), the triangles so far. */
function drawStep(s, bart, T) {
  const { c, start, steps } = s;
  const layer = Math.min(start.nLayer - 1, c.sel.layer), head = c.sel.head === 'all' ? 'all' : Math.min(start.nHead - 1, c.sel.head);
  // (data-token: the id written at the step, for scripts and tests; an encoder-decoder's steps carry none)
  Object.assign(s.root.dataset, { layer: String(layer + 1), head: head === 'all' ? 'all' : String(head + 1), token: String(steps[s.step].token ?? '') });
  const t = s.step, who = `layer ${layer + 1} · ${head === 'all' ? 'all heads (their mean)' : `head ${head + 1}`}`;
  s.slider.setAttribute('aria-valuetext', `step ${t + 1} of ${T}: ${tokenLabel(steps[t].label)}`); // (what a screen reader says)
  const columns = [...start.columns, ...steps.map((x) => x.label)];
  const n = start.rowBase + t; // the step's row: its query is column n - 1
  const parts = [el('p', { class: 'gen-caption', text: bart
    ? `Step ${t + 1}: reading “${tokenLabel(columns[n - 1])}”, the decoder writes “${tokenLabel(steps[t].label)}” · ${who}`
    : `Step ${t + 1}: “${tokenLabel(steps[t].label)}” (token ${n}) attends to the ${n - 1} tokens before it and to itself · ${who}` })];
  parts.push(...rowParts('self', row(steps[t].self, start, layer, head, n), columns, n - 1, bart ? 'Self-attention over ▶ and the phonemes written before:' : null));
  if (bart) parts.push(...rowParts('cross', row(steps[t].cross, start, layer, head, start.keyTokens.length), start.keyTokens, -1, 'Cross-attention over the letters:'));
  s.rows.replaceChildren(...parts);
  s.svg = triangle(s, 'self', columns, layer, head, bart ? 'Self-attention, every step so far' : `Every step so far (rows: the tokens written; columns: the tokens they read) · ${who}`);
  if (bart) triangle(s, 'cross', start.keyTokens, layer, head, 'Cross-attention, every step so far');
}

/** One step's row for the layer and head (head 'all': the mean of the heads), `len` keys long. */
function row(values, start, layer, head, len) {
  const H = start.nHead, out = new Float64Array(len);
  const heads = head === 'all' ? Array.from({ length: H }, (_, h) => h) : [head];
  for (const h of heads) {
    const base = (layer * H + h) * len;
    for (let j = 0; j < len; j++) out[j] += values[base + j] / heads.length;
  }
  return out;
}

/**
 * The row as the text it reads: every key token shaded by its weight (scaled to the row's largest,
 * so a long row stays legible; the exact weight on hover and in data-weight), the query outlined,
 * tokens written later greyed; then the largest weights in words. query: its column, or -1 (cross).
 */
function rowParts(part, weights, columns, query, title) {
  const len = weights.length, top = Math.max(...weights);
  const tokens = columns.map((t, j) => {
    if (j >= len) return el('span', { class: 'gen-tok gen-later', title: 'written later', text: tokenLabel(t) });
    const w = weights[j], shade = top > 0 ? w / top : 0;
    return el('span', { class: `gen-tok${j === query ? ' gen-query' : ''}`, 'data-weight': String(w), title: `token ${j + 1}: ${fmt(w, 4)}`,
      style: `background:${weightColor(shade)};color:${textOn(shade)}`, text: tokenLabel(t) });
  });
  const order = Array.from(weights.keys()).sort((a, b) => weights[b] - weights[a]).slice(0, 3);
  return [
    title ? el('p', { class: 'gen-part-title', text: title }) : null,
    el('div', { class: 'gen-row', 'data-part': part, 'data-weights': numList(weights), 'data-query': query + 1 }, ...tokens),
    el('p', { class: 'gen-top', text: `Most attention: ${order.map((j) => `“${tokenLabel(columns[j])}” (token ${j + 1}) ${fmt(weights[j], 2)}`).join(', ')}. Darker: more attention (scaled to the row’s largest weight).` }),
  ].filter(Boolean);
}

/** The triangle of the steps up to the chosen one (each row the step's attention, the keys it could
 * not yet read grey), the chosen step outlined; returns its SVG. */
function triangle(s, part, columns, layer, head, name) {
  const { start, steps, step: t } = s;
  const cross = part === 'cross';
  const m = cross ? columns.length : start.rowBase + t;
  const values = new Float32Array((t + 1) * m), masked = new Float32Array((t + 1) * m);
  for (let i = 0; i <= t; i++) {
    const len = cross ? m : start.rowBase + i;
    const r = row(steps[i][part], start, layer, head, len);
    for (let j = 0; j < m; j++) {
      values[i * m + j] = j < len ? r[j] : 0;
      masked[i * m + j] = j < len ? 0 : -Infinity;
    }
  }
  const { title, box } = s.triangles[part];
  title.textContent = name;
  return renderWholeMatrix(box, {
    key: `generate-${part}`, name, values, rows: t + 1, cols: m, kind: 'weights', maskedFrom: masked, highlightRow: t,
    rowLabels: steps.slice(0, t + 1).map((x) => x.label), colLabels: columns.slice(0, m),
  }, 2);
}
