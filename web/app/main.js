// The demo page: wires the controls to the state, the state to the URL and the worker, and the
// worker's answers to the views. All computing happens in the worker (compute_client.js).
import { computeClient } from './compute_client.js';
import { parseState, serializeState, defaultState, VIEWS } from './state.js';
import { modelViewData, seedViewData, clampSelection, modelSteps, seedSteps } from './view_data.js';
import { SEED_TOKENS, SEED_NOTES } from './seed_preset.js';
import { renderHeadView } from './views/head_view.js';
import { renderModelView } from './views/model_view.js';
import { renderHeatmapView } from './views/heatmap_view.js';
import { renderNextTokenView } from './views/next_token_view.js';
import { StepsView } from './views/steps_view.js';
import { stepsToSvg } from './views/steps_svg.js';
import { VIEW_CSS } from './views/view_styles.js';
import { el, tokenLabel } from './views/dom.js';
import { mathName } from './views/matrix.js';
import { svgText, svgToPng, jsonText, download, fileName } from './export.js';

// The build sets DEMO_MODEL_PATH (default "models/brown-gpt2/"), relative to this script.
const MODEL_URL = new URL(typeof DEMO_MODEL_PATH === 'string' ? DEMO_MODEL_PATH : './models/brown-gpt2/', import.meta.url).href;
const WORKER_URL = new URL('./worker.js', import.meta.url).href;
const TYPING_DEBOUNCE_MS = 120;

const metrics = (window.__metrics = { scriptStart: performance.now() });
const client = computeClient(WORKER_URL);
let state = parseState(location.search);
let info = null, run = null, seed = null;
let pending = 0;
let lastSteps = null, lastSvg = null, lastData = null, lastSel = null;

// Start the work before touching the DOM: the model download overlaps the page setup.
track(client.request('model', { modelUrl: MODEL_URL })).then((r) => {
  info = r;
  metrics.modelReady = performance.now();
  render();
}, (e) => showError(e));

const $ = (id) => document.getElementById(id);
const ui = {
  app: $('app'), sentence: $('sentence'), tokens: $('tokens'), layer: $('layer'), head: $('head'), query: $('query'),
  causal: $('causal'), decimals: $('decimals'), tabs: [...document.querySelectorAll('[role=tab]')], view: $('view'),
  graphic: $('view-graphic'), stepsPane: $('view-steps'), stepsBody: $('steps-body'), help: $('view-help'),
  cross: $('cross'), second: $('second'), secondLabel: $('second-label'), crossNote: $('cross-note'),
  next: $('next'), nextPanel: $('next-panel'), seedPanel: $('seed-panel'), seedNotes: $('seed-notes'), seedReset: $('seed-reset'),
  modelInfo: $('model-info'), sentenceHelp: $('sentence-help'), status: $('status'), presets: [...document.querySelectorAll('input[name=preset]')],
};
document.head.append(el('style', { text: VIEW_CSS }));

const steps = new StepsView(ui.stepsBody, {
  edit: onSeedEdit,
  selectQuery: (i) => update({ query: i }),
});

// data-busy="1" on <main> while a request of ours is in the worker or a debounced one is waiting
// (tests wait for "0").
function busy(delta) {
  pending += delta;
  document.getElementById('app').dataset.busy = pending > 0 ? '1' : '0';
}

function track(promise) {
  busy(+1);
  const done = () => busy(-1);
  promise.then(done, done);
  return promise;
}

function showError(e) {
  const status = document.getElementById('status');
  status.textContent = `Error: ${e.message ?? e}`;
  status.classList.add('error');
}

// ---- computing -------------------------------------------------------------------------------

async function requestRun() {
  const payload = { modelUrl: MODEL_URL, text: state.sentence, layer: state.layer, topK: 8, crossText: state.cross ? state.second : null };
  try {
    const r = await track(client.request('run', payload, 'page-run'));
    if (!r) return; // superseded by newer typing
    run = r;
    metrics.lastRunMs = r.ms;
    ui.status.classList.remove('error');
    ui.status.textContent = r.truncated ? `The sentence was cut to the model's ${info?.config.n_positions ?? ''} tokens.` : '';
    render();
  } catch (e) { showError(e); }
}

