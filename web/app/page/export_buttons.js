// The export buttons: the view on screen as SVG or PNG, and its numbers as JSON.
import { SEED_TOKENS, TWO_HEADS } from '../seed_preset.js';
import { svgText, svgToPng, jsonText, download, fileName } from '../export.js';
import { attentionDocument, generationDocument, rolloutDocument, similarityDocument } from '../export_docs.js';
import { rolloutOf } from '../views/rollout_view.js';
import { generationRecord } from '../views/generate_view.js';
import { stepsToSvg } from '../views/steps_svg.js';
import { tokenLabel } from '../views/dom.js';
import { viewNamed } from '../views/registry.js';
import { showError } from './status.js';

export function wireExports(page, ui) {
  function currentSvg() {
    const { last, state } = page;
    if (viewNamed(page.view).pane !== 'steps') return last.svg;
    const who = page.isSeed ? 'tutorial example' : `layer ${last.sel.layer + 1}, head ${(last.sel.head === 'all' ? 0 : last.sel.head) + 1}`;
    return stepsToSvg(last.steps, { decimals: state.decimals, title: `Attention step by step: ${who}, query “${tokenLabel(last.data.tokens[last.sel.query])}”` });
  }

  function exportJson() {
    const { state, last, compared } = page, seedMode = page.isSeed, view = page.view;
    const common = { url: location.href, modelName: seedMode ? null : page.info?.name };
    let doc, about;
    if (view === 'compare') {
      if (!compared) return;
      doc = similarityDocument({ ...common, compared });
      about = compared.sentences[0] ?? '';
    } else if (view === 'generate') {
      const record = generationRecord(ui.graphic);
      if (!record) return; // (nothing generated yet)
      about = state[page.textKey];
      doc = generationDocument({ ...common, text: about, record });
    } else if (view === 'rollout' && !last.data.keyTokens) {
      about = seedMode ? SEED_TOKENS.join(' ') : state.sentence;
      doc = rolloutDocument({ ...common, causal: seedMode ? state.causal : page.info.causal, sentence: about, data: last.data, sel: last.sel,
        rollout: rolloutOf(last.data), run: seedMode ? null : page.run });
    } else {
      about = seedMode ? SEED_TOKENS.join(' ') : state.sentence;
      doc = attentionDocument({
        ...common, view, preset: state.preset, causal: seedMode ? state.causal : page.info.causal, sentence: about, data: last.data, sel: last.sel,
        ...(seedMode ? { seed: page.seed, seedWeights: state.twoHeads ? { ...state.seed, ...TWO_HEADS } : state.seed } : { run: page.run }),
      });
    }
    download(fileName(view, about, 'json'), new Blob([jsonText(doc)], { type: 'application/json' }));
  }

  async function exportImage(kind) {
    const svgEl = currentSvg();
    if (!svgEl) return;
    const name = fileName(page.view, page.isSeed ? 'write a poem' : page.state.sentence, kind);
    if (kind === 'svg') download(name, new Blob([svgText(svgEl)], { type: 'image/svg+xml' }));
    else download(name, await svgToPng(svgEl));
  }

  ui.exportSvg.addEventListener('click', () => exportImage('svg').catch(showError));
  ui.exportPng.addEventListener('click', () => exportImage('png').catch(showError));
  ui.exportJson.addEventListener('click', () => { try { exportJson(); } catch (e) { showError(e); } });
}
