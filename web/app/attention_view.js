// <attention-view>: the demo's views as a custom element for tutorials.
//
//   <script type="module" src="https://host/attention-view.js"></script>
//   <attention-view sentence="The cat sat on the mat" layer="1" head="2" view="heads"></attention-view>
//
// Attributes: sentence, layer, head (1-based, or head="all"), view (heads | model | heatmap |
// steps | next), query (1-based token), preset="seed" (the tutorial's "write a poem"), causal,
// cross, second (cross-attention's second sentence), decimals, model (a model folder URL).
// Every widget on a page shares one worker, so one WebAssembly instance and one copy of the model.
import { computeClient } from './compute_client.js';
import { parseState, serializeState } from './state.js';
import { modelViewData, seedViewData, clampSelection, modelSteps, seedSteps } from './view_data.js';
import { renderHeadView } from './views/head_view.js';
import { renderModelView } from './views/model_view.js';
import { renderHeatmapView } from './views/heatmap_view.js';
import { renderNextTokenView } from './views/next_token_view.js';
import { StepsView } from './views/steps_view.js';
import { VIEW_CSS } from './views/view_styles.js';
import { el } from './views/dom.js';

const SCRIPT_URL = import.meta.url;
const WORKER_URL = new URL('./worker.js', SCRIPT_URL).href;
const DEFAULT_MODEL = new URL(typeof DEMO_MODEL_PATH === 'string' ? DEMO_MODEL_PATH : './models/brown-gpt2/', SCRIPT_URL).href;
const DEMO_PAGE = new URL('./index.html', SCRIPT_URL).href;

const WIDGET_CSS = `
:host { display: block; width: 100%; min-width: 0; overflow: auto; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: #1b1f24; background: #fff; border: 1px solid #d0d7de; border-radius: 8px; padding: 8px 10px; box-sizing: border-box; }
:host([hidden]) { display: none; }
.bar { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: baseline; gap: 4px 12px; margin-bottom: 4px; font-size: 12.5px; color: #57606a; }
.bar a { color: #0969da; }
.bar button { font: inherit; border: 1px solid #8c959f; background: #fff; border-radius: 4px; padding: 1px 8px; cursor: pointer; }
.status { color: #57606a; font-size: 13px; min-height: 1.2em; margin: 2px 0; }
.status.error { color: #cf222e; }
`;

const modelInfo = new Map(); // model URL -> Promise<info>, shared by all widgets
let widgetCount = 0;

class AttentionViewElement extends HTMLElement {
  static get observedAttributes() {
    return ['sentence', 'layer', 'head', 'view', 'query', 'preset', 'causal', 'cross', 'second', 'decimals', 'model'];
  }

  constructor() {
    super();
    this.channel = `widget-${++widgetCount}`;
    const root = this.attachShadow({ mode: 'open' });
    this.titleEl = el('span', { class: 'title' });
    this.backButton = el('button', { type: 'button', hidden: true, text: '← back', onclick: () => { this.local = {}; this.draw(); } });
    this.link = el('a', { target: '_blank', rel: 'noopener', text: 'open in the demo ↗' });
    this.statusEl = el('p', { class: 'status', role: 'status', text: 'Loading…' });
    this.body = el('div', { class: 'body' });
    root.append(el('style', { text: VIEW_CSS + WIDGET_CSS }),
      el('div', { class: 'bar' }, this.titleEl, el('span', {}, this.backButton, ' ', this.link)), this.body, this.statusEl);
    this.steps = null;
    this.local = {}; // selections made inside the widget (a clicked head, a chosen query)
    this.result = null;
    this.width = 0;
  }

  connectedCallback() {
    this.connected = true;
    this.resizeObserver = new ResizeObserver(([entry]) => {
      const w = Math.round(entry.contentRect.width);
      if (Math.abs(w - this.width) > 8) { this.width = w; this.draw(); }
    });
    this.resizeObserver.observe(this);
    this.compute();
  }

  disconnectedCallback() {
    this.connected = false;
    this.resizeObserver?.disconnect();
  }

  attributeChangedCallback() {
    // The initial attributes arrive before connectedCallback, which computes once for all of them.
    if (!this.connected) return;
    this.local = {};
    clearTimeout(this.timer);
    // Attributes often change together (a script setting sentence then layer): compute once.
    this.timer = setTimeout(() => this.compute(), 30);
  }

