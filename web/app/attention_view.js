// <attention-view>: the demo's views as a custom element for tutorials.
//
//   <script type="module" src="https://host/attention-view.js"></script>
//   <attention-view sentence="The cat sat on the mat" layer="1" head="2" view="heads"></attention-view>
//
// Attributes: sentence, layer, head (1-based, or head="all"), view (heads | model | heatmap |
// steps | next | fill | compare | generate), query (1-based token), preset="seed" (the tutorial's "write a
// poem"), causal, cross, second (cross-attention's second sentence), decimals, model ("gpt2", the
// default, or "bert": the demo's two models; anything else is a model folder URL), and for the
// encoder: pair (a second sentence: a sentence pair), batch-with (run the sentence as one padded
// row of a batch with this one), sentences (for view="compare", separated by "|"), pooling; for
// the encoder-decoder (model="bart", spelling to sound): sentence holds the words, word (1-based)
// picks the one whose attention is drawn, attend = cross | decoder | encoder, view="pronounce"
// lists the pronunciations; model="llama" (the Llama-style decoder) draws its heads in their K/V
// groups and adds the rotation step to view="steps"; a GGUF file draws as a Llama-style model too:
// model="hf:owner/name/file.gguf", model="hf:owner/name" with quant="Q4_K_M" (the repository's file
// of that quantization), or a .gguf file's URL; hub="<address>" points Hub models at a mirror.
// view="steps" follows the query's row through the steps; rows="all" shows every row. view="generate"
// (GPT-2, the Llama family; BART pronounces the chosen word) has a "Generate" button and a slider over
// the steps: the chosen layer's and head's attention of the token written at each step, from the
// decoding steps themselves (views/generate_view.js); max-new (default 20), temperature (default
// 0.8) and seed (default 1) shape the continuation. test="induction" or
// test="previous" (GPT-2, BERT; view="heatmap") checks the head: its test cells outlined, each row's
// weight and their mean printed (head_test.js, the demo's "Test this head"); induction without a
// sentence attribute reads random words written twice (seed picks the draw).
// about (the demo's "What you are looking at" box) and tokens (its token strip, the pieces of a
// word grouped, a chip choosing the query) add them above the picture (widget_header.js).
// Every widget on a page shares one worker, so one WebAssembly instance and one copy of each model.
import { computeClient } from './compute_client.js';
import { parseState, serializeState, MODELS } from './state.js';
import { modelViewData, seedViewData, clampSelection } from './view_data.js';
import { MODEL_URLS } from './model_urls.js';
import { Blanks } from './masking.js';
import { viewNamed, WIDGET_VIEWS, unavailableView } from './views/registry.js';
import { stopGenerating } from './views/generate_view.js';
import { StepsView } from './views/steps_view.js';
import { VIEW_CSS } from './views/view_styles.js';
import { el } from './views/dom.js';
import { marksIn } from './token_marks.js';
import { WIDGET_ATTRIBUTES, unknownAttributes, modelNameHint, folderFiles } from './widget_attributes.js';
import { repeatedWords, runHeadTest, testSummary } from './head_test.js';
import { WidgetHeader, HEADER_CSS } from './widget_header.js';

const HEAD_TESTS = ['induction', 'previous'];

const SCRIPT_URL = import.meta.url;
const WORKER_URL = new URL('./worker.js', SCRIPT_URL).href;
// The demo page the link opens: beside this script in the demo site (build/web). The npm package's
// widget (dist/widget/, scripts/build_widget.mjs) has no demo page beside it: that build defines
// WIDGET_DEMO_PAGE as null, and the link shows only when demo="<url>" names one.
const DEMO_PAGE = typeof WIDGET_DEMO_PAGE === 'undefined' ? new URL('./index.html', SCRIPT_URL).href : WIDGET_DEMO_PAGE;

const WIDGET_CSS = `
:host { display: block; width: 100%; min-width: 0; overflow: auto; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: #1b1f24; background: #fff; border: 1px solid #d0d7de; border-radius: 8px; padding: 8px 10px; box-sizing: border-box; }
:host([hidden]) { display: none; }
.bar { display: flex; flex-wrap: wrap; justify-content: space-between; align-items: baseline; gap: 4px 12px; margin-bottom: 4px; font-size: 12.5px; color: #57606a; }
.bar a { color: #0969da; }
.bar button { font: inherit; border: 1px solid #8c959f; background: #fff; border-radius: 4px; padding: 1px 8px; cursor: pointer; }
.status { color: #57606a; font-size: 13px; min-height: 1.2em; margin: 2px 0; }
.status.error { color: #cf222e; }
.status.warning { color: #9a6700; }
.unavailable { color: #9a6700; }
.marks { color: #57606a; font-size: 12.5px; margin: 2px 0; }
.head-test { font-size: 12.5px; margin: 2px 0 4px; padding: 4px 6px; border-left: 3px solid #1b1f24; background: #f6f8fa; }
`;

