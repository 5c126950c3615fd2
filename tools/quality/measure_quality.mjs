// How good each shipped model is, measured through this library's WebAssembly forward (dist/) on
// held-out data, with a simple baseline beside each number; written next to the model as
// quality.json, which the demo's "what you are looking at" box and the model card page show.
//
//   node scripts/bundle.mjs && node tools/quality/measure_quality.mjs
//       writes web/models/{brown-gpt2,brown-llama,brown-bert,g2p-bart}/quality.json (about 10 minutes
//       on a loaded 2-core machine: every held-out sentence and word). Needs python3 for the held-out
//       splits (held_out.mjs). Names after it (e.g. `brown-llama`) measure only those models.
//   node tools/quality/measure_quality.mjs --sample
//       the same measures on the models' small heldout-sample.json files (JSON on stdout): what
//       tests/js/quality.test.cjs compares with PyTorch's figures for them.
//
// brown-gpt2, brown-llama: perplexity per word on Brown's validation documents, each sentence alone
//   as <|endoftext|> s <|endoftext|>; against a unigram model (token frequencies of the training
//   split, add-one) on the same tokens. Per word: exp(total nats / corpus word tokens), so the
//   figure does not depend on how the tokenizer cuts words (the two have different tokenizers).
// brown-bert: top-1 accuracy at [MASK]ed tokens (15 % of each validation sentence's tokens,
//   seeded, at least one); against always guessing the training split's most frequent token.
// g2p-bart: word and phoneme error rates of greedy decoding on CMUdict's test words (a word is
//   right when its output is one of its dictionary pronunciations; phoneme errors: the edit
//   distance to the nearest one, over that one's length).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadAttention, parseSafetensors, headRules } from '../../dist/index.node.js';
import { heldOutSplits, root } from './held_out.mjs';

const { seeded } = headRules; // the same seeded draws as the head labels

const TOOL = 'node tools/quality/measure_quality.mjs (forward: this library\'s WebAssembly build)';
const BROWN = 'the Brown Corpus (American English printed in 1961)';
const MASK_SHARE = 0.15, MASK_SEED = 1;

const modelDir = (name) => join(root, 'web/models', name);

/** The number of weights in a folder's model.safetensors. */
function parameterCount(name) {
  const { tensors } = parseSafetensors(readFileSync(join(modelDir(name), 'model.safetensors')));
  return [...tensors.values()].reduce((n, t) => n + t.shape.reduce((a, b) => a * b, 1), 0);
}

/** -ln p(ids[t] | ids[..t]) for every t >= 1, in windows of the model's context (half overlap). */
export function tokenNats(lm, ids) {
  const P = contextOf(lm), nats = [];
  for (let start = 0, next = 1; next < ids.length; start = Math.max(0, next - P / 2)) {
    const window = ids.slice(start, start + P);
    const r = lm.run(window, { prependBos: false });
    const V = lm.config.vocab_size;
    for (let t = next - start; t < window.length; t++) {
      const row = r.logits.subarray((t - 1) * V, t * V);
      let max = -Infinity, sum = 0;
      for (const v of row) if (v > max) max = v;
      for (const v of row) sum += Math.exp(v - max);
      nats.push(max + Math.log(sum) - row[window[t]]);
    }
    next = start + window.length;
  }
  return nats;
}

/** A decoder's context length, whatever its config calls it (GPT-2: n_positions; Llama: max_position_embeddings). */
const contextOf = (lm) => lm.config.n_positions ?? lm.config.max_position_embeddings;

/** A sentence's tokens without special ones (the Llama's tokenizer.json template would put its <|endoftext|> first). */
const pieces = (lm, s) => (lm.type === 'llama' ? lm.tokenizer.encode(s, { addSpecialTokens: false }) : lm.tokenizer.encode(s));