  /** The widget's state, through the page's own URL parser so both read attributes the same way. */
  get state() {
    const p = new URLSearchParams();
    const map = { sentence: 's', layer: 'layer', head: 'head', view: 'view', query: 'q', preset: 'preset', second: 's2', decimals: 'd' };
    for (const [attr, key] of Object.entries(map)) if (this.hasAttribute(attr)) p.set(key, this.getAttribute(attr));
    for (const flag of ['causal', 'cross']) if (this.hasAttribute(flag) && this.getAttribute(flag) !== 'false') p.set(flag, '1');
    const s = parseState(p.toString());
    if (this.getAttribute('view') === 'next') s.view = 'next';
    return { ...s, ...this.local };
  }

  get modelUrl() {
    return this.hasAttribute('model') ? new URL(this.getAttribute('model'), document.baseURI).href : DEFAULT_MODEL;
  }

  async compute() {
    const client = computeClient(WORKER_URL);
    const s = this.state;
    this.dataset.ready = '0';
    try {
      let result;
      if (s.preset === 'seed') {
        const w = s.seed;
        result = await client.request('seed', { x: w.x, y: s.cross ? w.y : null, wQ: w.wQ, wK: w.wK, wV: w.wV, wO: w.wO, causal: s.causal }, this.channel);
      } else {
        const url = this.modelUrl;
        if (!modelInfo.has(url)) modelInfo.set(url, client.request('model', { modelUrl: url }));
        const [info, r] = await Promise.all([modelInfo.get(url),
          client.request('run', { modelUrl: url, text: s.sentence, layer: s.layer, topK: 8, crossText: s.cross ? s.second : null }, this.channel)]);
        result = r && { ...r, info };
      }
      if (!result) return; // superseded
      this.result = { preset: s.preset, value: result };
      this.statusEl.textContent = '';
      this.statusEl.classList.remove('error');
      this.draw();
    } catch (e) {
      modelInfo.delete(this.modelUrl);
      this.statusEl.textContent = `Could not compute: ${e.message}`;
      this.statusEl.classList.add('error');
    }
  }

  draw() {
    if (!this.result) return;
    const s = this.state;
    const isSeed = this.result.preset === 'seed';
    const r = this.result.value;
    const data = isSeed ? seedViewData(r, s) : modelViewData(r, r.info);
    const sel = clampSelection(s, data.nLayer, data.nHead, data.tokens.length);
    const on = {
      select: (change) => {
        Object.assign(this.local, change);
        if ('layer' in change && change.layer !== this.result.value.layer && !isSeed) this.compute(); else this.draw();
      },
    };
    const headText = sel.head === 'all' ? 'all heads' : `head ${sel.head + 1}`;
    this.titleEl.textContent = isSeed ? 'The tutorial’s example: write a poem'
      : s.view === 'model' ? `${data.nLayer} layers × ${data.nHead} heads: click one to open it`
        : s.view === 'next' ? 'The model’s next-token predictions' : `Layer ${sel.layer + 1} · ${headText}`;
    this.backButton.hidden = Object.keys(this.local).length === 0;
    this.link.href = DEMO_PAGE + serializeState({ ...s, view: s.view === 'next' ? 'heads' : s.view, layer: sel.layer, head: sel.head });

    if (s.view !== 'steps') this.steps = null;
    if (s.view === 'heads') renderHeadView(this.body, data, sel, on);
    else if (s.view === 'model') renderModelView(this.body, data, sel, on);
    else if (s.view === 'heatmap') renderHeatmapView(this.body, data, { ...sel, head: sel.head === 'all' ? 0 : sel.head }, on);
    else if (s.view === 'next') {
      if (isSeed) this.body.replaceChildren(el('p', { text: 'The tutorial example is one attention layer, not a language model: it predicts nothing.' }));
      else renderNextTokenView(this.body, { predictions: r.predictions });
    } else {
      if (!isSeed && r.layer !== sel.layer) return;
      if (!this.steps) {
        this.body.replaceChildren();
        this.steps = new StepsView(this.body, {
          selectQuery: (i) => on.select({ query: i }),
          edit: (key, index, text) => {
            const v = Number(String(text).trim().replace(/\u2212/g, '-'));
            if (String(text).trim() === '' || !Number.isFinite(v)) return;
            const seedValues = { ...s.seed, ...(this.local.seed ?? {}) };
            seedValues[key] = seedValues[key].slice();
            seedValues[key][index] = v;
            this.local.seed = seedValues;
            clearTimeout(this.timer);
            this.timer = setTimeout(() => this.compute(), 40);
          },
        });
      }
      this.steps.render(isSeed ? seedSteps(r, s, sel) : modelSteps(r, r.info, s, sel), { decimals: s.decimals });
    }
    this.dataset.ready = '1';
    this.dataset.tokens = JSON.stringify(data.tokens);
  }
}

if (!customElements.get('attention-view')) customElements.define('attention-view', AttentionViewElement);
