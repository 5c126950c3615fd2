// What the page shows, and its round trip through the URL, so that a link reproduces the view.
// Layers, heads and tokens are 1-based in the URL (as labelled on the page) and 0-based inside.
import { SEED_DEFAULTS, CROSS_DEFAULT_Y } from './seed_preset.js';
import { PAGE_VIEWS } from './views/registry.js';

export const DEFAULT_SENTENCE = "The animal didn't cross the street because it was too tired";
export const DEFAULT_SECOND = 'The street was wide and the animal was slow';
// The encoder's padded-batch partner: longer than the default sentence, so that one gets [PAD]s.
export const DEFAULT_BATCH_WITH = 'The jury said the election was conducted well and thanked the city for the way it ran.';
// "Compare sentences": three pairs on three topics, so the similarity matrix has blocks to find.
export const DEFAULT_SENTENCES = [
  'The jury praised the city for the way it ran the election.',
  'The grand jury said the election was conducted well.',
  'The dog ran across the field after the ball.',
  'A small dog was playing in the yard.',
  'Prices of stocks fell sharply on Monday.',
  'The market dropped as investors sold their shares.',
];
// The encoder-decoder's words: the "ph" of "phone" is one sound, the "k" and "gh" of "knight" none.
export const DEFAULT_WORDS = 'phone knight photograph';
export const ATTENDS = ['cross', 'decoder', 'encoder'];
// The page's views (its tabs), from the one table of views (views/registry.js).
export const VIEWS = PAGE_VIEWS;
export const MODELS = ['gpt2', 'bert', 'bart', 'llama'];
const SEED_KEYS = ['x', 'y', 'wQ', 'wK', 'wV', 'wO'];

export function defaultState() {
  return {
    // preset: 'model' (a trained model: `model` says which) or 'seed' (the tutorial's numbers).
    preset: 'model', model: 'gpt2', sentence: DEFAULT_SENTENCE, layer: 0, head: 0, view: 'heads', query: null,
    twoHeads: false, // the seed preset's "two heads, d_k ≠ d_v" (seed_preset.js's TWO_HEADS)
    causal: false, cross: false, second: DEFAULT_SECOND, decimals: 4, // causal: the seed preset's toggle (the models' masks are fixed)
    // The model's step view: 'query' follows the chosen query's row through every step; 'all' shows every row.
    rows: 'query',
    pair: '', batch: false, batchWith: DEFAULT_BATCH_WITH, sentences: DEFAULT_SENTENCES.slice(), pooling: 'mean', // encoder only
    words: DEFAULT_WORDS, word: 0, attend: 'cross', // encoder-decoder only
    // Heads switched off (their outputs zeroed before W^O) for the before-and-after panel:
    // [{ layer, head, part }], part the library's ('self'; an encoder-decoder's 'decoder', 'cross').
    off: [],
    // "Continue the text" samples at this temperature from the topK most likely tokens (0: all).
    temperature: 0.8, topK: 40,
    seed: { ...structuredClone(SEED_DEFAULTS), y: CROSS_DEFAULT_Y.slice() },
  };
}

const int = (text, min, fallback) => {
  const v = Number.parseInt(text, 10);
  return Number.isInteger(v) && v >= min ? v : fallback;
};

/** URL query string -> state (unknown or malformed values fall back to the defaults). */
export function parseState(search) {
  const p = new URLSearchParams(search);
  const s = defaultState();
  if (p.get('preset') === 'seed') s.preset = 'seed';
  if (p.get('dkdv') === '1') s.twoHeads = true;
  if (MODELS.includes(p.get('model'))) s.model = p.get('model');
  if (p.has('s')) s.sentence = p.get('s');
  s.layer = int(p.get('layer'), 1, 1) - 1;
  s.head = p.get('head') === 'all' ? 'all' : int(p.get('head'), 1, 1) - 1;
  if (VIEWS.includes(p.get('view'))) s.view = p.get('view');
  s.query = p.has('q') ? int(p.get('q'), 1, 1) - 1 : null;
  s.causal = p.get('causal') === '1';
  s.cross = p.get('cross') === '1';
  if (p.has('s2')) s.second = p.get('s2');
  if (p.has('pair')) s.pair = p.get('pair');
  s.batch = p.get('batch') === '1';
  if (p.has('bw')) s.batchWith = p.get('bw');
  if (p.has('ss')) s.sentences = p.get('ss').split('\n');
  if (p.get('pool') === 'cls') s.pooling = 'cls';
  if (p.has('words')) s.words = p.get('words');
  s.word = int(p.get('word'), 1, 1) - 1;
  if (ATTENDS.includes(p.get('attend'))) s.attend = p.get('attend');
  s.decimals = Math.min(6, Math.max(1, int(p.get('d'), 1, 4)));
  if (p.get('rows') === 'all') s.rows = 'all';
  s.off = parseOff(p.get('off'));
  const t = Number(p.get('t'));
  if (p.has('t') && Number.isFinite(t) && t >= 0 && t <= 2) s.temperature = Math.round(t * 10) / 10;
  if (['0', '1', '5', '10', '40'].includes(p.get('k'))) s.topK = Number(p.get('k'));
  // Edited seed matrices: "wQ:0.54,-0.17,0.59,0.65;x:..." (only those that differ from the seed).
  for (const part of (p.get('w') ?? '').split(';')) {
    const [key, list] = part.split(':');
    if (!SEED_KEYS.includes(key) || !list) continue;
    const values = list.split(',').map(Number);
    if (values.length === s.seed[key].length && values.every(Number.isFinite)) s.seed[key] = values;
  }
  return s;
}

