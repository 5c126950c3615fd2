// Keeps the page's controls in step with the state and the model: which show, their values, the
// layer / head / query pickers, the tabs.
import { MODEL_URLS } from '../model_urls.js';
import { SEED_TOKENS } from '../seed_preset.js';
import { TOKEN_MARKS } from '../token_marks.js';
import { viewNamed, canDraw, PANEL_VIEWS } from '../views/registry.js';
import { el, tokenLabel } from '../views/dom.js';
import { kvSuffix } from '../views/kv_groups.js';

const SEED_HELP = 'The tutorial’s three words, each given as two numbers; edit the numbers (and the weights) in the step view.';

/** Sets a <select>'s options, keeping those already right (while text streams, only new tokens are added). */
function options(select, items, selected) {
  const have = select.options;
  let same = 0;
  while (same < Math.min(have.length, items.length) && have[same].value === String(items[same][0]) && have[same].text === items[same][1]) same++;
  while (have.length > same) have[have.length - 1].remove();
  select.append(...items.slice(same).map(([value, label]) => el('option', { value, text: label })));
  select.value = String(selected);
}

export function syncControls(page, ui) {
  const { state } = page;
  const seedMode = page.isSeed;
  const m = page.info;
  const features = seedMode ? { cross: true } : m?.features ?? {};
  ui.presets.forEach((r) => {
    r.checked = r.value === (seedMode ? 'seed' : state.model);
    if (r.value !== 'seed' && !MODEL_URLS[r.value]) { r.disabled = true; r.parentElement.title = 'This build of the demo has no such model'; }
  });
  if (document.activeElement !== ui.sentence) ui.sentence.value = seedMode ? SEED_TOKENS.join(' ') : state[page.textKey];
  ui.sentenceLabel.textContent = page.textKey === 'words' ? 'Words' : 'Sentence';
  ui.marksLegend.textContent = seedMode || !TOKEN_MARKS[state.model] ? '' : `· ${TOKEN_MARKS[state.model].text}`;
  ui.marksLegend.hidden = !ui.marksLegend.textContent;
  ui.attendLabel.hidden = !features.attend;
  ui.attend.value = state.attend;
  ui.continueButton.parentElement.hidden = seedMode || !features.generate || page.view === 'generate'; // (the view has its own button)
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
  ui.twoHeadsCheck.hidden = !seedMode;
  ui.twoHeads.checked = seedMode && state.twoHeads;
  ui.cross.checked = state.cross && !!features.cross;
  ui.secondLabel.hidden = !(state.cross && features.cross) || seedMode;
  if (document.activeElement !== ui.second) ui.second.value = state.second;
  ui.batchCheck.hidden = !features.batch;
  ui.batch.checked = state.batch && !!features.batch;
  ui.batchLabel.hidden = !(state.batch && features.batch);
  if (document.activeElement !== ui.batchWith) ui.batchWith.value = state.batchWith;
  if (document.activeElement !== ui.sentences) ui.sentences.value = state.sentences.join('\n');
  ui.pooling.value = state.pooling;
  // A side panel and a tab show when the model can draw their view.
  for (const view of PANEL_VIEWS) ui.panels[view.name].panel.hidden = seedMode || !canDraw(view, m);
  ui.seedPanel.hidden = !seedMode;
  const view = page.view;
  for (const tab of ui.tabs) {
    tab.hidden = !canDraw(viewNamed(tab.dataset.view), seedMode ? null : m);
    const on = tab.dataset.view === view;
    tab.setAttribute('aria-selected', on ? 'true' : 'false');
    tab.tabIndex = on ? 0 : -1;
  }
  ui.view.setAttribute('aria-labelledby', `tab-${view}`);
  document.body.dataset.view = view;
  document.body.dataset.preset = seedMode ? 'seed' : state.model;
}

/** The layer, head and query pickers for the data drawn (a head's label beside its number). */
export function syncPickers(ui, data, sel) {
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
