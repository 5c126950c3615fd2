// Draws the page from the page model: the tokens, the pickers, the panels around the view and the
// view itself, each view through the one table of views (views/registry.js).
import { modelViewData, seedViewData, clampSelection } from '../view_data.js';
import { SEED_NOTES } from '../seed_preset.js';
import { renderTokenChips } from '../token_chips.js';
import { renderInfoPanel, cardLink } from '../info_panel.js';
import { renderOrientation } from '../orientation.js';
import { continuesWord, byteRuns, byteNote } from '../word_groups.js';
import { viewNamed, canDraw, PANEL_VIEWS } from '../views/registry.js';
import { el } from '../views/dom.js';
import { mathName } from '../views/matrix.js';
import { syncPickers } from './controls.js';
import { metrics, firstViewDrawn } from './metrics.js';

// One line under the view; the labels' definitions fold out below it (#label-glossary).
const LABELS_HELP = ' Head labels are measured on held-out text; the number after a label is its score.';

/** The step view's notes for a model: its cross-attention, its padded batch. */
function stepNotes(page, ui) {
  const { run, state } = page;
  ui.crossNote.hidden = true;
  ui.batchNote.hidden = true;
  if (page.isSeed || run.layer !== page.last.sel.layer) return;
  // run.cross.always: the model's own cross-attention (the encoder-decoder), not the GPT-2 toggle.
  if ((state.cross && page.info.features.cross) || run.cross?.always) {
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
}

/** The comparison to draw: an answer for the sentences on screen, an empty one for no sentences,
 * or null while the answer is on its way. */
function comparison(page) {
  const sentences = page.compareSentences, { compared } = page;
  if (!sentences.length) return { sentences: [] };
  if (!compared || compared.choice !== page.state.model || compared.pooling !== page.state.pooling || compared.sentences.join('\n') !== sentences.join('\n')) return null;
  return compared;
}

/**
 * The step view opens on the mask: the first time it is drawn after the learner switched to it (or
 * the page opened on it), the masked-scores step scrolls to the top of the screen, its whole S x S
 * matrix with the −∞ cells in sight. Later redraws (another query, typing) leave the scroll alone.
 */
function maskOpener(page, steps) {
  return (drawn, view, seedMode) => {
    if (view.pane !== 'steps') { page.last.openedSteps = false; return; }
    if (!drawn || page.last.openedSteps || seedMode) return;
    page.last.openedSteps = true;
    requestAnimationFrame(() => steps.openOn('maskedScores'));
  };
}

/** The generate view's host part (views/generate_view.js): the text (an encoder-decoder's chosen
 * word), the sampling panel's temperature and top-k, 20 new tokens. */
function generation(page, start) {
  const { state } = page, text = state[page.textKey];
  return { key: `${page.modelUrl}\n${text}\n${state.word}`, start,
    request: { text, wordIndex: state.word, maxNewTokens: 20, temperature: state.temperature, topK: state.topK, seed: 1 } };
}

/** deps: { headTest (head_test_panel.js), ablation (ablation_panel.js), stateUrl(), steps (the
 * StepsView), sampling (sampling_panel.js), on: the views' actions ({ select, selectWord, toggleMask }), afterPaint, requestRun,
 * startGeneration(request, onEvent): the worker's generate for the page's model }. */
export function pageRenderer(page, ui, { headTest, ablation, sampling, stateUrl, steps, on, afterPaint, requestRun, startGeneration }) {
  const openOnMask = maskOpener(page, steps);
  return function render() {
    const { state, run, seed } = page;
    const seedMode = page.isSeed;
    const m = page.info;
    if (seedMode ? !seed : !(run && m && run.choice === state.model)) return;
    const view = viewNamed(page.view);
    const data = seedMode ? seedViewData(seed, state) : modelViewData(run, m);
    const sel = clampSelection(state, data.nLayer, data.nHead, data.tokens.length, data.defaultQuery);
    data.test = headTest.show(data, sel, view.name);
    page.last.data = data; page.last.sel = sel;
    ablation.show();
    if (!seedMode) sampling.show();
    ablation.offerIn(ui.headTest);
    if (!seedMode) ui.causal.checked = !!(run.causal ?? m.causal); // an encoder-decoder's depends on the attention shown
    const showTypes = !seedMode && !!run.tokenTypes?.some((t) => t === 1);
    // The pieces of each word share an underline; byte chips say which character they spell.
    const continues = seedMode ? null : continuesWord(data.tokens, { type: m.type, text: state[page.textKey] });
    renderTokenChips(ui.tokens, data.tokens, { query: sel.query, tokenTypes: seedMode ? null : run.tokenTypes, showTypes, padding: seedMode ? null : run.padding,
      continues, byteRuns: byteRuns(data.tokens) });
    ui.bytesNote.textContent = byteNote(data.tokens);
    ui.bytesNote.hidden = !ui.bytesNote.textContent;
    ui.typesLegend.hidden = !showTypes;
    syncPickers(ui, data, sel);
    const back = new URL(stateUrl(), location.href).href;
    renderInfoPanel(ui.modelInfo, { seed: seedMode, info: seedMode ? [...page.infos.values()].find(Boolean) ?? null : m, run, modelUrl: page.modelUrl, back });
    renderOrientation(ui.orientation, { toModels: true, ...(seedMode ? { seed: true } : { info: m, ...cardLink(m, page.modelUrl, back) }) });
    const labelled = !seedMode && !!view.heads && !!(run.headLabels ?? m.headLabels) && !!m.text.headLabelNote;
    ui.help.textContent = view.help + (labelled ? LABELS_HELP : '')
      + (seedMode && state.cross ? ' Cross-attention is on (switch it in the step view): the keys and values come from “escribe un poema”.' : '');
    ui.glossary.hidden = !labelled;
    if (labelled) ui.glossaryText.textContent = m.text.headLabelNote;

    ui.graphic.hidden = view.pane === 'steps';
    ui.stepsPane.hidden = view.pane !== 'steps';
    ui.comparePane.hidden = view.needs.data !== 'similarity';
    // While text streams in, the head view redraws only the newest token's lines; the other views wait.
    if (page.generation && !view.streams) return;
    if (view.pane === 'steps') stepNotes(page, ui);
    const c = { data, sel, result: seedMode ? seed : run, info: seedMode ? null : m, state, seed: seedMode, on, stepsView: () => steps,
      onlyQuery: page.generation ? sel.query : null, generate: view.name === 'generate' ? generation(page, startGeneration) : null };
    if (view.needs.data === 'similarity') {
      c.result = comparison(page);
      c.emptyNote = el('p', { class: 'help', text: 'Type two or more sentences, one per line.' });
    }
    const drawn = c.result && view.render(view.pane === 'steps' ? ui.stepsBody : ui.graphic, c);
    if (drawn) {
      if (view.pane === 'steps') { page.last.steps = drawn.steps; metrics.lastStepsMs = drawn.ms; } else page.last.svg = drawn.svg;
    }
    openOnMask(drawn, view, seedMode);

    // The side panels: each view the model can draw beside the picture.
    for (const panel of PANEL_VIEWS) if (!seedMode && canDraw(panel, m)) panel.render(ui.panels[panel.name].body, { ...c, result: run, inPanel: true });
    ui.seedNotes.replaceChildren(...SEED_NOTES.map((t) => el('li', {}, mathName(t))));

    firstViewDrawn(!seedMode && !!run.partial);
    // A partial run (the first view's) once drawn: ask for the whole of it once it is on screen.
    if (!seedMode && run.partial) {
      run.partial = false;
      afterPaint(() => { if (!page.isSeed) requestRun(); });
    }
    document.body.dataset.renderCount = String(Number(document.body.dataset.renderCount ?? 0) + 1);
  };
}
