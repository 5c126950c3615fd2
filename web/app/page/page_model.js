// What the demo page holds: the state (the one its URL carries), the models' descriptions and the
// worker's latest answers, and what follows from them (the model, its URL, the view to draw).
import { MODEL_URLS } from '../model_urls.js';
import { Blanks } from '../masking.js';
import { viewNamed, canDraw } from '../views/registry.js';

export class PageModel {
  constructor(state) {
    this.state = state;
    this.infos = new Map(); // 'gpt2' | 'bert' | ... -> the worker's description of the model (null while asked)
    this.run = null;        // the worker's answer for the sentence ({ ...run, choice: model })
    this.seed = null;       // its answer for the tutorial's example
    this.compared = null;   // its comparison of sentences ({ ...answer, choice: model })
    this.generation = null; // "Continue the text": the stream in progress
    // What is on screen (the exports and the head test read it).
    this.last = { steps: null, svg: null, data: null, sel: null };
    // The words hidden behind the sentence's [MASK]s (to put them back).
    this.blanks = new Blanks(state.sentence);
  }

  get modelUrl() { return MODEL_URLS[this.state.model]; }
  get info() { return this.infos.get(this.state.model) ?? null; }
  get isSeed() { return this.state.preset === 'seed'; }
  /** The encoder-decoder reads words (its own text field); the other models a sentence. */
  get textKey() { return !this.isSeed && this.state.model === 'bart' ? 'words' : 'sentence'; }

  /** The view to draw: the chosen one if this model can draw it ("compare" only for models that
   * make sentence embeddings), else the heads. */
  get view() {
    const view = viewNamed(this.state.view);
    return view && canDraw(view, this.isSeed ? null : this.info) ? view.name : 'heads';
  }

  /** The sentences to compare, without empty lines. */
  get compareSentences() { return this.state.sentences.map((s) => s.trim()).filter(Boolean); }
}
