// The demo page's controller: wires the controls to the state, the state to the URL and the
// worker, and the worker's answers to the views. All computing happens in the worker
// (compute_client.js). Nothing here depends on which model runs: the worker describes each (its
// info: shape, features, words) and answers every model's run in one shape; every view is drawn
// through the one table of views (views/registry.js), as the widget draws them.
//
// Its parts, each in page/: what the page holds (page_model.js), the worker requests
// (requests.js), the URL (url_state.js), the opening head (opening_head.js), the controls
// (controls.js, ui.js), the learner's input (inputs.js), the drawing (render.js), "Test this
// head" (head_test_panel.js), "Continue the text" (generation.js), the exports
// (export_buttons.js), the pending-work flag and timings the tests read (pending_work.js, metrics.js).
import { computeClient } from './compute_client.js';
import { parseState, VIEWS } from './state.js';
import { DEMO_WORKER_URL, MODEL_URLS } from './model_urls.js';
import { initHubPanel } from './hub_panel.js';
import { StepsView } from './views/steps_view.js';
import { VIEW_CSS } from './views/view_styles.js';
import { el, widthOf } from './views/dom.js';
import { textWidth } from './views/measure.js';
import { PageModel } from './page/page_model.js';
import { pendingWork } from './page/pending_work.js';
import { computeRequests, TYPING_DEBOUNCE_MS } from './page/requests.js';
import { urlState } from './page/url_state.js';
import { openingHeads } from './page/opening_head.js';
import { pageElements } from './page/ui.js';
import { syncControls as syncControlsOf } from './page/controls.js';
import { headTestPanel } from './page/head_test_panel.js';
import { ablationPanel } from './page/ablation_panel.js';
import { samplingPanel } from './page/sampling_panel.js';
import { pageRenderer } from './page/render.js';
import { wireInputs } from './page/inputs.js';
import { textContinuation } from './page/generation.js';
import { wireExports } from './page/export_buttons.js';

const client = computeClient(DEMO_WORKER_URL); // (adopts the worker index.html's head started)
const page = new PageModel(parseState(location.search));
if (!MODEL_URLS[page.state.model]) page.state.model = 'gpt2';
const work = pendingWork(document.getElementById('app'));
const url = urlState(page, work);
const opening = openingHeads(page, { update });
const requests = computeRequests(page, {
  client, work, draw: () => render(),
  onInfo(model) { opening.open(model); syncControls(); },
});

// Start the work before touching the DOM: the model download overlaps the page setup.
requests.requestInfo(page.state.model);

const ui = pageElements();
document.head.append(el('style', { text: VIEW_CSS }));

const steps = new StepsView(ui.stepsBody, {
  edit: onSeedEdit,
  selectQuery: (i) => update({ query: i }),
  showRows: (all) => update({ rows: all ? 'all' : 'query' }),
});
const headTest = headTestPanel(page, ui, { update });
const ablation = ablationPanel(page, ui, { update });
const sampling = samplingPanel(page, ui, { update });
ui.switchHead.addEventListener('click', () => ablation.toggle());
const render = pageRenderer(page, ui, {
  headTest, ablation, sampling, stateUrl: url.stateUrl, steps, afterPaint: work.afterPaint, requestRun: requests.requestRun,
  startGeneration: (request, onEvent) => client.generate({ modelUrl: page.modelUrl, ...request, attention: true }, onEvent),
  // What the learner does inside a view.
  on: { select: (change) => update(change), selectWord: (i) => update({ word: i, query: null }), toggleMask },
});
const syncControls = () => syncControlsOf(page, ui);

// ---- state changes ---------------------------------------------------------------------------

const RUN_INPUTS = ['preset', 'model', 'sentence', 'causal', 'twoHeads', 'cross', 'second', 'pair', 'batch', 'batchWith', 'words', 'word', 'attend', 'off', 'temperature', 'topK'];
const COMPARE_INPUTS = ['sentences', 'pooling'];

