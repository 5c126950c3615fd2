// Every view of the demo, in one table: the page (main.js) and the <attention-view> widget
// (attention_view.js) both draw through it, so a view is added, described and drawn in one place.
//
// An entry:
//   name      the view's name (the URL's view=, the widget's view attribute)
//   page      where the demo page shows it: 'tab' (a tab over the picture), 'panel' (a side panel
//             beside it, drawn whenever the model can) or null (the widget only)
//   pane      'graphic' (an SVG picture: exportable, re-laid out on resize) or 'steps' (the step view's tables)
//   needs     what it draws from: data 'attention' (a run: the views of the heads) or 'similarity' (a
//             comparison of sentences); feature: the model's features[...] it needs (none: every
//             model and the tutorial's example); model: in words, for the widget's note when missing
//   heads     whether it shows the chosen head (its label, its test)
//   streams   whether it redraws while text streams in (cheap: one query's lines)
//   help      the line under the view on the page
//   title(c)  the widget's title over it
//   render(target, c) draws into target; returns { svg } (the picture to export; null for none),
//             or null when nothing was drawn yet (the answer it needs is on its way)
//
// c, the context a host gives: { data, sel (the clamped selection), result (the run, the seed's
// answer or the comparison), info (the model's description; null for the tutorial's example),
// state, seed (true for the tutorial's example), on: { select(change), selectWord(i),
// toggleMask(i) }, stepsView() (the host's StepsView for the target), onlyQuery, inPanel, emptyNote }.
import { renderHeadView } from './head_view.js';
import { renderModelView } from './model_view.js';
import { renderHeatmapView } from './heatmap_view.js';
import { renderRolloutView } from './rollout_view.js';
import { renderNextTokenView } from './next_token_view.js';
import { renderFillMaskView } from './fill_mask_view.js';
import { renderPronunciationView } from './pronunciation_view.js';
import { renderSimilarityView } from './similarity_view.js';
import { renderGenerateView } from './generate_view.js';
import { kvSuffix } from './kv_groups.js';
import { modelSteps, seedSteps } from '../view_data.js';
import { splitWords } from '../masking.js';

const headText = ({ data, sel }) => (sel.head === 'all' ? 'all heads' : `head ${sel.head + 1}${kvSuffix(data, sel.head)}`);

/** The title of a view of one head: layer, head and which attention. */
const headTitle = (c) => `Layer ${c.sel.layer + 1} · ${headText(c)}${c.result.attend ? ` · ${c.result.attend === 'cross' ? 'cross-attention' : `${c.result.attend} self-attention`}` : ''}`;

const NEXT_WORD = 'a model that predicts the next word (model="gpt2")';