const PARTS = ['self', 'decoder', 'cross'];
/** A switched-off head in the URL: "3.2" (layer 3 head 2, counted from 1), "cross:3.2" for another part. */
const offText = ({ layer, head, part }) => `${part === 'self' ? '' : `${part}:`}${layer + 1}.${head + 1}`;

/** The URL's off= list -> [{ layer, head, part }] (malformed entries left out, duplicates once). */
function parseOff(text) {
  const out = [];
  for (const item of (text ?? '').split(',')) {
    const m = /^(?:(self|decoder|cross):)?(\d+)\.(\d+)$/.exec(item.trim());
    if (!m || Number(m[2]) < 1 || Number(m[3]) < 1) continue;
    const entry = { layer: Number(m[2]) - 1, head: Number(m[3]) - 1, part: PARTS.includes(m[1]) ? m[1] : 'self' };
    if (!out.some((o) => offText(o) === offText(entry))) out.push(entry);
  }
  return out.slice(0, 64);
}

/** state -> URL query string; parameters at their default are left out. layerHead: write layer
 * and head even at 1 / 1 (for a model the page opens on another head). */
export function serializeState(s, { layerHead = false } = {}) {
  const p = new URLSearchParams();
  const d = defaultState();
  const isSeed = s.preset === 'seed', isBert = !isSeed && s.model === 'bert';
  if (isSeed) p.set('preset', 'seed');
  if (isSeed && s.twoHeads) p.set('dkdv', '1');
  if (!isSeed && s.model !== d.model) p.set('model', s.model);
  if (!isSeed && s.sentence !== d.sentence) p.set('s', s.sentence);
  if (isBert && s.pair) p.set('pair', s.pair);
  if (s.layer !== 0 || layerHead) p.set('layer', String(s.layer + 1));
  if (s.head !== 0 || layerHead) p.set('head', s.head === 'all' ? 'all' : String(s.head + 1));
  if (s.view !== 'heads') p.set('view', s.view);
  if (Number.isInteger(s.query)) p.set('q', String(s.query + 1)); // ('last', a text being continued: not kept)
  if (s.causal) p.set('causal', '1');
  if (s.cross) p.set('cross', '1');
  if (s.cross && !isSeed && s.second !== d.second) p.set('s2', s.second);
  if (isBert && s.batch) p.set('batch', '1');
  if (isBert && s.batch && s.batchWith !== d.batchWith) p.set('bw', s.batchWith);
  if (isBert && s.view === 'compare' && s.sentences.join('\n') !== d.sentences.join('\n')) p.set('ss', s.sentences.join('\n'));
  if (isBert && s.pooling !== d.pooling) p.set('pool', s.pooling);
  const isBart = !isSeed && s.model === 'bart';
  if (isBart && s.words !== d.words) p.set('words', s.words);
  if (isBart && s.word !== 0) p.set('word', String(s.word + 1));
  if (isBart && s.attend !== d.attend) p.set('attend', s.attend);
  if (s.decimals !== 4) p.set('d', String(s.decimals));
  if (!isSeed && s.rows === 'all') p.set('rows', 'all');
  if (!isSeed && s.off.length) p.set('off', s.off.map(offText).join(','));
  if (!isSeed && s.temperature !== d.temperature) p.set('t', String(s.temperature));
  if (!isSeed && s.topK !== d.topK) p.set('k', String(s.topK));
  if (isSeed) {
    const edited = SEED_KEYS.filter((k) => s.seed[k].some((v, i) => v !== d.seed[k][i]));
    if (edited.length) p.set('w', edited.map((k) => `${k}:${s.seed[k].join(',')}`).join(';'));
  }
  const text = p.toString();
  return text ? `?${text}` : '';
}
