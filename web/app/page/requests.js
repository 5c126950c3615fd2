// The page's requests to the worker (compute_client.js): a model's description, a run of the
// sentence, the tutorial's example, a comparison of sentences; typing debounces them. Every
// answer lands in the page model and is drawn by `draw`.
import { MODEL_URLS } from '../model_urls.js';
import { TWO_HEADS } from '../seed_preset.js';
import { metrics, beforeFirstView } from './metrics.js';
import { showError, showNote } from './status.js';

export const TYPING_DEBOUNCE_MS = 120;

/** deps: { client, work (pending_work.js), onInfo(model) (a description arrived), draw() }. */
export function computeRequests(page, { client, work, onInfo, draw }) {
  const { busy, track } = work;

  function requestInfo(model) {
    if (page.infos.has(model) || !MODEL_URLS[model]) return;
    page.infos.set(model, null);
    track(client.request('model', { modelUrl: MODEL_URLS[model] })).then((r) => {
      page.infos.set(model, r);
      if (model === page.state.model) metrics.modelReady ??= performance.now();
      onInfo(model);
      if (page.view === 'compare' && !page.compared) requestCompare();
      draw();
    }, (e) => { page.infos.delete(model); showError(e); });
  }

  async function requestRun() {
    const { state } = page, model = state.model;
    // Every model's run takes the same payload; each uses the parts its features need.
    const payload = {
      modelUrl: page.modelUrl, text: state[page.textKey], layer: state.layer, topK: 8,
      crossText: state.cross ? state.second : null, pair: state.pair, batchWith: state.batch ? state.batchWith : null,
      wordIndex: state.word, attend: state.attend,
      // The before-and-after panel's switched-off heads (the run adds the predictions without them).
      ablate: state.off.length ? state.off : null,
      // The next-token panel's sampling controls (what "Continue the text" draws from).
      sampling: { temperature: state.temperature, topK: state.topK },
      // The self-check of X (X W^Q + b^Q = the trace's Q, shown to tests by the step view) costs a
      // cold page tens of ms: the first run skips it unless the page opens on the step view.
      check: page.view === 'steps' || !beforeFirstView(),
      // The first view asks for what it draws first (a model may leave out some of its result:
      // partial, e.g. GPT-2's sentence loss); the whole run follows once that view is on screen.
      quick: beforeFirstView(),
    };
    try {
      const r = await track(client.request('run', payload, 'page-run'));
      if (!r) return; // superseded by newer typing
      page.run = { ...r, choice: model };
      metrics.lastRunMs = r.ms;
      showNote(r.truncated ? `The sentence was cut to the model's ${page.info?.maxTokens ?? ''} tokens.` : '');
      draw();
    } catch (e) { showError(e); }
  }

  async function requestSeed() {
    const { state } = page, s = state.seed;
    try {
      // Two heads, d_k ≠ d_v: the tutorial's X (and Y) with the fixed two-head weights.
      const w = state.twoHeads ? TWO_HEADS : s;
      const r = await track(client.request('seed', { x: s.x, y: state.cross ? s.y : null, wQ: w.wQ, wK: w.wK, wV: w.wV, wO: w.wO, causal: state.causal,
        ...(state.twoHeads ? { heads: TWO_HEADS.config } : {}) }, 'page-seed'));
      if (!r) return;
      page.seed = r;
      showNote('');
      draw();
    } catch (e) { showError(e); }
  }

  async function requestCompare() {
    if (page.isSeed || !page.info?.features.compare) return;
    const sentences = page.compareSentences;
    if (!sentences.length) { page.compared = null; draw(); return; }
    const model = page.state.model;
    try {
      const r = await track(client.request('compare', { modelUrl: page.modelUrl, sentences, pooling: page.state.pooling }, 'page-compare'));
      if (!r) return;
      page.compared = { ...r, choice: model };
      draw();
    } catch (e) { showError(e); }
  }

  function recompute() {
    // The run request may go before the model info arrives: the worker loads the model once.
    if (page.isSeed) return requestSeed();
    requestInfo(page.state.model);
    if (page.view === 'compare') requestCompare(); // (before the model's info arrives, its arrival asks)
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

  return { requestInfo, requestRun, requestCompare, recompute, recomputeSoon };
}
