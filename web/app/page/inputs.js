// The learner's input: each control, the token chips and the tabs turned into state changes.
import { parseState, defaultState } from '../state.js';
import { splitWords } from '../masking.js';
import { listenToChips } from '../token_chips.js';

/** deps: { update(change, { debounce }), recompute(), syncControls(), steps (the StepsView),
 * openingHeads (opening_head.js), startHeadTest() }. */
export function wireInputs(page, ui, { update, recompute, syncControls, steps, openingHeads, startHeadTest }) {
  ui.sentence.addEventListener('input', () => {
    if (page.isSeed) return;
    if (page.textKey === 'words') return update({ words: ui.sentence.value, query: null }, { debounce: true });
    page.blanks.sync(ui.sentence.value);
    update({ sentence: ui.sentence.value, query: null }, { debounce: true });
  });
  ui.attend.addEventListener('change', () => update({ attend: ui.attend.value, query: null }));
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
  ui.twoHeads.addEventListener('change', () => update({ twoHeads: ui.twoHeads.checked, head: 0 }));
  ui.batch.addEventListener('change', () => update({ batch: ui.batch.checked, query: null }));
  ui.decimals.addEventListener('change', () => update({ decimals: Number(ui.decimals.value) }));

  // Each preset keeps the layer and head it was left on, so a visit to the tutorial's example and
  // back returns to the same head.
  const presetSelection = new Map(); // 'seed' | model name -> { layer, head }
  const guess = (k) => page.run?.fill?.[k]?.predictions[0]?.text.replace(/^##/, '');
  ui.presets.forEach((r) => r.addEventListener('change', () => {
    if (!r.checked) return;
    const { state } = page;
    presetSelection.set(page.isSeed ? 'seed' : state.model, { layer: state.layer, head: state.head });
    const change = r.value === 'seed' ? { preset: 'seed' } : { preset: 'model', model: r.value };
    if (r.value !== 'seed' && !(page.infos.get(r.value)?.features.fill ?? r.value === 'bert') && splitWords(state.sentence).some((w) => w.mask)) {
      // BERT's [MASK] means nothing to the other models (GPT-2 would read it as bytes): the words come back.
      change.sentence = page.blanks.reveal(state.sentence, guess);
    }
    update({ ...change, layer: 0, head: 0, ...presetSelection.get(r.value), query: null, cross: false, batch: false });
    if (r.value !== 'seed' && !presetSelection.has(r.value)) openingHeads.open(r.value);
  }));
  ui.seedReset.addEventListener('click', () => {
    page.state = { ...page.state, seed: defaultState().seed };
    steps.signature = null; // rebuild so the inputs show the defaults again
    update({ causal: false });
    recompute();
  });

  listenToChips(ui.tokens, (query) => update({ query }));

  // A tab brings its view into sight: on a phone the tabs can sit at the bottom of the screen.
  function showViewTop() {
    const top = ui.view.getBoundingClientRect().top;
    if (top < 0 || top > window.innerHeight * 0.6) ui.view.scrollIntoView({ block: 'start' });
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

  window.addEventListener('popstate', () => {
    page.state = parseState(location.search);
    page.blanks.sync(page.state.sentence);
    syncControls();
    recompute();
  });
}
