// The demo page: wires the controls to the state, the state to the URL and the worker, and the
// worker's answers to the views. All computing happens in the worker (compute_client.js). Nothing
// here depends on which model runs: the worker describes each (its info: shape, features, words)
// and answers every model's run in one shape.
import { computeClient } from './compute_client.js';
import { parseState, serializeState, defaultState, VIEWS } from './state.js';
import { modelViewData, seedViewData, clampSelection, modelSteps, seedSteps } from './view_data.js';
import { SEED_TOKENS, SEED_NOTES, TWO_HEADS } from './seed_preset.js';
import { DEMO_WORKER_URL, MODEL_URLS } from './model_urls.js';
import { openingHead } from './head_labels.js';
import { testFor, repeatedWords, runHeadTest, testSummary } from './head_test.js';
import { initHubPanel } from './hub_panel.js';
import { splitWords, Blanks } from './masking.js';
import { renderTokenChips } from './token_chips.js';
import { TOKEN_MARKS } from './token_marks.js';
import { renderInfoPanel, cardLink } from './info_panel.js';
import { renderOrientation } from './orientation.js';
import { continuesWord, byteRuns, byteNote } from './word_groups.js';
import { renderHeadView } from './views/head_view.js';
import { renderModelView } from './views/model_view.js';
import { renderHeatmapView } from './views/heatmap_view.js';
import { renderNextTokenView } from './views/next_token_view.js';
import { renderFillMaskView } from './views/fill_mask_view.js';
import { renderPronunciationView } from './views/pronunciation_view.js';
import { renderSimilarityView } from './views/similarity_view.js';
import { StepsView } from './views/steps_view.js';
import { stepsToSvg } from './views/steps_svg.js';
import { VIEW_CSS } from './views/view_styles.js';
import { el, tokenLabel, widthOf } from './views/dom.js';
import { textWidth } from './views/measure.js';
import { mathName } from './views/matrix.js';
import { kvSuffix } from './views/kv_groups.js';
import { svgText, svgToPng, jsonText, download, fileName } from './export.js';
import { attentionDocument, similarityDocument } from './export_docs.js';

const TYPING_DEBOUNCE_MS = 120;

const metrics = (window.__metrics = { scriptStart: performance.now() });
const client = computeClient(DEMO_WORKER_URL); // (adopts the worker index.html's head started)
let state = parseState(location.search);
if (!MODEL_URLS[state.model]) state.model = 'gpt2';
const infos = new Map(); // 'gpt2' | 'bert' -> the worker's description of the model
let run = null, seed = null, compared = null;
let generation = null, generationSeed = 1; // "Continue the text": the stream in progress
let pending = 0;
let lastSteps = null, lastSvg = null, lastData = null, lastSel = null;
// "Test this head": the test the learner started ({ kind, model, layer, head }), and the draws.
let testing = null, testDraws = 0;
// The words hidden behind the sentence's [MASK]s (to put them back).
const blanks = new Blanks(state.sentence);

const modelUrl = () => MODEL_URLS[state.model];
const info = () => infos.get(state.model) ?? null;
const isSeed = () => state.preset === 'seed';
// The encoder-decoder reads words (its own text field); the other models a sentence.
const textKey = () => (!isSeed() && state.model === 'bart' ? 'words' : 'sentence');

// The page opens each model on its clearest head (a previous-token head when the model card
// names one) unless the address or the learner chose a head: the first picture shows a pattern.
const urlChoseHead = ['layer', 'head'].some((k) => new URLSearchParams(location.search).has(k));
const opened = new Set(); // models whose opening head was applied or whose head was chosen

function openOnClearestHead(model) {
  if (opened.has(model) || model !== state.model || isSeed() || !infos.get(model)) return;
  opened.add(model);
  if (urlChoseHead || state.layer !== 0 || state.head !== 0) return;
  const { layer, head } = openingHead(infos.get(model).openingLabels ?? infos.get(model).headLabels);
  if (layer !== 0 || head !== 0) update({ layer, head });
}

function requestInfo(model) {
  if (infos.has(model) || !MODEL_URLS[model]) return;
  infos.set(model, null);
  track(client.request('model', { modelUrl: MODEL_URLS[model] })).then((r) => {
    infos.set(model, r);
    if (model === state.model) metrics.modelReady ??= performance.now();
    openOnClearestHead(model);
    syncControls();
    if (viewOf() === 'compare' && !compared) requestCompare();
    render();
  }, (e) => { infos.delete(model); showError(e); });
}