async function requestSeed() {
  const s = state.seed;
  try {
    const r = await track(client.request('seed', { x: s.x, y: state.cross ? s.y : null, wQ: s.wQ, wK: s.wK, wV: s.wV, wO: s.wO, causal: state.causal }, 'page-seed'));
    if (!r) return;
    seed = r;
    ui.status.classList.remove('error');
    ui.status.textContent = '';
    render();
  } catch (e) { showError(e); }
}

function recompute() {
  // The run request may go before the model info arrives: the worker loads the model once.
  return state.preset === 'seed' ? requestSeed() : requestRun();
}

let typingTimer = 0;
function recomputeSoon(delay = TYPING_DEBOUNCE_MS) {
  if (typingTimer) clearTimeout(typingTimer); else busy(+1);
  typingTimer = setTimeout(() => {
    typingTimer = 0;
    recompute(); // tracks its own request before the count drops
    busy(-1);
  }, delay);
}

// ---- state changes ---------------------------------------------------------------------------

/** Applies a partial state change; recomputes when the inputs of the computation changed. */
function update(change, { debounce = false } = {}) {
  const before = state;
  state = { ...state, ...change };
  history.replaceState(null, '', serializeState(state) || location.pathname);
  const inputsChanged = ['preset', 'sentence', 'causal', 'cross', 'second'].some((k) => k in change && change[k] !== before[k])
    || ('layer' in change && change.layer !== before.layer && state.preset === 'model');
  if (inputsChanged) {
    if (debounce) recomputeSoon(); else recompute();
  }
  syncControls();
  // While typing, nothing visible changes until the worker answers (render() then runs).
  if (!debounce) render();
}

function onSeedEdit(key, index, text) {
  const v = Number(String(text).trim().replace(/\u2212/g, '-'));
  if (String(text).trim() === '' || !Number.isFinite(v)) return; // the cell shows itself invalid
  const seedValues = { ...state.seed, [key]: state.seed[key].slice() };
  seedValues[key][index] = v;
  state = { ...state, seed: seedValues };
  history.replaceState(null, '', serializeState(state) || location.pathname);
  recomputeSoon(40);
}

// ---- controls --------------------------------------------------------------------------------

function options(select, items, selected) {
  select.replaceChildren(...items.map(([value, label]) => el('option', { value, text: label, selected: String(value) === String(selected) })));
}

function syncControls() {
  const isSeed = state.preset === 'seed';
  ui.presets.forEach((r) => { r.checked = r.value === state.preset; });
  if (document.activeElement !== ui.sentence) ui.sentence.value = isSeed ? SEED_TOKENS.join(' ') : state.sentence;
  ui.sentence.readOnly = isSeed;
  ui.sentenceHelp.textContent = isSeed ? SEED_HELP : MODEL_HELP;
  ui.sentence.setAttribute('aria-readonly', isSeed ? 'true' : 'false');
  ui.causal.checked = isSeed ? state.causal : true;
  ui.causal.disabled = !isSeed;
  ui.causal.parentElement.title = isSeed ? '' : 'GPT-2 is a decoder: its attention is always causal';
  ui.decimals.value = String(state.decimals);
  ui.cross.checked = state.cross;
  ui.secondLabel.hidden = !state.cross || isSeed;
  if (document.activeElement !== ui.second) ui.second.value = state.second;
  ui.nextPanel.hidden = isSeed;
  ui.seedPanel.hidden = !isSeed;
  for (const tab of ui.tabs) {
    const on = tab.dataset.view === state.view;
    tab.setAttribute('aria-selected', on ? 'true' : 'false');
    tab.tabIndex = on ? 0 : -1;
  }
  ui.view.setAttribute('aria-labelledby', `tab-${state.view}`);
  document.body.dataset.view = state.view;
  document.body.dataset.preset = state.preset;
}

