// The next-token panel's sampling controls: temperature and top-k, what "Continue the text" draws
// each token from, and that distribution's most likely tokens (the worker's samplingList, from the
// run's logits) under the model's own probabilities.
import { el, tokenLabel } from '../views/dom.js';
import { percent } from '../views/next_token_view.js';

export function samplingPanel(page, ui, { update }) {
  ui.temperature.addEventListener('input', () => {
    ui.temperatureValue.textContent = ui.temperature.value;
    update({ temperature: Number(ui.temperature.value) }, { debounce: true });
  });
  ui.topK.addEventListener('change', () => update({ topK: Number(ui.topK.value) }));

  /** The controls as the state has them, and the distribution when the run has it for them. */
  function show() {
    const { state, run } = page;
    if (document.activeElement !== ui.temperature) ui.temperature.value = String(state.temperature);
    ui.temperatureValue.textContent = String(state.temperature);
    ui.topK.value = String(state.topK);
    const s = run?.sampling;
    if (!s || s.temperature !== state.temperature || s.topK !== state.topK) return void ui.sampling.replaceChildren();
    const rows = s.predictions.filter((p) => p.probability > 0).map((p) => el('tr', { 'data-token-id': p.id },
      el('td', { text: `“${tokenLabel(p.text)}”` }), el('td', { class: 'num', 'data-probability': p.probability, text: percent(p.probability) })));
    ui.sampling.replaceChildren(el('table', { class: 'sampling-table', 'aria-label': `Sampling at temperature ${s.temperature}, top-${s.topK || 'all'}` },
      el('tbody', {}, rows)));
  }

  return { show };
}