/** Applies a partial state change; recomputes when the inputs of the computation changed. */
function update(change, { debounce = false } = {}) {
  const before = page.state;
  // Switched-off heads belong to one model: another model (or the tutorial's example) starts whole.
  if (('model' in change && change.model !== before.model) || ('preset' in change && change.preset !== before.preset)) change = { off: [], ...change };
  const state = page.state = { ...before, ...change };
  url.writeSoon();
  const changed = (k) => k in change && change[k] !== before[k];
  const runChanged = RUN_INPUTS.some(changed) || (changed('layer') && !page.isSeed);
  const compareChanged = COMPARE_INPUTS.some(changed) || changed('model') || (changed('view') && state.view === 'compare');
  if (changed('model') || changed('preset')) page.compared = null;
  if (runChanged) {
    if (debounce) requests.recomputeSoon(); else requests.recompute();
  } else if (compareChanged && page.view === 'compare') {
    if (debounce) requests.recomputeSoon(TYPING_DEBOUNCE_MS * 3, requests.requestCompare); else requests.requestCompare();
  }
  syncControls();
  // While typing, nothing visible changes until the worker answers (render() then runs).
  if (!debounce) render();
}

/** An edited number of the tutorial's example (the step view's cells). */
function onSeedEdit(key, index, text) {
  const v = Number(String(text).trim().replace(/\u2212/g, '-'));
  if (String(text).trim() === '' || !Number.isFinite(v)) return; // the cell shows itself invalid
  const seedValues = { ...page.state.seed, [key]: page.state.seed[key].slice() };
  seedValues[key][index] = v;
  page.state = { ...page.state, seed: seedValues };
  url.writeSoon();
  requests.recomputeSoon(40);
}

/** Fill in the blank: word i of the sentence becomes [MASK], or a [MASK] gets its word back. */
function toggleMask(i) {
  // A typed [MASK] hid no word: it takes the model's best guess.
  const next = page.blanks.toggle(page.state.sentence, i, (k) => page.run?.fill?.[k]?.predictions[0]?.text.replace(/^##/, ''));
  if (next !== null) update({ sentence: next, query: null });
}

// ---- wiring ----------------------------------------------------------------------------------

wireInputs(page, ui, { update, recompute: requests.recompute, syncControls, steps, openingHeads: opening, startHeadTest: headTest.start });
textContinuation(page, ui, { client, busy: work.busy, update, draw: render });
wireExports(page, ui);

// Re-lay out the SVG views when the pane's width changes (rotating a phone, resizing a window).
let lastWidth = 0;
new ResizeObserver(([entry]) => {
  const w = Math.round(entry.contentRect.width);
  if (Math.abs(w - lastWidth) > 8 && page.view !== 'steps') { lastWidth = w; requestAnimationFrame(render); }
}).observe(ui.graphic);

// A model loaded from the Hugging Face Hub takes the place of the shipped model of its type.
initHubPanel({ client, onLoaded(type, hubModelUrl) {
  MODEL_URLS[type] = hubModelUrl;
  page.infos.delete(type);
  opening.forget(type); // the newly loaded model opens on its own clearest head too
  page.run = null;
  page.compared = null;
  update({ preset: 'model', model: type, layer: 0, head: 0, query: null, cross: false, batch: false, off: [] });
  requests.recompute();
} });

if (!VIEWS.includes(page.state.view)) page.state.view = 'heads';
syncControls();
requests.recompute();
// While the model loads, after the page's first paint (laid out anyway): the views' widths and the
// labels' canvas font, which the first drawing would otherwise wait for (a forced layout and a
// font lookup, tens of ms in a cold browser).
requestAnimationFrame(() => setTimeout(() => {
  widthOf(ui.graphic);
  widthOf(ui.panels.next.body);
  for (const weight of [400, 700]) textWidth('␣a', 13, weight);
}, 0));