function syncPickers(data, sel) {
  const L = data.nLayer, H = data.nHead;
  options(ui.layer, Array.from({ length: L }, (_, l) => [l, `${l + 1}`]), sel.layer);
  const heads = Array.from({ length: H }, (_, h) => {
    const label = data.headLabel(sel.layer, h);
    return [h, `${h + 1}${label ? ` · ${label}` : ''}`];
  });
  if (H > 1) heads.push(['all', 'all heads']);
  options(ui.head, heads, sel.head);
  options(ui.query, data.tokens.map((t, i) => [i, `${i + 1}: ${tokenLabel(t)}`]), sel.query);
  ui.layer.disabled = L === 1;
  ui.head.disabled = H === 1;
}

function renderTokens(tokens, query) {
  // Reuse the chips when the tokens did not change, so keyboard focus stays put.
  const same = ui.tokens.childElementCount === tokens.length && tokens.every((t, i) => ui.tokens.children[i].dataset.token === t);
  if (!same) {
    ui.tokens.replaceChildren(...tokens.map((t, i) => el('button', {
      type: 'button', class: 'token', role: 'option', 'data-index': i, 'data-token': t, title: `token ${i + 1}`,
      text: tokenLabel(t),
    })));
  }
  [...ui.tokens.children].forEach((b, i) => {
    b.setAttribute('aria-selected', i === query ? 'true' : 'false');
    b.tabIndex = i === query ? 0 : -1;
  });
}

function renderInfo() {
  if (state.preset === 'seed') {
    ui.modelInfo.replaceChildren(
      el('dt', { text: 'Layer' }), el('dd', { text: 'one attention layer, 1 head, d_model = d_k = 2, no biases' }),
      el('dt', { text: 'Computed by' }), el('dd', { text: `the library's MultiHeadAttention with trace (WASM ${info?.variant ?? ''})` }));
    return;
  }
  if (!info) return;
  const c = info.config;
  const items = [
    ['Model', info.name], ['Shape', `${c.n_layer} layers × ${c.n_head} heads, d_model ${c.n_embd}, context ${c.n_positions}`],
    ['Vocabulary', `${c.vocab_size} tokens (byte-level BPE)`], ['Weights', `${(info.modelBytes / 1e6).toFixed(1)} MB`],
    ['Engine', `WebAssembly (${info.variant}) in a worker`],
  ];
  if (run?.loss) items.push(['This sentence', `${run.loss.loss.toFixed(2)} nats/token (perplexity ${run.loss.perplexity.toFixed(1)})`]);
  const link = el('a', { href: new URL('MODEL_CARD.md', MODEL_URL).href, text: 'model card' });
  ui.modelInfo.replaceChildren(...items.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]), el('dt', { text: 'More' }), el('dd', {}, link));
}

const MODEL_HELP = 'Results follow your typing. The model sees <|endoftext|> first, as in training.';
const SEED_HELP = 'The tutorial’s three words, each given as two numbers; edit the numbers (and the weights) in the step view.';

const HELP = {
  heads: 'Lines join each query token (left) to the keys it attends to (right); darker means more attention. Hover or focus a token to isolate its lines. Pick “all heads” to overlay them.',
  model: 'Every layer × every head. Each square is a heatmap (rows: queries, columns: keys). Click one, or focus it and press Enter, to open it.',
  heatmap: 'Rows are queries, columns are keys; each row sums to 1. Hover a cell for its exact weight, or focus the map and use the arrow keys.',
  steps: 'The computation of the chosen head for the chosen query token (highlighted row), with the real numbers, in the order the tutorial teaches it.',
};

// ---- rendering -------------------------------------------------------------------------------