// Start the work before touching the DOM: the model download overlaps the page setup.
requestInfo(state.model);

const $ = (id) => document.getElementById(id);
const ui = {
  app: $('app'), sentence: $('sentence'), tokens: $('tokens'), layer: $('layer'), head: $('head'), query: $('query'),
  causal: $('causal'), decimals: $('decimals'), tabs: [...document.querySelectorAll('[role=tab]')], view: $('view'),
  graphic: $('view-graphic'), stepsPane: $('view-steps'), stepsBody: $('steps-body'), help: $('view-help'), glossary: $('label-glossary'), glossaryText: $('label-glossary-text'), testHead: $('test-head'), headTest: $('head-test'),
  cross: $('cross'), crossCheck: $('cross-check'), second: $('second'), secondLabel: $('second-label'), crossNote: $('cross-note'),
  batch: $('batch'), batchCheck: $('batch-check'), batchWith: $('batch-with'), batchLabel: $('batch-label'), batchNote: $('batch-note'),
  pair: $('pair'), pairRow: $('pair-row'), typesLegend: $('types-legend'),
  comparePane: $('view-compare'), sentences: $('sentences'), pooling: $('pooling'), compareTab: $('tab-compare'),
  next: $('next'), nextPanel: $('next-panel'), fill: $('fill'), fillPanel: $('fill-panel'),
  seedPanel: $('seed-panel'), seedNotes: $('seed-notes'), seedReset: $('seed-reset'),
  modelInfo: $('model-info'), sentenceHelp: $('sentence-help'), status: $('status'), presets: [...document.querySelectorAll('input[name=preset]')],
  sentenceLabel: $('sentence-label'), attend: $('attend'), attendLabel: $('attend-label'), pron: $('pron'), pronPanel: $('pron-panel'),
  marksLegend: $('marks-legend'), continueButton: $('continue'), stopButton: $('stop-generation'),
};
document.head.append(el('style', { text: VIEW_CSS }));