export const VIEW_LIST = [
  {
    name: 'heads', page: 'tab', pane: 'graphic', needs: { data: 'attention' }, heads: true, streams: true,
    help: 'Lines join each query token (left) to the keys it attends to (right); darker means more attention. Hover or focus a token to isolate its lines. Pick “all heads” to overlay them.',
    title: headTitle,
    render: (target, c) => ({ svg: renderHeadView(target, c.data, c.sel, c.on, { onlyQuery: c.onlyQuery ?? null }).svg }),
  },
  {
    name: 'model', page: 'tab', pane: 'graphic', needs: { data: 'attention' }, heads: true,
    help: 'Every layer × every head. Each square is a heatmap (rows: queries, columns: keys). Click one, or focus it and press Enter, to open it.',
    title: ({ data }) => `${data.nLayer} layers × ${data.nHead} heads${data.kvHeadOf ? ` in ${new Set(data.kvHeadOf).size} K/V groups` : ''}: click one to open it`,
    render: (target, c) => ({ svg: renderModelView(target, c.data, c.sel, c.on).svg }),
  },
  {
    name: 'heatmap', page: 'tab', pane: 'graphic', needs: { data: 'attention' }, heads: true, showsTest: true,
    help: 'Rows are queries, columns are keys; each row sums to 1. Hover a cell for its exact weight, or focus the map and use the arrow keys.',
    title: headTitle,
    render: (target, c) => ({ svg: renderHeatmapView(target, c.data, { ...c.sel, head: c.sel.head === 'all' ? 0 : c.sel.head }, c.on).svg }),
  },
  {
    name: 'rollout', page: 'tab', pane: 'graphic', needs: { data: 'attention' },
    help: 'Attention through the layers (attention rollout, Abnar & Zuidema 2020): each layer’s heads averaged, half of every row kept for the token itself (the residual stream), and the layers multiplied up to the chosen one. Row i: how much of each input token has reached position i. Pick a layer to follow it deeper.',
    title: ({ sel }) => `Attention rollout through layer ${sel.layer + 1}`,
    render: (target, c) => ({ svg: renderRolloutView(target, c.data, c.sel, c.on).svg }),
  },
  {
    name: 'steps', page: 'tab', pane: 'steps', needs: { data: 'attention' }, streams: true,
    help: 'The computation of the chosen head for the chosen query token, with the real numbers, in the order the tutorial teaches it. The bar jumps to any step; it opens on the mask. Pick another query token to follow its row.',
    title: headTitle,
    render(target, c) {
      if (!c.seed && c.result.layer !== c.sel.layer) return null; // the trace for this layer is on its way
      const steps = c.seed ? seedSteps(c.result, c.state, c.sel) : modelSteps(c.result, c.info, c.state, c.sel);
      const view = c.stepsView();
      const t0 = performance.now();
      view.render(steps, { decimals: c.state.decimals, rows: c.seed ? null : { all: c.state.rows === 'all', query: c.data.tokens[c.sel.query], tokens: c.data.tokens, index: c.sel.query } });
      return { svg: null, steps, ms: performance.now() - t0 }; // ms: the DOM work, without the layout that follows
    },
  },
  {
    name: 'compare', page: 'tab', pane: 'graphic', needs: { data: 'similarity', feature: 'compare' },
    help: 'Each sentence becomes one vector (from the last layer); each cell is the cosine similarity of two of them: 1 on the diagonal, higher for sentences the model finds alike, so similar sentences form darker blocks. A model trained only to fill in blanks was never taught to compare sentences, so the contrasts are modest: the colours span just the range the values take.',
    title: () => 'Which sentences does the model find alike?',
    render(target, c) {
      if (!c.result.sentences.length) { target.replaceChildren(c.emptyNote); return { svg: null }; }
      return { svg: renderSimilarityView(target, c.result).svg };
    },
  },
  {
    name: 'next', page: 'panel', pane: 'graphic', needs: { data: 'attention', feature: 'next', model: NEXT_WORD },
    help: 'The model’s next-token predictions after the sentence, most likely first.',
    title: () => 'The model’s next-token predictions',
    render: (target, c) => renderNextTokenView(target, { predictions: c.result.predictions, endOfText: c.result.endOfText }, c.inPanel ? { title: false } : undefined),
  },
  {
    name: 'fill', page: 'panel', pane: 'graphic', needs: { data: 'attention', feature: 'fill', model: 'a masked-language model (model="bert")' },
    help: 'Fill in the blank: click a word to hide it behind [MASK], click a [MASK] to put the word back; the model’s guesses for every blank.',
    title: () => 'Fill in the blank: click a word to mask it',
    render(target, c) {
      renderFillMaskView(target, { words: splitWords(c.state.sentence), fill: c.result.fill }, { toggle: c.on.toggleMask });
      return { svg: null };
    },
  },
  {
    name: 'pronounce', page: 'panel', pane: 'graphic', needs: { data: 'attention', feature: 'pronounce', model: 'the spelling-to-sound model (model="bart")' },
    help: 'Each word’s pronunciation in ARPAbet and IPA; click one to see its attention.',
    title: () => 'Spelling to sound: click a word to see its attention',
    render(target, c) {
      renderPronunciationView(target, c.result, { onSelect: c.on.selectWord });
      return { svg: null };
    },
  },
  {
    // Its own Generate button and step slider (views/generate_view.js); the host gives c.generate.
    name: 'generate', page: 'tab', pane: 'graphic', needs: { data: 'attention', feature: 'generateView', model: 'a model that writes text: a decoder (model="gpt2", model="llama") or the spelling-to-sound model (model="bart")' },
    help: 'The model writes token by token; move the slider over its steps. Each step shows, for the chosen layer and head, how the token written then attended to the tokens before it (from the attention the decoding step computed, not a run again), and below, the triangle of every step so far.',
    title: (c) => `Generate, step by step · layer ${c.sel.layer + 1} · ${headText(c)}`,
    render: (target, c) => renderGenerateView(target, c),
  },
];

const BY_NAME = new Map(VIEW_LIST.map((v) => [v.name, v]));

/** The entry of a view name, or undefined. */
export const viewNamed = (name) => BY_NAME.get(name);

/** The page's tabs, in order (the URL's view= takes these). */
export const PAGE_VIEWS = VIEW_LIST.filter((v) => v.page === 'tab').map((v) => v.name);
/** The page's side panels (each drawn beside the picture when the model can). */
export const PANEL_VIEWS = VIEW_LIST.filter((v) => v.page === 'panel');
/** Every view the widget draws. */
export const WIDGET_VIEWS = VIEW_LIST.map((v) => v.name);

/** Whether a model (info; null: the tutorial's example) can draw the view. */
export const canDraw = (view, info) => !view.needs.feature || !!info?.features[view.needs.feature];

/** Why the widget cannot draw a view that needs a kind of model (info; null: the tutorial's seed
 * example), or null. */
export function unavailableView(view, info) {
  if (!view.needs.model || canDraw(view, info)) return null;
  const what = !info ? 'this is the tutorial’s example (preset="seed"), one attention layer and no model'
    : `this model is ${info.type} (${info.name})${view.needs.model.includes(`"${info.type}"`) ? ', built without that head' : ''}`;
  return `view="${view.name}" needs ${view.needs.model}; ${what}.`;
}