function render() {
  const isSeed = state.preset === 'seed';
  if (isSeed ? !seed : !(run && info)) return;
  const data = isSeed ? seedViewData(seed, state) : modelViewData(run, info);
  const sel = clampSelection(state, data.nLayer, data.nHead, data.tokens.length);
  lastData = data; lastSel = sel;
  renderTokens(data.tokens, sel.query);
  syncPickers(data, sel);
  renderInfo();
  ui.help.textContent = HELP[state.view] + (!isSeed && state.view === 'model' && info?.headLabels ? ' Labels: the model card’s measurements (heads.json): each head’s pattern, or its largest average share of attention (previous token, first token, self, punctuation).' : '') + (isSeed && state.cross ? ' Cross-attention is on (switch it in the step view): the keys and values come from “escribe un poema”.' : '');

  const handlers = { select: (change) => update(change) };
  ui.graphic.hidden = state.view === 'steps';
  ui.stepsPane.hidden = state.view !== 'steps';
  if (state.view === 'heads') lastSvg = renderHeadView(ui.graphic, data, sel, handlers).svg;
  else if (state.view === 'model') lastSvg = renderModelView(ui.graphic, data, sel, handlers).svg;
  else if (state.view === 'heatmap') lastSvg = renderHeatmapView(ui.graphic, data, { ...sel, head: sel.head === 'all' ? 0 : sel.head }, handlers).svg;
  else renderSteps(isSeed, sel);

  if (!isSeed) renderNextTokenView(ui.next, { predictions: run.predictions }, { title: false });
  ui.seedNotes.replaceChildren(...SEED_NOTES.map((t) => el('li', {}, mathName(t))));

  if (metrics.firstView === undefined) {
    // "First view interactive": the first attention view drawn with real numbers, in ms since
    // navigation start (performance.now()'s origin).
    metrics.firstView = performance.now();
    document.documentElement.dataset.firstViewMs = metrics.firstView.toFixed(0);
  }
  document.body.dataset.renderCount = String(Number(document.body.dataset.renderCount ?? 0) + 1);
}

function renderSteps(isSeed, sel) {
  ui.crossNote.hidden = true;
  if (isSeed) {
    lastSteps = seedSteps(seed, state, sel);
  } else {
    if (run.layer !== sel.layer) return; // the trace for this layer is on its way
    if (state.cross) {
      ui.crossNote.hidden = false;
      ui.crossNote.textContent = run.cross
        ? `Layer ${sel.layer + 1}'s own weights: queries from X of the sentence, keys and values from X of the second sentence (each through layers 1–${sel.layer + 1} on its own). GPT-2 has no cross-attention and never learned any, so the pattern means little; the arithmetic is exactly an encoder-decoder's.`
        : 'Cross-attention needs the layer input X of both sentences, which this build of the library does not trace. Showing self-attention.';
    }
    lastSteps = modelSteps(run, info, state, sel);
  }
  steps.render(lastSteps, { decimals: state.decimals });
}

// ---- exports ---------------------------------------------------------------------------------

function currentSvg() {
  if (state.view !== 'steps') return lastSvg;
  const who = state.preset === 'seed' ? 'tutorial example' : `layer ${lastSel.layer + 1}, head ${(lastSel.head === 'all' ? 0 : lastSel.head) + 1}`;
  return stepsToSvg(lastSteps, { decimals: state.decimals, title: `Attention step by step: ${who}, query “${tokenLabel(lastData.tokens[lastSel.query])}”` });
}

function exportJson() {
  const d = lastData, sel = lastSel;
  const n = d.tokens.length, m = (d.keyTokens ?? d.tokens).length;
  const head = sel.head === 'all' ? 0 : sel.head;
  const base = (sel.layer * d.nHead + head) * n * m;
  const doc = {
    generator: 'attention-wasm demo', url: location.href, preset: state.preset,
    sentence: state.preset === 'seed' ? SEED_TOKENS.join(' ') : state.sentence,
    tokens: d.tokens, keyTokens: d.keyTokens ?? d.tokens, layer: sel.layer + 1, head: sel.head === 'all' ? 'all' : head + 1,
    query: sel.query + 1, view: state.view, causal: state.preset === 'seed' ? state.causal : true,
    selectedHead: { layer: sel.layer + 1, head: head + 1, shape: [n, m], weights: d.attention.slice(base, base + n * m) },
    attention: { shape: [d.nLayer, d.nHead, n, m], layout: 'layer x head x query x key, row-major', data: d.attention },
  };
  if (state.preset === 'seed') Object.assign(doc, { weights: state.seed, trace: seed.trace, output: seed.output });
  else Object.assign(doc, { ids: run.ids, predictions: run.predictions, traceLayer: run.layer + 1, trace: run.trace, crossAttention: run.cross ?? undefined });
  download(fileName(state.view, doc.sentence, 'json'), new Blob([jsonText(doc)], { type: 'application/json' }));
}

