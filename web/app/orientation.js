// "What you are looking at": a short box per model (its size, what it was trained on, how good it
// is in plain words with one number and a comparison), shown above the demo's picture and at the
// top of the model card page. The numbers come from the model's quality.json, measured through
// the library on held-out data by tools/quality/measure_quality.mjs; nothing here is typed in.
import { el } from './views/dom.js';

const KINDS = { gpt2: 'a GPT-2-style decoder', llama: 'a Llama-style decoder', bert: 'a BERT-style encoder', bart: 'a BART-style encoder-decoder' };

const percent = (x) => `${(x * 100).toFixed(1)} %`;
const grouped = (x) => Math.round(x).toLocaleString('en-US');

/** 3551680 -> "3.6 million"; 8000 -> "8,000". */
function amount(n) {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)} million` : grouped(n);
}

/** The sentence saying how good the model is, from its quality.json (null when there is none). */
export function qualityText(q) {
  if (!q || !Number.isFinite(q.value)) return null;
  if (q.measure === 'perplexity per word') {
    return `perplexity ${grouped(q.value)} per word on held-out Brown text: as unsure of the next word as if choosing among`
      + ` ${grouped(q.value)}. Word frequencies alone: ${grouped(q.baseline.value)} (lower is better).`;
  }
  if (q.measure === 'top-1 accuracy at [MASK]') {
    return `its first guess for a hidden word of held-out Brown text is right ${percent(q.value)} of the time;`
      + ` ${q.baseline.name}: ${percent(q.baseline.value)}.`;
  }
  if (q.measure === 'word error rate') {
    return `${percent(1 - q.value)} of dictionary words it never saw come out exactly right (word error rate ${percent(q.value)});`
      + ` ${percent(q.phoneme_error_rate)} of the sounds are wrong (phoneme error rate).`;
  }
  return null;
}

/** The sentence saying what the model is: kind, size and training data. */
export function aboutText({ name, type, quality: q, nLayer, nHead }) {
  const kind = KINDS[q?.model_type ?? type] ?? 'a model';
  const layers = nLayer ?? q?.layers, heads = nHead ?? q?.heads;
  const stack = q?.decoder_layers ? `${q.layers} encoder + ${q.decoder_layers} decoder layers` : `${layers} layers`;
  const size = [q?.parameters ? `${amount(q.parameters)} weights` : null, layers && heads ? `${stack} × ${heads} heads` : null].filter(Boolean);
  const data = q?.trained_on ? `, trained here on ${q.trained_on.text}: ${amount(q.trained_on.words)} ${q.model_type === 'bart' ? 'words with their sounds' : 'words'}` : '';
  return `${name}: ${kind}${size.length ? `, ${size.join(', ')}` : ''}${data}.`;
}

/** The tutorial's example has no training and no quality to measure. */
const SEED_TEXT = 'The tutorial’s example: three words (“write a poem”), two numbers each, and one attention layer'
  + ' with weights set by hand. Nothing was trained, so there is no quality to measure: follow the arithmetic.';

/**
 * Fills `box` (a <section>). info: the worker's model info (null while loading); href, text: the model
 * card page's address and the link's words (no link on the card page itself); toModels: a link to the page's model
 * choice (#model-choice, shown on a phone, where it comes after the picture).
 */
export function renderOrientation(box, { seed = false, info = null, href = null, text = 'model card', toModels = false }) {
  if (!seed && !info) return;
  const how = seed ? null : qualityText(info.quality);
  const measured = info?.quality?.heldout ? ` Measured on ${info.quality.heldout}.` : '';
  box.replaceChildren(...[
    el('h2', { text: 'What you are looking at' }),
    el('p', { class: 'about' }, seed ? SEED_TEXT : aboutText(info), href ? ' ' : null, href ? el('a', { href, text }) : null),
    how ? el('p', { class: 'quality', title: measured.trim() }, el('strong', { text: 'How good: ' }), how) : null,
    !seed && !how ? el('p', { class: 'quality help', text: 'No quality figure was measured for this model here.' }) : null,
    // (On a phone the model choice comes after the picture: this leads there.)
    toModels ? el('a', { class: 'to-models', href: '#model-choice', text: 'Other models' }) : null,
  ].filter(Boolean));
  box.dataset.model = seed ? 'seed' : info.name;
  box.hidden = false;
}