const modelInfo = new Map(); // model URL -> Promise<info>, shared by all widgets
let widgetCount = 0;

class AttentionViewElement extends HTMLElement {
  static get observedAttributes() {
    return WIDGET_ATTRIBUTES;
  }

  constructor() {
    super();
    this.channel = `widget-${++widgetCount}`;
    const root = this.attachShadow({ mode: 'open' });
    this.titleEl = el('span', { class: 'title' });
    this.backButton = el('button', { type: 'button', hidden: true, text: '← back', onclick: () => this.back() });
    // Shown once a view is drawn (setDemoLink): while loading or after an error it would lead nowhere.
    this.link = el('a', { target: '_blank', rel: 'noopener', hidden: true, text: 'open in the demo ↗' });
    this.statusEl = el('p', { class: 'status', role: 'status', text: 'Loading…' });
    this.body = el('div', { class: 'body' });
    this.marksEl = el('p', { class: 'marks', hidden: true }); // what ␣ (or ##) in the drawn tokens means
    this.testEl = el('p', { class: 'head-test', role: 'status', hidden: true }); // test="...": the result in words
    // about="", tokens="": the model's box and the token strip (a chip chooses the query).
    this.header = new WidgetHeader(this, (query) => { this.local.query = query; this.draw(); });
    root.append(el('style', { text: VIEW_CSS + WIDGET_CSS + HEADER_CSS }),
      el('div', { class: 'bar' }, this.titleEl, el('span', {}, this.backButton, ' ', this.link)), ...this.header.nodes, this.testEl, this.body, this.marksEl, this.statusEl);
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
    stopGenerating(this.body);
  }

  attributeChangedCallback() {
    // The initial attributes arrive before connectedCallback, which computes once for all of them.
    if (!this.connected) return;
    this.local = {};
    this.blanks = null;
    clearTimeout(this.timer);
    // Attributes often change together (a script setting sentence then layer): compute once.
    this.timer = setTimeout(() => this.compute(), 30);
  }

  /** test="induction" | "previous" on a heatmap of self-attention: the test's rows, also in words. */
  headTest(r, data, sel, view) {
    const kind = this.getAttribute('test');
    const test = HEAD_TESTS.includes(kind) && view.showsTest && Array.isArray(r.ids) && !data.keyTokens && !r.padding?.some((p) => p)
      ? runHeadTest(kind, r, data.nHead, sel.layer, sel.head === 'all' ? 0 : sel.head, !!(r.causal ?? r.info.causal)) : null;
    this.testEl.hidden = !test;
    if (test) {
      this.testEl.textContent = testSummary(test, data.headLabel(test.layer, test.head) ?? kind);
      Object.assign(this.testEl.dataset, { kind, mean: String(test.mean), rows: JSON.stringify(test.rows.map((x) => [x.query, x.target, x.weight])) });
    }
    return test;
  }

  /** The widget's state, through the page's own URL parser so both read attributes the same way. */
  get state() {
    const p = new URLSearchParams();
    const map = { sentence: 's', layer: 'layer', head: 'head', view: 'view', query: 'q', preset: 'preset', second: 's2', decimals: 'd',
      pair: 'pair', 'batch-with': 'bw', pooling: 'pool', word: 'word', attend: 'attend', rows: 'rows' };
    for (const [attr, key] of Object.entries(map)) if (this.hasAttribute(attr)) p.set(key, this.getAttribute(attr));
    for (const flag of ['causal', 'cross']) if (this.hasAttribute(flag) && this.getAttribute(flag) !== 'false') p.set(flag, '1');
    if (this.hasAttribute('batch-with')) p.set('batch', '1');
    if (this.hasAttribute('sentences')) p.set('ss', this.getAttribute('sentences').split('|').join('\n'));
    if (MODELS.includes(this.getAttribute('model'))) p.set('model', this.getAttribute('model'));
    if (this.getAttribute('model') === 'bart' && this.hasAttribute('sentence')) p.set('words', this.getAttribute('sentence'));
    const s = parseState(p.toString());
    // The views the page shows beside the picture (or not at all) are views of their own here.
    if (WIDGET_VIEWS.includes(this.getAttribute('view'))) s.view = this.getAttribute('view');
    // An induction test needs a repetition: without a sentence, random words written twice.
    if (this.getAttribute('test') === 'induction' && !this.hasAttribute('sentence') && s.model !== 'bart')
      s.sentence = repeatedWords(null, Number(this.getAttribute('seed')) || 1);
    return { ...s, ...this.local };
  }