export function decoderQuality(lm, { val, train, valWords, trainWords }) {
  const eot = lm.tokenizer.tokenId('<|endoftext|>');
  const stream = (s) => [eot, ...pieces(lm, s), eot];
  // Unigram: training token frequencies (each sentence ends in its <|endoftext|>), add-one.
  const counts = new Float64Array(lm.config.vocab_size);
  let total = 0;
  for (const s of train) for (const id of stream(s).slice(1)) { counts[id]++; total++; }
  let modelNats = 0, unigramNats = 0, tokens = 0;
  for (const s of val) {
    const ids = stream(s);
    for (const n of tokenNats(lm, ids)) modelNats += n;
    for (const id of ids.slice(1)) unigramNats -= Math.log((counts[id] + 1) / (total + counts.length));
    tokens += ids.length - 1;
  }
  const perWord = (nats) => Math.exp(nats / valWords);
  return {
    task: 'next-word prediction',
    measure: 'perplexity per word',
    value: round(perWord(modelNats), 1),
    baseline: { name: 'unigram (word-piece frequencies of the training text, add-one)', value: round(perWord(unigramNats), 1) },
    lower_is_better: true,
    heldout: `${val.length} sentences of Brown's 25 validation documents (${valWords} corpus words, ${tokens} predicted tokens), each sentence alone as <|endoftext|> s <|endoftext|>`,
    per_token: { model_nats: round(modelNats / tokens, 4), unigram_nats: round(unigramNats / tokens, 4) },
    trained_on: { text: BROWN, words: trainWords },
  };
}

/** How many of the [MASK]ed `positions` of `input` ({ tokens, tokenTypes? }) the model's first guess gets right. */
export function blanksRight(lm, input, positions, targets) {
  const r = lm.run(input, { logits: true });
  return Math.round(lm.maskedLmLoss(r, positions, targets).accuracy * positions.length);
}

export function bertQuality(lm, { val, train, trainWords }) {
  const tk = lm.tokenizer, P = lm.config.max_position_embeddings;
  const special = new Set([tk.clsId, tk.sepId, tk.padId, tk.maskId, tk.unkId].filter(Number.isInteger));
  // The baseline's one guess: the training text's most frequent token.
  const counts = new Map();
  for (const s of train) for (const id of tk.encode(s, { maxLength: P }).ids) if (!special.has(id)) counts.set(id, (counts.get(id) ?? 0) + 1);
  const [top] = [...counts].reduce((a, b) => (b[1] > a[1] ? b : a));
  const random = seeded(MASK_SEED);
  let right = 0, masked = 0, baselineRight = 0, sentences = 0;
  for (const s of val) {
    const ids = tk.encode(s, { maxLength: P }).ids;
    const real = ids.map((_, i) => i).filter((i) => !special.has(ids[i]));
    if (!real.length) continue;
    let positions = real.filter(() => random() < MASK_SHARE);
    if (!positions.length) positions = [real[Math.floor(random() * real.length)]];
    const targets = positions.map((i) => ids[i]);
    const input = ids.slice();
    for (const i of positions) input[i] = tk.maskId;
    right += blanksRight(lm, { tokens: input }, positions, targets);
    baselineRight += targets.filter((t) => t === top).length;
    masked += positions.length;
    sentences++;
  }
  return {
    task: 'fill in the blank',
    measure: 'top-1 accuracy at [MASK]',
    value: round(right / masked, 4),
    baseline: { name: `always guessing the training text's most frequent token, "${tk.tokenText(top)}"`, value: round(baselineRight / masked, 4) },
    lower_is_better: false,
    heldout: `${sentences} sentences of Brown's 25 validation documents, ${Math.round(MASK_SHARE * 100)} % of each one's tokens hidden behind [MASK] (seed ${MASK_SEED}, at least one): ${masked} blanks`,
    trained_on: { text: BROWN, words: trainWords },
  };
}