async function exportImage(kind) {
  const svgEl = currentSvg();
  if (!svgEl) return;
  const name = fileName(state.view, state.preset === 'seed' ? 'write a poem' : state.sentence, kind);
  if (kind === 'svg') download(name, new Blob([svgText(svgEl)], { type: 'image/svg+xml' }));
  else download(name, await svgToPng(svgEl));
}

// ---- wiring ----------------------------------------------------------------------------------

ui.sentence.addEventListener('input', () => {
  if (state.preset !== 'seed') update({ sentence: ui.sentence.value, query: null }, { debounce: true });
});
ui.second.addEventListener('input', () => update({ second: ui.second.value }, { debounce: true }));
ui.layer.addEventListener('change', () => update({ layer: Number(ui.layer.value) }));
ui.head.addEventListener('change', () => update({ head: ui.head.value === 'all' ? 'all' : Number(ui.head.value) }));
ui.query.addEventListener('change', () => update({ query: Number(ui.query.value) }));
ui.causal.addEventListener('change', () => update({ causal: ui.causal.checked }));
ui.cross.addEventListener('change', () => update({ cross: ui.cross.checked }));
ui.decimals.addEventListener('change', () => update({ decimals: Number(ui.decimals.value) }));
ui.presets.forEach((r) => r.addEventListener('change', () => {
  if (r.checked) update({ preset: r.value, layer: 0, head: 0, query: null, cross: false });
}));
ui.seedReset.addEventListener('click', () => {
  const d = defaultState();
  state = { ...state, seed: d.seed };
  steps.signature = null; // rebuild so the inputs show the defaults again
  update({ causal: false });
  recompute();
});
ui.tokens.addEventListener('click', (e) => {
  const b = e.target.closest('.token');
  if (b) update({ query: Number(b.dataset.index) });
});
ui.tokens.addEventListener('keydown', (e) => {
  const b = e.target.closest('.token');
  if (!b || !['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(e.key)) return;
  const n = ui.tokens.childElementCount, i = Number(b.dataset.index);
  const next = e.key === 'Home' ? 0 : e.key === 'End' ? n - 1 : Math.max(0, Math.min(n - 1, i + (e.key === 'ArrowRight' ? 1 : -1)));
  update({ query: next });
  ui.tokens.children[next]?.focus();
  e.preventDefault();
});
ui.tabs.forEach((tab, k) => {
  tab.addEventListener('click', () => update({ view: tab.dataset.view }));
  tab.addEventListener('keydown', (e) => {
    const moves = { ArrowRight: 1, ArrowLeft: -1 };
    if (!(e.key in moves)) return;
    const next = ui.tabs[(k + moves[e.key] + ui.tabs.length) % ui.tabs.length];
    update({ view: next.dataset.view });
    next.focus();
    e.preventDefault();
  });
});
$('export-svg').addEventListener('click', () => exportImage('svg').catch(showError));
$('export-png').addEventListener('click', () => exportImage('png').catch(showError));
$('export-json').addEventListener('click', () => { try { exportJson(); } catch (e) { showError(e); } });
window.addEventListener('popstate', () => { state = parseState(location.search); syncControls(); recompute(); });

// Re-lay out the SVG views when the pane's width changes (rotating a phone, resizing a window).
let lastWidth = 0;
new ResizeObserver(([entry]) => {
  const w = Math.round(entry.contentRect.width);
  if (Math.abs(w - lastWidth) > 8 && state.view !== 'steps') { lastWidth = w; requestAnimationFrame(render); }
}).observe(ui.graphic);

if (!VIEWS.includes(state.view)) state.view = 'heads';
syncControls();
recompute();