  /** The model attribute: "gpt2" / "bert" (the demo's models), a folder URL, a .gguf file's URL, or
   * a Hub model: "hf:owner/name", "hf:owner/name/file.gguf", or a GGUF repository with quant="Q4_K_M". */
  get modelUrl() {
    const m = this.getAttribute('model') ?? 'gpt2';
    if (MODELS.includes(m)) {
      if (!MODEL_URLS[m]) throw new Error(`this build of the demo has no ${m} model`);
      return MODEL_URLS[m];
    }
    if (m.startsWith('hf:')) {
      const quant = this.getAttribute('quant');
      return quant && !/\.gguf$/i.test(m) ? `${m}#quant=${quant}` : m;
    }
    return new URL(m, document.baseURI).href;
  }

  /** What the model request carries besides the URL: the Hub's address (hf: models), the dtype
   * attribute, and which optional files a folder holds (its manifest: see folderFiles). */
  loadOptions(url) {
    const dtype = this.getAttribute('dtype');
    const files = url.startsWith('hf:') ? null : folderFiles(this);
    return {
      ...(url.startsWith('hf:') && this.hubUrl ? { hubUrl: this.hubUrl } : {}),
      ...(dtype ? { dtype } : {}),
      ...(files ? { files } : {}),
    };
  }

  /** hub="<address>": where a Hub model (model="hf:…") comes from (default https://huggingface.co). */
  get hubUrl() {
    const hub = this.getAttribute('hub');
    return hub ? new URL(hub, document.baseURI).href.replace(/\/+$/, '') : undefined;
  }

  async compute() {
    const client = computeClient(WORKER_URL);
    const s = this.state;
    // data-ready is '1' only once the newest computation is drawn (a draw of an older result in
    // between, e.g. when a generation ends, must not say ready).
    const seq = this.computeSeq = (this.computeSeq ?? 0) + 1;
    this.dataset.ready = '0';
    try {
      let result;
      if (s.preset === 'seed') {
        const w = s.seed;
        result = await client.request('seed', { x: w.x, y: s.cross ? w.y : null, wQ: w.wQ, wK: w.wK, wV: w.wV, wO: w.wO, causal: s.causal }, this.channel);
      } else {
        const url = this.modelUrl;
        if (!modelInfo.has(url)) modelInfo.set(url, client.request('model', { modelUrl: url, ...this.loadOptions(url) }));
        const sentences = s.sentences.map((t) => t.trim()).filter(Boolean);
        const compare = viewNamed(s.view).needs.data === 'similarity'; // a comparison, not a run
        const request = compare
          ? client.request('compare', { modelUrl: url, sentences, pooling: s.pooling }, this.channel)
          : client.request('run', { modelUrl: url, text: s.model === 'bart' ? s.words : s.sentence, layer: s.layer, topK: 8,
            crossText: s.cross ? s.second : null, pair: s.pair, batchWith: s.batch ? s.batchWith : null,
            wordIndex: s.word, attend: s.attend, check: s.view === 'steps' }, this.channel); // (check: the step view prints the layer's weights)
        const [info, r] = await Promise.all([modelInfo.get(url), request]);
        result = r && { ...r, info, compare };
      }
      if (!result) return; // superseded
      this.result = { preset: s.preset, value: result };
      this.drawnSeq = seq;
      this.statusEl.textContent = '';
      this.statusEl.classList.remove('error');
      this.draw();
    } catch (e) {
      this.drawnSeq = seq;
      try { modelInfo.delete(this.modelUrl); } catch { /* no such model in this build */ }
      this.link.hidden = true;
      const hint = modelNameHint(this) ?? ggufHint(this, e);
      this.statusEl.textContent = `Could not compute: ${e.message}${hint ? `; ${hint}` : ''}`;
      this.statusEl.classList.add('error');
      console.error(`<attention-view>: ${this.statusEl.textContent}`); // where an author looks first
    }
  }