/** Edit distance between two phoneme sequences. */
function editDistance(a, b) {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

export function bartQuality(lm, { words, trainEntries }) {
  const BATCH = 64; // pronounce() reads at most 64 words per call
  let wrongWords = 0, phonemeErrors = 0, phonemes = 0;
  for (let i = 0; i < words.length; i += BATCH) {
    const batch = words.slice(i, i + BATCH);
    const said = lm.pronounce(batch.map(([w]) => w).join(' '));
    if (said.length !== batch.length) throw new Error(`pronounce gave ${said.length} results for ${batch.length} words`);
    said.forEach(({ phonemes: out }, k) => {
      const nearest = batch[k][1].map((ref) => [editDistance(out, ref), ref.length]).reduce((a, b) => (b[0] < a[0] ? b : a));
      if (nearest[0] > 0) wrongWords++;
      phonemeErrors += nearest[0];
      phonemes += nearest[1];
    });
  }
  return {
    task: 'spelling to sound',
    measure: 'word error rate',
    value: round(wrongWords / words.length, 4),
    phoneme_error_rate: round(phonemeErrors / phonemes, 4),
    lower_is_better: true,
    heldout: `${words.length} CMUdict test words (tools/train/g2p/prepare_cmudict.py's split), greedy decoding; a word is right when it matches one of its dictionary pronunciations`,
    trained_on: { text: 'the CMU Pronouncing Dictionary', words: trainEntries },
  };
}

/** Layers, heads and width, whatever the config calls them (BART: the encoder's, and its decoder's layers). */
function shapeOf(c) {
  return {
    layers: c.n_layer ?? c.num_hidden_layers ?? c.encoder_layers, heads: c.n_head ?? c.num_attention_heads ?? c.encoder_attention_heads,
    ...(c.decoder_layers ? { decoder_layers: c.decoder_layers } : {}), d_model: c.n_embd ?? c.hidden_size ?? c.d_model,
  };
}

const round = (v, digits) => Math.round(v * 10 ** digits) / 10 ** digits;

async function main() {
  const attn = await loadAttention({ threads: 1 });
  const data = heldOutSplits();
  const load = (name) => attn.loadModel(modelDir(name));
  const measures = {
    'brown-gpt2': (lm) => decoderQuality(lm, data),
    'brown-llama': (lm) => decoderQuality(lm, data),
    'brown-bert': (lm) => bertQuality(lm, data),
    'g2p-bart': (lm) => bartQuality(lm, data),
  };
  const only = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  for (const [name, measure] of Object.entries(measures)) {
    if (only.length && !only.includes(name)) continue;
    const t0 = performance.now();
    const lm = await load(name);
    const quality = { model: name, model_type: lm.type, tool: TOOL, parameters: parameterCount(name), ...shapeOf(lm.config), ...measure(lm) };
    lm.dispose();
    writeFileSync(join(modelDir(name), 'quality.json'), JSON.stringify(quality, null, 1) + '\n');
    console.log(`${name}: ${quality.measure} ${quality.value}${quality.baseline ? ` (baseline ${quality.baseline.value})` : ''}`
      + `${quality.phoneme_error_rate !== undefined ? `, phoneme error rate ${quality.phoneme_error_rate}` : ''} in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
}

/**
 * --sample: the same measures on each model's heldout-sample.json (whose reference figures PyTorch
 * computed, tools/train/heldout_sample.py), printed as JSON for tests/js/quality.test.cjs.
 */
async function sample() {
  const attn = await loadAttention({ threads: 1 });
  const read = (name) => JSON.parse(readFileSync(join(modelDir(name), 'heldout-sample.json'), 'utf8'));
  const decoder = async (name) => {
    const lm = await attn.loadModel(modelDir(name));
    const sentences = read(name).sentences, long = sentences.flatMap((x) => x.ids).slice(0, 200);
    const nats = sentences.map(({ ids }) => tokenNats(lm, ids).reduce((a, b) => a + b, 0));
    // Longer than the context: scored in windows, the first one as a run of its own.
    const result = { nats, long: { nats: tokenNats(lm, long), firstWindow: tokenNats(lm, long.slice(0, contextOf(lm))) } };
    lm.dispose();
    return result;
  };
  const out = { gpt2: await decoder('brown-gpt2'), llama: await decoder('brown-llama') };
  const bert = await attn.loadModel(modelDir('brown-bert'));
  out.bert = read('brown-bert').examples.map((e) => blanksRight(bert, { tokens: e.input_ids, tokenTypes: e.token_type_ids }, e.masked_positions, e.original_ids));
  const bart = await attn.loadModel(modelDir('g2p-bart'));
  const q = bartQuality(bart, { words: read('g2p-bart').words.map((w) => [w.word, w.pronunciations]), trainEntries: 0 });
  out.bart = { wer: q.value, per: q.phoneme_error_rate };
  process.stdout.write(JSON.stringify(out));
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await (process.argv.includes('--sample') ? sample() : main());