const steps = new StepsView(ui.stepsBody, {
  edit: onSeedEdit,
  selectQuery: (i) => update({ query: i }),
  showRows: (all) => update({ rows: all ? 'all' : 'query' }),
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

/** The view to draw: "compare" only for models that make sentence embeddings. */
function viewOf() {
  if (state.view !== 'compare') return state.view;
  return !isSeed() && info()?.features.compare ? 'compare' : 'heads';
}

// ---- computing -------------------------------------------------------------------------------

async function requestRun() {
  const model = state.model;
  // Every model's run takes the same payload; each uses the parts its features need.
  const payload = {
    modelUrl: modelUrl(), text: state[textKey()], layer: state.layer, topK: 8,
    crossText: state.cross ? state.second : null, pair: state.pair, batchWith: state.batch ? state.batchWith : null,
    wordIndex: state.word, attend: state.attend,
    // The self-check of X (X W^Q + b^Q = the trace's Q, shown to tests by the step view) costs a
    // cold page tens of ms: the first run skips it unless the page opens on the step view.
    check: viewOf() === 'steps' || metrics.firstView !== undefined,
    // The first view asks for what it draws first (a model may leave out some of its result:
    // partial, e.g. GPT-2's sentence loss); the whole run follows once that view is on screen.
    quick: metrics.firstView === undefined,
  };
  try {
    const r = await track(client.request('run', payload, 'page-run'));
    if (!r) return; // superseded by newer typing
    run = { ...r, choice: model };
    metrics.lastRunMs = r.ms;
    ui.status.classList.remove('error');
    ui.status.textContent = r.truncated ? `The sentence was cut to the model's ${info()?.maxTokens ?? ''} tokens.` : '';
    render();
  } catch (e) { showError(e); }
}

/** Runs `what` once the frame being drawn is on screen (busy meanwhile: tests wait for it). */
function afterPaint(what) {
  busy(+1);
  requestAnimationFrame(() => setTimeout(() => { what(); busy(-1); }, 0));
}

async function requestSeed() {
  const s = state.seed;
  try {
    // Two heads, d_k ≠ d_v: the tutorial's X (and Y) with the fixed two-head weights.
    const w = state.twoHeads ? TWO_HEADS : s;
    const r = await track(client.request('seed', { x: s.x, y: state.cross ? s.y : null, wQ: w.wQ, wK: w.wK, wV: w.wV, wO: w.wO, causal: state.causal,
      ...(state.twoHeads ? { heads: TWO_HEADS.config } : {}) }, 'page-seed'));
    if (!r) return;
    seed = r;
    ui.status.classList.remove('error');
    ui.status.textContent = '';
    render();
  } catch (e) { showError(e); }
}

const compareSentences = () => state.sentences.map((s) => s.trim()).filter(Boolean);

async function requestCompare() {
  if (isSeed() || !info()?.features.compare) return;
  const sentences = compareSentences();
  if (!sentences.length) { compared = null; render(); return; }
  const model = state.model;
  try {
    const r = await track(client.request('compare', { modelUrl: modelUrl(), sentences, pooling: state.pooling }, 'page-compare'));
    if (!r) return;
    compared = { ...r, choice: model };
    render();
  } catch (e) { showError(e); }
}

function recompute() {
  // The run request may go before the model info arrives: the worker loads the model once.
  if (isSeed()) return requestSeed();
  requestInfo(state.model);
  if (viewOf() === 'compare') requestCompare(); // (before the model's info arrives, its arrival asks)
  return requestRun();
}

const typingTimers = new Map(); // the debounced computation -> its timer
function recomputeSoon(delay = TYPING_DEBOUNCE_MS, what = recompute) {
  if (typingTimers.has(what)) clearTimeout(typingTimers.get(what)); else busy(+1);
  typingTimers.set(what, setTimeout(() => {
    typingTimers.delete(what);
    what(); // tracks its own request before the count drops
    busy(-1);
  }, delay));
}

// ---- state changes ---------------------------------------------------------------------------

// The URL follows the state, written at most every 150 ms: replaceState costs milliseconds, and
// streamed tokens change the state many times a second. (Counted as pending work, so tests that
// wait for an idle page read the final URL.)
let urlTimer = null;
function writeUrlSoon() {
  if (urlTimer) return;
  busy(+1);
  urlTimer = setTimeout(() => {
    urlTimer = null;
    history.replaceState(null, '', stateUrl());
    busy(-1);
  }, 150);
}

/** The address of what is on screen now (the URL is written a little later). */
function stateUrl() {
  // A model the page opens on another head needs layer 1 / head 1 written out to come back to them.
  const opening = isSeed() ? null : openingHead(info()?.openingLabels ?? info()?.headLabels);
  const layerHead = !!opening && (opening.layer !== 0 || opening.head !== 0);
  return serializeState(state, { layerHead }) || location.pathname;
}

const RUN_INPUTS = ['preset', 'model', 'sentence', 'causal', 'twoHeads', 'cross', 'second', 'pair', 'batch', 'batchWith', 'words', 'word', 'attend'];
const COMPARE_INPUTS = ['sentences', 'pooling'];

/** Applies a partial state change; recomputes when the inputs of the computation changed. */
function update(change, { debounce = false } = {}) {
  const before = state;
  state = { ...state, ...change };
  writeUrlSoon();
  const changed = (k) => k in change && change[k] !== before[k];
  const runChanged = RUN_INPUTS.some(changed) || (changed('layer') && !isSeed());
  const compareChanged = COMPARE_INPUTS.some(changed) || changed('model') || (changed('view') && state.view === 'compare');
  if (changed('model') || changed('preset')) compared = null;
  if (runChanged) {
    if (debounce) recomputeSoon(); else recompute();
  } else if (compareChanged && viewOf() === 'compare') {
    if (debounce) recomputeSoon(TYPING_DEBOUNCE_MS * 3, requestCompare); else requestCompare();
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
  writeUrlSoon();
  recomputeSoon(40);
}

/** Fill in the blank: word i of the sentence becomes [MASK], or a [MASK] gets its word back. */
function toggleMask(i) {
  // A typed [MASK] hid no word: it takes the model's best guess.
  const next = blanks.toggle(state.sentence, i, (k) => run?.fill?.[k]?.predictions[0]?.text.replace(/^##/, ''));
  if (next !== null) update({ sentence: next, query: null });
}

// ---- controls --------------------------------------------------------------------------------

/** Sets a <select>'s options, keeping those already right (while text streams, only new tokens are added). */
function options(select, items, selected) {
  const have = select.options;
  let same = 0;
  while (same < Math.min(have.length, items.length) && have[same].value === String(items[same][0]) && have[same].text === items[same][1]) same++;
  while (have.length > same) have[have.length - 1].remove();
  select.append(...items.slice(same).map(([value, label]) => el('option', { value, text: label })));
  select.value = String(selected);
}

function syncControls() {
  const seedMode = isSeed();
  const m = info();
  const features = seedMode ? { cross: true } : m?.features ?? {};
  ui.presets.forEach((r) => {
    r.checked = r.value === (seedMode ? 'seed' : state.model);
    if (r.value !== 'seed' && !MODEL_URLS[r.value]) { r.disabled = true; r.parentElement.title = 'This build of the demo has no such model'; }
  });
  if (document.activeElement !== ui.sentence) ui.sentence.value = seedMode ? SEED_TOKENS.join(' ') : state[textKey()];
  ui.sentenceLabel.textContent = textKey() === 'words' ? 'Words' : 'Sentence';
  ui.marksLegend.textContent = seedMode || !TOKEN_MARKS[state.model] ? '' : `· ${TOKEN_MARKS[state.model].text}`;
  ui.marksLegend.hidden = !ui.marksLegend.textContent;
  ui.attendLabel.hidden = !features.attend;
  ui.attend.value = state.attend;
  ui.pronPanel.hidden = seedMode || !features.pronounce;
  ui.continueButton.parentElement.hidden = seedMode || !features.generate;
  ui.sentence.readOnly = seedMode;
  ui.sentenceHelp.textContent = seedMode ? SEED_HELP : m?.text.sentenceHelp ?? '';
  ui.sentence.setAttribute('aria-readonly', seedMode ? 'true' : 'false');
  ui.pairRow.hidden = !features.pair;
  if (document.activeElement !== ui.pair) ui.pair.value = state.pair;
  ui.causal.checked = seedMode ? state.causal : !!m?.causal;
  ui.causal.disabled = !seedMode;
  ui.causal.parentElement.title = seedMode ? '' : m?.text.causalNote ?? '';
  ui.decimals.value = String(state.decimals);
  ui.crossCheck.hidden = !features.cross;
  $('dkdv-check').hidden = !seedMode;
  $('dkdv').checked = seedMode && state.twoHeads;
  ui.cross.checked = state.cross && !!features.cross;
  ui.secondLabel.hidden = !(state.cross && features.cross) || seedMode;
  if (document.activeElement !== ui.second) ui.second.value = state.second;
  ui.batchCheck.hidden = !features.batch;
  ui.batch.checked = state.batch && !!features.batch;
  ui.batchLabel.hidden = !(state.batch && features.batch);
  if (document.activeElement !== ui.batchWith) ui.batchWith.value = state.batchWith;
  if (document.activeElement !== ui.sentences) ui.sentences.value = state.sentences.join('\n');
  ui.pooling.value = state.pooling;
  ui.nextPanel.hidden = seedMode || !features.next;
  ui.fillPanel.hidden = seedMode || !features.fill;
  ui.seedPanel.hidden = !seedMode;
  ui.compareTab.hidden = !features.compare;
  const view = viewOf();
  for (const tab of ui.tabs) {
    const on = tab.dataset.view === view;
    tab.setAttribute('aria-selected', on ? 'true' : 'false');
    tab.tabIndex = on ? 0 : -1;
  }
  ui.view.setAttribute('aria-labelledby', `tab-${view}`);
  document.body.dataset.view = view;
  document.body.dataset.preset = seedMode ? 'seed' : state.model;
}

function syncPickers(data, sel) {
  const L = data.nLayer, H = data.nHead;
  options(ui.layer, Array.from({ length: L }, (_, l) => [l, `${l + 1}`]), sel.layer);
  const heads = Array.from({ length: H }, (_, h) => {
    const label = data.headLabel(sel.layer, h);
    // Grouped-query attention: which K/V head the query head reads (views/kv_groups.js).
    return [h, `${h + 1}${kvSuffix(data, h)}${label ? ` · ${label}` : ''}`];
  });
  if (H > 1) heads.push(['all', 'all heads']);
  options(ui.head, heads, sel.head);
  options(ui.query, data.tokens.map((t, i) => [i, `${i + 1}: ${tokenLabel(t)}`]), sel.query);
  ui.layer.disabled = L === 1;
  ui.head.disabled = H === 1;
}

// One line under the view; the labels' definitions fold out below it (#label-glossary).
const LABELS_HELP = ' Head labels are measured on held-out text; the number after a label is its score.';

const SEED_HELP = 'The tutorial’s three words, each given as two numbers; edit the numbers (and the weights) in the step view.';

const HELP = {
  heads: 'Lines join each query token (left) to the keys it attends to (right); darker means more attention. Hover or focus a token to isolate its lines. Pick “all heads” to overlay them.',
  model: 'Every layer × every head. Each square is a heatmap (rows: queries, columns: keys). Click one, or focus it and press Enter, to open it.',
  heatmap: 'Rows are queries, columns are keys; each row sums to 1. Hover a cell for its exact weight, or focus the map and use the arrow keys.',
  steps: 'The computation of the chosen head for the chosen query token, with the real numbers, in the order the tutorial teaches it. Pick another token above to follow its row.',
  compare: 'Each sentence becomes one vector (from the last layer); each cell is the cosine similarity of two of them: 1 on the diagonal, higher for sentences the model finds alike, so similar sentences form darker blocks. A model trained only to fill in blanks was never taught to compare sentences, so the contrasts are modest: the colours span just the range the values take.',
};

// ---- rendering -------------------------------------------------------------------------------

function render() {
  const seedMode = isSeed();
  const m = info();
  if (seedMode ? !seed : !(run && m && run.choice === state.model)) return;
  const view = viewOf();
  const data = seedMode ? seedViewData(seed, state) : modelViewData(run, m);
  const sel = clampSelection(state, data.nLayer, data.nHead, data.tokens.length, (view === 'steps' && data.stepsQuery) || data.defaultQuery);
  data.test = showHeadTest(seedMode, data, sel, view);
  lastData = data; lastSel = sel;
  if (!seedMode) ui.causal.checked = !!(run.causal ?? m.causal); // an encoder-decoder's depends on the attention shown
  const showTypes = !seedMode && !!run.tokenTypes?.some((t) => t === 1);
  // The pieces of each word share an underline; byte chips say which character they spell.
  const continues = seedMode ? null : continuesWord(data.tokens, { type: m.type, text: state[textKey()] });
  renderTokenChips(ui.tokens, data.tokens, { query: sel.query, tokenTypes: seedMode ? null : run.tokenTypes, showTypes, padding: seedMode ? null : run.padding,
    continues, byteRuns: byteRuns(data.tokens) });
  $('bytes-note').textContent = byteNote(data.tokens);
  $('bytes-note').hidden = !$('bytes-note').textContent;
  ui.typesLegend.hidden = !showTypes;
  syncPickers(data, sel);
  const back = new URL(stateUrl(), location.href).href;
  renderInfoPanel(ui.modelInfo, { seed: seedMode, info: seedMode ? [...infos.values()].find(Boolean) ?? null : m, run, modelUrl: modelUrl(), back });
  renderOrientation($('orientation'), { toModels: true, ...(seedMode ? { seed: true } : { info: m, ...cardLink(m, modelUrl(), back) }) });
  const labelled = !seedMode && ['model', 'heads', 'heatmap'].includes(view) && !!(run.headLabels ?? m.headLabels) && !!m.text.headLabelNote;
  ui.help.textContent = HELP[view] + (labelled ? LABELS_HELP : '')
    + (seedMode && state.cross ? ' Cross-attention is on (switch it in the step view): the keys and values come from “escribe un poema”.' : '');
  ui.glossary.hidden = !labelled;
  if (labelled) ui.glossaryText.textContent = m.text.headLabelNote;

  const handlers = { select: (change) => update(change) };
  ui.graphic.hidden = view === 'steps';
  ui.stepsPane.hidden = view !== 'steps';
  ui.comparePane.hidden = view !== 'compare';
  // While text streams in, the head view redraws only the newest token's lines; the other views wait.
  if (generation && view !== 'heads' && view !== 'steps') return;
  if (view === 'heads') lastSvg = renderHeadView(ui.graphic, data, sel, handlers, { onlyQuery: generation ? sel.query : null }).svg;
  else if (view === 'model') lastSvg = renderModelView(ui.graphic, data, sel, handlers).svg;
  else if (view === 'heatmap') lastSvg = renderHeatmapView(ui.graphic, data, { ...sel, head: sel.head === 'all' ? 0 : sel.head }, handlers).svg;
  else if (view === 'compare') renderCompare();
  else renderSteps(seedMode, sel);

  if (!seedMode && m.features.next) renderNextTokenView(ui.next, { predictions: run.predictions, endOfText: run.endOfText }, { title: false });
  if (!seedMode && m.features.pronounce) renderPronunciationView(ui.pron, run, { onSelect: (i) => update({ word: i, query: null }) });
  if (!seedMode && m.features.fill) renderFillMaskView(ui.fill, { words: splitWords(state.sentence), fill: run.fill }, { toggle: toggleMask });
  ui.seedNotes.replaceChildren(...SEED_NOTES.map((t) => el('li', {}, mathName(t))));

  if (metrics.firstView === undefined) {
    // "First view interactive": the first attention view drawn with real numbers, in ms since
    // navigation start (performance.now()'s origin).
    metrics.firstView = performance.now();
    metrics.firstViewPartial = !seedMode && !!run.partial;
    document.documentElement.dataset.firstViewMs = metrics.firstView.toFixed(0);
  }
  // A partial run (the first view's) once drawn: ask for the whole of it once it is on screen.
  if (!seedMode && run.partial) {
    run.partial = false;
    afterPaint(() => { if (!isSeed()) requestRun(); });
  }
  document.body.dataset.renderCount = String(Number(document.body.dataset.renderCount ?? 0) + 1);
}

/** Whether the chosen head can be tested here; the running test's rows (for the heatmap), or null. */
function showHeadTest(seedMode, data, sel, view) {
  // Self-attention of a run with ids and no padding (not cross-attention, not a batch row).
  const testable = !seedMode && sel.head !== 'all' && Array.isArray(run.ids) && !data.keyTokens && !run.padding?.some((p) => p)
    && !!testFor(data.headLabel(sel.layer, sel.head));
  ui.testHead.hidden = !testable || view === 'steps' || view === 'compare';
  const on = testable && testing && testing.model === state.model && testing.layer === sel.layer && testing.head === sel.head;
  if (!on) testing = null;
  const test = on ? runHeadTest(testing.kind, run, data.nHead, sel.layer, sel.head, !!(run.causal ?? info().causal)) : null;
  ui.headTest.hidden = !test || view !== 'heatmap';
  if (test) {
    ui.headTest.textContent = testSummary(test, data.headLabel(sel.layer, sel.head));
    Object.assign(ui.headTest.dataset, { kind: test.kind, mean: String(test.mean), top: String(test.top),
      rows: JSON.stringify(test.rows.map((r) => [r.query, r.target, r.weight])) });
  }
  return test;
}

/** The button: induction gets new random words written twice; both open the heatmap. */
function startHeadTest() {
  const sel = lastSel, kind = testFor(lastData?.headLabel(sel.layer, sel.head));
  if (!kind || isSeed()) return;
  testing = { kind, model: state.model, layer: sel.layer, head: sel.head };
  const change = { view: 'heatmap', query: null };
  if (kind === 'induction') {
    change[textKey()] = repeatedWords(info()?.probeWords, ++testDraws);
    blanks.sync(change[textKey()]);
  }
  update(change);
}

function renderCompare() {
  const sentences = compareSentences();
  if (!sentences.length) { ui.graphic.replaceChildren(el('p', { class: 'help', text: 'Type two or more sentences, one per line.' })); lastSvg = null; return; }
  // Draw only an answer for what is on screen (a newer one is on its way otherwise).
  if (!compared || compared.choice !== state.model || compared.pooling !== state.pooling || compared.sentences.join('\n') !== sentences.join('\n')) return;
  lastSvg = renderSimilarityView(ui.graphic, compared).svg;
}

function renderSteps(seedMode, sel) {
  ui.crossNote.hidden = true;
  ui.batchNote.hidden = true;
  if (seedMode) {
    lastSteps = seedSteps(seed, state, sel);
  } else {
    if (run.layer !== sel.layer) return; // the trace for this layer is on its way
    // run.cross.always: the model's own cross-attention (the encoder-decoder), not the GPT-2 toggle.
    if ((state.cross && info().features.cross) || run.cross?.always) {
      ui.crossNote.hidden = false;
      ui.crossNote.textContent = run.cross?.note ?? 'Cross-attention needs the layer input X of both sentences, which this build of the library does not trace. Showing self-attention.';
    }
    if (run.batch) {
      const { length: N, padded } = run.batch;
      ui.batchNote.hidden = false;
      ui.batchNote.textContent = `A batch of two: this sentence (${N - padded} tokens) and the other (${run.batch.tokens.length} tokens), both padded to ${N}. `
        + (padded ? `This sentence gets ${padded} [PAD] token${padded > 1 ? 's' : ''}: step 5's mask puts −∞ in their columns.`
          : 'This sentence is the longer one, so the other gets the padding: make this one shorter to see the mask here.');
    }
    lastSteps = modelSteps(run, info(), state, sel);
  }
  const t0 = performance.now();
  steps.render(lastSteps, { decimals: state.decimals, rows: seedMode ? null : { all: state.rows === 'all', query: lastData.tokens[sel.query] } });
  metrics.lastStepsMs = performance.now() - t0; // the DOM work, without the layout that follows
}

// ---- exports ---------------------------------------------------------------------------------

function currentSvg() {
  if (viewOf() !== 'steps') return lastSvg;
  const who = isSeed() ? 'tutorial example' : `layer ${lastSel.layer + 1}, head ${(lastSel.head === 'all' ? 0 : lastSel.head) + 1}`;
  return stepsToSvg(lastSteps, { decimals: state.decimals, title: `Attention step by step: ${who}, query “${tokenLabel(lastData.tokens[lastSel.query])}”` });
}

function exportJson() {
  const view = viewOf();
  const common = { url: location.href, modelName: isSeed() ? null : info()?.name };
  let doc, about;
  if (view === 'compare') {
    if (!compared) return;
    doc = similarityDocument({ ...common, compared });
    about = compared.sentences[0] ?? '';
  } else {
    about = isSeed() ? SEED_TOKENS.join(' ') : state.sentence;
    doc = attentionDocument({
      ...common, view, preset: state.preset, causal: isSeed() ? state.causal : info().causal, sentence: about, data: lastData, sel: lastSel,
      ...(isSeed() ? { seed, seedWeights: state.twoHeads ? { ...state.seed, ...TWO_HEADS } : state.seed } : { run }),
    });
  }
  download(fileName(view, about, 'json'), new Blob([jsonText(doc)], { type: 'application/json' }));
}

async function exportImage(kind) {
  const svgEl = currentSvg();
  if (!svgEl) return;
  const name = fileName(viewOf(), isSeed() ? 'write a poem' : state.sentence, kind);
  if (kind === 'svg') download(name, new Blob([svgText(svgEl)], { type: 'image/svg+xml' }));
  else download(name, await svgToPng(svgEl));
}

// ---- wiring ----------------------------------------------------------------------------------

ui.sentence.addEventListener('input', () => {
  if (isSeed()) return;
  if (textKey() === 'words') return update({ words: ui.sentence.value, query: null }, { debounce: true });
  blanks.sync(ui.sentence.value);
  update({ sentence: ui.sentence.value, query: null }, { debounce: true });
});
ui.attend.addEventListener('change', () => update({ attend: ui.attend.value, query: null }));

// "Continue the text": the worker generates through the model's KV cache and streams each token;
// the sentence grows and every token's run redraws the views with the newest token as the query.
function continueText() {
  if (generation || isSeed() || !info()?.features.generate) return;
  let text = state.sentence;
  ui.continueButton.hidden = true;
  ui.stopButton.hidden = false;
  busy(+1);
  generation = client.generate({ modelUrl: modelUrl(), text, maxNewTokens: 30, seed: generationSeed++ }, (token) => {
    text += token.text;
    update({ sentence: text, query: null });
  });
  generation.done.then((r) => {
    if (r && r.finishReason === 'eos') ui.status.textContent = 'The model ended the text (it predicted <|endoftext|>).';
  }, showError).finally(() => {
    generation = null;
    ui.continueButton.hidden = false;
    ui.stopButton.hidden = true;
    render(); // every line again
    busy(-1);
  });
}
ui.continueButton.addEventListener('click', continueText);
ui.stopButton.addEventListener('click', () => generation?.stop());
ui.pair.addEventListener('input', () => update({ pair: ui.pair.value, query: null }, { debounce: true }));
ui.second.addEventListener('input', () => update({ second: ui.second.value }, { debounce: true }));
ui.batchWith.addEventListener('input', () => update({ batchWith: ui.batchWith.value }, { debounce: true }));
ui.sentences.addEventListener('input', () => update({ sentences: ui.sentences.value.split('\n') }, { debounce: true }));
ui.pooling.addEventListener('change', () => update({ pooling: ui.pooling.value }));
ui.testHead.addEventListener('click', startHeadTest);
ui.layer.addEventListener('change', () => update({ layer: Number(ui.layer.value) }));
ui.head.addEventListener('change', () => update({ head: ui.head.value === 'all' ? 'all' : Number(ui.head.value) }));
ui.query.addEventListener('change', () => update({ query: Number(ui.query.value) }));
ui.causal.addEventListener('change', () => update({ causal: ui.causal.checked }));
ui.cross.addEventListener('change', () => update({ cross: ui.cross.checked }));
$('dkdv').addEventListener('change', () => update({ twoHeads: $('dkdv').checked, head: 0 }));
ui.batch.addEventListener('change', () => update({ batch: ui.batch.checked, query: null }));
ui.decimals.addEventListener('change', () => update({ decimals: Number(ui.decimals.value) }));
// Each preset keeps the layer and head it was left on, so a visit to the tutorial's example and
// back returns to the same head.
const presetSelection = new Map(); // 'seed' | model name -> { layer, head }
ui.presets.forEach((r) => r.addEventListener('change', () => {
  if (!r.checked) return;
  presetSelection.set(isSeed() ? 'seed' : state.model, { layer: state.layer, head: state.head });
  const change = r.value === 'seed' ? { preset: 'seed' } : { preset: 'model', model: r.value };
  if (r.value !== 'seed' && !(infos.get(r.value)?.features.fill ?? r.value === 'bert') && splitWords(state.sentence).some((w) => w.mask)) {
    // BERT's [MASK] means nothing to the other models (GPT-2 would read it as bytes): the words come back.
    change.sentence = blanks.reveal(state.sentence, (k) => run?.fill?.[k]?.predictions[0]?.text.replace(/^##/, ''));
  }
  update({ ...change, layer: 0, head: 0, ...presetSelection.get(r.value), query: null, cross: false, batch: false });
  if (r.value !== 'seed' && !presetSelection.has(r.value)) openOnClearestHead(r.value);
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
// A tab brings its view into sight: on a phone the tabs can sit at the bottom of the screen.
function showViewTop() {
  const top = $('view').getBoundingClientRect().top;
  if (top < 0 || top > window.innerHeight * 0.6) $('view').scrollIntoView({ block: 'start' });
}
ui.tabs.forEach((tab) => {
  tab.addEventListener('click', () => { update({ view: tab.dataset.view }); showViewTop(); });
  tab.addEventListener('keydown', (e) => {
    const moves = { ArrowRight: 1, ArrowLeft: -1 };
    if (!(e.key in moves)) return;
    const shown = ui.tabs.filter((t) => !t.hidden);
    const next = shown[(shown.indexOf(tab) + moves[e.key] + shown.length) % shown.length];
    update({ view: next.dataset.view });
    next.focus();
    e.preventDefault();
  });
});
$('export-svg').addEventListener('click', () => exportImage('svg').catch(showError));
$('export-png').addEventListener('click', () => exportImage('png').catch(showError));
$('export-json').addEventListener('click', () => { try { exportJson(); } catch (e) { showError(e); } });
window.addEventListener('popstate', () => { state = parseState(location.search); blanks.sync(state.sentence); syncControls(); recompute(); });

// Re-lay out the SVG views when the pane's width changes (rotating a phone, resizing a window).
let lastWidth = 0;
new ResizeObserver(([entry]) => {
  const w = Math.round(entry.contentRect.width);
  if (Math.abs(w - lastWidth) > 8 && viewOf() !== 'steps') { lastWidth = w; requestAnimationFrame(render); }
}).observe(ui.graphic);

// A model loaded from the Hugging Face Hub takes the place of the shipped model of its type.
initHubPanel({ client, onLoaded(type, hubModelUrl) {
  MODEL_URLS[type] = hubModelUrl;
  infos.delete(type);
  opened.delete(type); // the newly loaded model opens on its own clearest head too
  run = null;
  compared = null;
  update({ preset: 'model', model: type, layer: 0, head: 0, query: null, cross: false, batch: false });
  recompute();
} });

if (!VIEWS.includes(state.view)) state.view = 'heads';
syncControls();
recompute();
// While the model loads, after the page's first paint (laid out anyway): the views' widths and the
// labels' canvas font, which the first drawing would otherwise wait for (a forced layout and a
// font lookup, tens of ms in a cold browser).
requestAnimationFrame(() => setTimeout(() => {
  widthOf(ui.graphic);
  widthOf(ui.next);
  for (const weight of [400, 700]) textWidth('␣a', 13, weight);
}, 0));