  draw() {
    if (!this.result) return;
    const s = this.state;
    const isSeed = this.result.preset === 'seed';
    const r = this.result.value;
    const view = viewNamed(s.view);
    const similarity = view.needs.data === 'similarity';
    if (!isSeed && similarity !== !!r.compare) return; // the answer for the new view is on its way
    if (similarity) return this.drawCompare(r, view);
    const data = isSeed ? seedViewData(r, s) : modelViewData(r, r.info);
    const sel = clampSelection(s, data.nLayer, data.nHead, data.tokens.length, data.defaultQuery);
    this.warn(attributeProblems(this, data, sel));
    this.header.show({ seed: isSeed, info: r.info, modelUrl: isSeed ? null : this.modelUrl, cardPage: this.cardPage, data, sel, result: r,
      text: s.model === 'bart' ? s.words : s.sentence });
    data.test = isSeed ? null : this.headTest(r, data, sel, view);
    const on = {
      select: (change) => {
        Object.assign(this.local, change);
        if ('layer' in change && change.layer !== this.result.value.layer && !isSeed) this.compute(); else this.draw();
      },
      selectWord: (i) => { this.local.word = i; this.compute(); },
      toggleMask: (i) => {
        this.blanks ??= new Blanks(s.sentence);
        const next = this.blanks.toggle(s.sentence, i, (k) => r.fill?.[k]?.predictions[0]?.text.replace(/^##/, ''));
        if (next === null) return;
        this.local.sentence = next;
        this.compute();
      },
    };
    const c = { data, sel, result: r, info: isSeed ? null : r.info, state: s, seed: isSeed, on, stepsView: () => this.stepsView(s, on),
      generate: view.name === 'generate' && !isSeed ? this.generation(s) : null };
    const unavailable = unavailableView(view, isSeed ? null : r.info);
    this.titleEl.textContent = unavailable ? '' : isSeed ? 'The tutorial’s example: write a poem' : view.title(c);
    this.backButton.hidden = Object.keys(this.local).length === 0;

    if (view.pane !== 'steps') this.steps = null;
    if (unavailable) this.body.replaceChildren(el('p', { class: 'unavailable', text: unavailable }));
    else if (view.render(this.body, c) === null) return;
    // The demo opens views, not these messages (its panels show what this view would).
    this.setDemoLink(unavailable ? null : serializeState({ ...s, view: view.page === 'tab' ? s.view : 'heads', layer: sel.layer, head: sel.head }));
    this.showMarks();
    this.dataset.ready = this.drawnSeq === this.computeSeq ? '1' : '0';
    this.dataset.tokens = JSON.stringify(data.tokens);
  }

  /** view="steps": the step view, made once and kept while the view stays (its edits and open rows). */
  stepsView(s, on) {
    if (!this.steps) {
      this.body.replaceChildren();
      this.steps = new StepsView(this.body, {
        picker: true, // (the widget has no token chips or pickers above its view)
        selectQuery: (i) => on.select({ query: i }),
        showRows: (all) => on.select({ rows: all ? 'all' : 'query' }),
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
    return this.steps;
  }

  /** view="generate": what the view generates from (views/generate_view.js) and how: the
   * max-new, temperature and seed attributes. */
  generation(s) {
    const number = (name, fallback) => {
      const v = Number(this.getAttribute(name) ?? fallback);
      return Number.isFinite(v) ? v : fallback;
    };
    const text = s.model === 'bart' ? s.words : s.sentence, modelUrl = this.modelUrl;
    return {
      key: `${modelUrl}\n${text}\n${s.word}`,
      request: { text, wordIndex: s.word, maxNewTokens: Math.max(1, Math.round(number('max-new', 20))),
        temperature: Math.max(0, number('temperature', 0.8)), seed: Math.round(number('seed', 1)) },
      start: (request, onEvent) => computeClient(WORKER_URL).generate({ modelUrl, ...request, attention: true }, onEvent),
    };
  }

  /**
   * Says, under the view, which attributes were not usable and what is shown instead; the console
   * hears each problem once while it lasts (not again on every redraw).
   */
  warn(problems) {
    if (this.statusEl.classList.contains('error')) return;
    this.statusEl.textContent = problems.join(' ');
    this.statusEl.classList.toggle('warning', problems.length > 0);
    for (const p of problems) if (!this.warned?.has(p)) console.warn(`<attention-view>: ${p}`);
    this.warned = new Set(problems);
  }

  /** Explains, under the view, the marks (␣, ##) in the tokens it drew. */
  showMarks() {
    const marks = marksIn(this.body.textContent, this.result?.value?.info?.type);
    this.marksEl.textContent = marks.join(' · ');
    this.marksEl.hidden = marks.length === 0;
  }

  /**
   * The "open in the demo" link: to the demo beside this script by default; demo="<url>" points
   * it at a demo hosted elsewhere, demo="none" hides it (a page that hosts only the widget). A
   * build with no demo beside the script (the npm package's) shows it only for demo="<url>".
   * query: the drawn view's address, or null when no view is drawn (the link is hidden).
   */
  setDemoLink(query) {
    const demo = this.getAttribute('demo');
    // The demo opens on its own models: a Hub model or a GGUF file would not be what it shows.
    const elsewhere = /^hf:|\.gguf$/i.test(this.getAttribute('model') ?? '');
    const page = query === null || elsewhere ? null
      : demo && demo !== 'none' ? new URL(demo, document.baseURI).href.split('?')[0] : demo === 'none' ? null : DEMO_PAGE;
    this.link.hidden = !page;
    if (page) this.link.href = page + query;
    else this.link.removeAttribute('href');
  }

  /** The demo's model card page beside this script, or null in a build with no demo (the npm package's). */
  get cardPage() {
    return DEMO_PAGE ? new URL('model-card.html', DEMO_PAGE).href : null;
  }

  /** Forgets what was chosen inside the widget: back to its attributes. */
  back() {
    const recompute = ['sentence', 'seed', 'layer', 'word'].some((k) => k in this.local);
    this.local = {};
    this.blanks = null;
    if (recompute) this.compute(); else this.draw();
  }

  drawCompare(r, view) {
    this.titleEl.textContent = view.title();
    this.header.show({ info: r.info, modelUrl: this.modelUrl, cardPage: this.cardPage });
    this.backButton.hidden = true;
    this.setDemoLink(serializeState({ ...this.state, view: view.name }));
    this.warn(unknownAttributes(this));
    view.render(this.body, { result: r, emptyNote: el('p', { text: 'Give the sentences to compare: sentences="First one|Second one|…"' }) });
    this.showMarks();
    this.dataset.ready = this.drawnSeq === this.computeSeq ? '1' : '0';
  }
}

/** For a Hub model with no config.json: a repository of GGUF files needs its file or quantization named. */
function ggufHint(element, error) {
  const model = element.getAttribute('model') ?? '';
  if (!model.startsWith('hf:') || /\.gguf$/i.test(model) || element.hasAttribute('quant') || !/config\.json/.test(String(error?.message))) return null;
  return `if ${model.slice(3)} holds GGUF files, name one (model="${model}/file.gguf") or its quantization (quant="Q4_K_M").`;
}

/** The attributes a widget could not honour, each with what it shows instead (plain words). */
function attributeProblems(element, data, sel) {
  const out = unknownAttributes(element);
  const view = element.getAttribute('view');
  if (view !== null && !WIDGET_VIEWS.includes(view))
    out.push(`view="${view}" is not a view (${WIDGET_VIEWS.join(', ')}): showing ${element.state.view}.`);
  const rows = element.getAttribute('rows');
  if (rows !== null && rows !== 'all' && rows !== 'query')
    out.push(`rows="${rows}" is not a choice (all, or query: the default): the step view follows the query's row.`);
  const counted = (name, count, shown, allowAll = false) => {
    const raw = element.getAttribute(name);
    if (raw === null || (allowAll && raw === 'all')) return;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > count)
      out.push(`${name}="${raw}": ${name}s count from 1 to ${count} here: showing ${name} ${shown + 1}.`);
  };
  counted('layer', data.nLayer, sel.layer);
  if (sel.head !== 'all') counted('head', data.nHead, sel.head, true);
  if (!('query' in element.local)) counted('query', data.tokens.length, sel.query);
  const s = element.state;
  const test = element.getAttribute('test');
  if (test !== null && !HEAD_TESTS.includes(test)) out.push(`test="${test}" is not a test (${HEAD_TESTS.join(', ')}): no test drawn.`);
  else if (test !== null && s.view !== 'heatmap') out.push(`test="${test}" is drawn in view="heatmap"; this view shows no test.`);
  if (s.cross && s.preset !== 'seed' && s.model === 'gpt2' && s.view !== 'steps')
    out.push(`cross: GPT-2's cross-attention (an untrained illustration) is drawn in view="steps"; this view shows its self-attention.`);
  return out;
}

if (!customElements.get('attention-view')) customElements.define('attention-view', AttentionViewElement);
