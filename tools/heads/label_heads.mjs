// Labels the attention heads of the shipped models with one rule set (the library's headRules,
// bindings/ts/analysis/head_rules.ts),
// measured on held-out text through this library's WebAssembly forward (dist/, not PyTorch).
//
//   node scripts/bundle.mjs && node tools/heads/label_heads.mjs
//       writes web/models/{brown-gpt2,brown-bert,g2p-bart}/heads.json and the check text
//       tests/fixtures/head_labels/check.json (other held-out sentences and words, never used
//       for the labels). Needs python3 once, for the held-out splits (tools/train/prepare_*.py).
//   node tools/heads/label_heads.mjs --check
//       prints (JSON) every head's scores measured on the check text with another seed for the
//       random words: what tests/js/head_labels.test.cjs compares with heads.json.
//
// Held-out text: Brown's validation documents (tools/train/prepare_brown.py, the split both Brown
// models were trained without) and CMUdict's test words (tools/train/g2p/prepare_cmudict.py).
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAttention, headRules } from '../../dist/index.node.js';
import { heldOutSplits } from '../quality/held_out.mjs';

const {
  LABELS, BROAD, labelHead, addSentence, textRows, selfScores, PROBE_WORDS, seeded, randomWords, inductionRows,
  addInduction, inductionScores, addCrossWord, crossScores,
} = headRules;

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const CHECK_FILE = join(root, 'tests/fixtures/head_labels/check.json');
const SIZES = { sentences: 300, checkSentences: 120, words: 1000, checkWords: 300 };
// Random words written twice: PROBES sequences of PROBE_LENGTH words each.
const PROBES = 48, PROBE_LENGTH = 10, SEED = { label: 1, check: 2 };
const MIN_TOKENS = 8, MAX_TOKENS = 60;

/** Held-out Brown sentences and CMUdict words (tools/quality/held_out.mjs). */
function heldOut() {
  const { val, words } = heldOutSplits();
  return { sentences: val, words: words.map(([w]) => w) };
}

/** Sentences whose token count (both tokenizers) is within bounds, alternately to label / check. */
function splitSentences(sentences, gpt2, bert) {
  const fits = (n) => n >= MIN_TOKENS && n <= MAX_TOKENS;
  const usable = sentences.filter((s) => fits(gpt2.tokenizer.encode(s).length) && fits(bert.tokenizer.encode(s).ids.length - 2));
  const label = usable.filter((_, i) => i % 2 === 0).slice(0, SIZES.sentences);
  const check = usable.filter((_, i) => i % 2 === 1).slice(0, SIZES.checkSentences);
  return { label, check };
}

// A word's ids inside a text (GPT-2: after a space; BERT: without [CLS]/[SEP]).
const gpt2Word = (model) => (w) => model.tokenizer.encode(' ' + w);
const bertWord = (model) => (w) => model.tokenizer.encode(w).ids.slice(1, -1);
const oneToken = (encode) => PROBE_WORDS.filter((w) => encode(w).length === 1);

/** The probe words the tokenizer keeps as one token, as ids (encode: word -> ids). */
function probeIds(encode) {
  return PROBE_WORDS.map(encode).filter((ids) => ids.length === 1).map(([id]) => id);
}

/** Random words written twice: `PROBES` id sequences (before any start token). */
function probes(ids, seed) {
  const random = seeded(seed);
  return Array.from({ length: PROBES }, () => {
    const words = randomWords(ids, PROBE_LENGTH, random);
    return [...words, ...words];
  });
}

// The decoder-only models: GPT-2, and the Llama (brown-llama), whose tokenizer.json template puts
// <|endoftext|> first by itself (so no prependBos, and a probe word is encoded without it).
function gpt2Scores(model, sentences, seed) {
  const llama = model.type === 'llama';
  const L = llama ? model.config.num_hidden_layers : model.config.n_layer;
  const H = llama ? model.config.num_attention_heads : model.config.n_head;
  const word = llama ? (w) => model.tokenizer.encode(' ' + w, { addSpecialTokens: false }) : gpt2Word(model);
  const sums = [], ind = [];
  let bos = null;
  for (const s of sentences) {
    const run = model.run(s, { prependBos: !llama, attention: true });
    bos = run.tokens[0];
    const n = run.tokens.length;
    addSentence(sums, run.attention, n, L * H, textRows(n, true));
  }
  for (const words of probes(probeIds(word), seed)) {
    const ids = [bos, ...words];
    const run = model.run(ids, { attention: true });
    addInduction(ind, run.attention, ids.length, L * H, inductionRows(ids), true);
  }
  const measured = { ...merge(selfScores(sums, true), inductionScores(ind), H, sums[0].rows, ind[0].rows), probeWords: oneToken(word) };
  // Grouped-query attention: which K/V head each query head reads (the demo draws the groups).
  if (llama) for (const h of measured.heads) h.kvHead = model.kvHeadOf(h.head);
  return measured;
}

function bertScores(model, sentences, seed) {
  const { num_hidden_layers: L, num_attention_heads: H } = model.config;
  const tk = model.tokenizer, sums = [], ind = [];
  for (const s of sentences) {
    const enc = tk.encode(s), n = enc.ids.length;
    const run = model.run({ tokens: enc.ids, tokenTypes: enc.tokenTypes }, { attention: true });
    addSentence(sums, run.attention, n, L * H, textRows(n, false));
  }
  for (const words of probes(probeIds(bertWord(model)), seed)) {
    const ids = [tk.clsId, ...words, tk.sepId];
    const run = model.run({ tokens: ids, tokenTypes: ids.map(() => 0) }, { attention: true });
    addInduction(ind, run.attention, ids.length, L * H, inductionRows(ids), false);
  }
  return { ...merge(selfScores(sums, false), inductionScores(ind), H, sums[0].rows, ind[0].rows), probeWords: oneToken(bertWord(model)) };
}

function bartScores(model, words) {
  const { decoder_layers: L, decoder_attention_heads: H } = model.config;
  const sums = [];
  for (const w of words) {
    const r = model.generate(w);
    addCrossWord(sums, r.crossAttention, r.outputTexts.length, r.sourceTokens.length, L * H);
  }
  return { heads: crossScores(sums).map((s, i) => ({ layer: Math.floor(i / H), head: i % H, scores: s })), rows: sums[0].rows };
}

function merge(self, induction, H, rows, inductionRowCount) {
  return {
    heads: self.map((s, i) => ({ layer: Math.floor(i / H), head: i % H, scores: { ...s, ...induction[i] } })),
    rows, inductionRows: inductionRowCount,
  };
}

const round = (scores) => Object.fromEntries(Object.entries(scores).map(([k, v]) => [k, Math.round(v * 1e4) / 1e4]));

/** The heads.json of one model from its measured scores. */
function headsFile(name, kind, measured, heldOutText) {
  return {
    model: name,
    tool: 'node tools/heads/label_heads.mjs (rules: bindings/ts/analysis/head_rules.ts; forward: this library\'s WebAssembly build)',
    attention: kind === 'cross' ? 'cross (rows: the sounds written, keys: <s> letters </s>)' : 'self',
    kind,
    heldout: heldOutText,
    rows: measured.rows,
    ...(measured.inductionRows ? {
      induction_probe: `${PROBES} sequences of ${PROBE_LENGTH} random words written twice (seed ${SEED.label}): ${measured.inductionRows} rows`,
      // The words the page's "test this head" draws from: PROBE_WORDS that are one token here.
      probe_words: measured.probeWords,
    } : {}),
    rules: Object.fromEntries([...LABELS.filter((r) => !r.kinds || r.kinds.includes(kind))
      .map((r) => [r.name, `${r.score} >= ${r.min} (tried in this order; ${r.means}; measured: ${r.measured})`]), [BROAD.name, BROAD.means]]),
    heads: measured.heads.map(({ layer, head, kvHead, scores }) => {
      const { label, score } = labelHead(scores, kind);
      return { layer, head, ...(kvHead === undefined ? {} : { kv_head: kvHead }), label, score: score === null ? null : Math.round(score * 1e4) / 1e4, scores: round(scores) };
    }),
  };
}

// The model card's section on the demo's labels, between these markers (rewritten on every run;
// put before the card's own head analysis, which tools/train made with its earlier rules).
const CARD_START = '<!-- head labels: tools/heads/label_heads.mjs -->', CARD_END = '<!-- /head labels -->';
const CARD_BEFORE = /^## (What the (attention )?heads do|Does the cross-attention)/m;

function cardSection(file) {
  const rows = file.heads.map((h) => `| ${h.layer + 1} | ${h.head + 1} | ${h.label} | ${h.score === null ? '' : h.score.toFixed(2)} |`);
  const rules = Object.entries(file.rules).map(([name, rule]) => `* **${name}**: ${rule}`);
  return [CARD_START, '## Head labels in the demo', '',
    `Measured through this library's WebAssembly forward by \`node tools/heads/label_heads.mjs\` on ${file.heldout}`
    + `${file.induction_probe ? `; induction on ${file.induction_probe}` : ''}. One rule set for every model (\`bindings/ts/analysis/head_rules.ts\`):`
    + ' a head gets the first label whose score clears its threshold. Layers and heads are counted from 1, as in the demo.'
    + ' Where the analysis further down (made at training time with earlier rules) names a head differently, these labels are the ones'
    + ' the demo shows and tests/js/head_labels.test.cjs re-checks on other held-out text.', '',
    '| layer | head | label | score |', '|---|---|---|---|', ...rows, '', ...rules, CARD_END, ''].join('\n');
}

/** Puts (or replaces) the demo-labels section in a model card. */
function updateCard(path, file) {
  let card = readFileSync(path, 'utf8');
  const start = card.indexOf(CARD_START), end = card.indexOf(CARD_END);
  if (start >= 0 && end > start) card = card.slice(0, start) + card.slice(end + CARD_END.length).replace(/^\n+/, '');
  const at = card.search(CARD_BEFORE);
  const section = cardSection(file) + '\n';
  card = at >= 0 ? card.slice(0, at) + section + card.slice(at) : `${card.trimEnd()}\n\n${section}`;
  writeFileSync(path, card);
}

async function loadModels() {
  const attn = await loadAttention({ threads: 1 });
  const load = (name) => attn.loadModel(join(root, 'web/models', name));
  const llama = existsSync(join(root, 'web/models/brown-llama/model.safetensors')) ? await load('brown-llama') : null;
  return { gpt2: await load('brown-gpt2'), bert: await load('brown-bert'), bart: await load('g2p-bart'), llama };
}

/** Every model's scores on the given text (the heads.json content without labels). */
function measureAll(models, text, seed) {
  return {
    'brown-gpt2': gpt2Scores(models.gpt2, text.sentences, seed),
    'brown-bert': bertScores(models.bert, text.sentences, seed),
    'g2p-bart': bartScores(models.bart, text.words),
    ...(models.llama ? { 'brown-llama': gpt2Scores(models.llama, text.sentences, seed) } : {}),
  };
}

async function build() {
  const models = await loadModels();
  const { sentences, words } = heldOut();
  const split = splitSentences(sentences, models.gpt2, models.bert);
  const label = { sentences: split.label, words: words.filter((_, i) => i % 2 === 0).slice(0, SIZES.words) };
  const check = { sentences: split.check, words: words.filter((_, i) => i % 2 === 1).slice(0, SIZES.checkWords) };
  const measured = measureAll(models, label, SEED.label);
  const brown = `${label.sentences.length} Brown validation sentences (every other one of ${MIN_TOKENS}-${MAX_TOKENS} tokens; tools/train/prepare_brown.py's split)`;
  const files = {
    'brown-gpt2': headsFile('brown-gpt2', 'causal', measured['brown-gpt2'], `${brown}, each as <|endoftext|> s; rows from position 2`),
    'brown-bert': headsFile('brown-bert', 'bidirectional', measured['brown-bert'], `${brown}, each as [CLS] s [SEP]; rows: the sentence's tokens`),
    'g2p-bart': headsFile('g2p-bart', 'cross', measured['g2p-bart'], `${label.words.length} CMUdict test words (every other one; tools/train/g2p/prepare_cmudict.py's split), greedy outputs`),
  };
  if (models.llama) files['brown-llama'] = headsFile('brown-llama', 'causal', measured['brown-llama'], `${brown}, each as <|endoftext|> s (the tokenizer's template); rows from position 2`);
  for (const [name, file] of Object.entries(files)) {
    const old = join(root, 'web/models', name, 'heads.json');
    const before = existsSync(old) ? JSON.parse(readFileSync(old, 'utf8')) : {};
    // The repeated-sentence loss (tools/train/analyze_heads.py, PyTorch) is not a head score: kept.
    if (before.repeat_test) file.repeat_test = { ...before.repeat_test, measured_by: 'tools/train/analyze_heads.py' };
    writeFileSync(join(root, 'web/models', name, 'heads.json'), JSON.stringify(file, null, 1) + '\n');
    updateCard(join(root, 'web/models', name, 'MODEL_CARD.md'), file);
    for (const h of file.heads) console.log(`${name} layer ${h.layer + 1} head ${h.head + 1}: ${h.label}${h.score === null ? '' : ' ' + h.score.toFixed(2)}`);
  }
  mkdirSync(dirname(CHECK_FILE), { recursive: true });
  writeFileSync(CHECK_FILE, JSON.stringify({
    about: 'Held-out text the head labels were NOT measured on (tools/heads/label_heads.mjs --check re-measures on it)',
    seed: SEED.check, ...check,
  }, null, 1) + '\n');
}

async function checkScores() {
  const models = await loadModels();
  const check = JSON.parse(readFileSync(CHECK_FILE, 'utf8'));
  const measured = measureAll(models, check, check.seed);
  const kinds = { 'brown-gpt2': 'causal', 'brown-bert': 'bidirectional', 'g2p-bart': 'cross', 'brown-llama': 'causal' };
  const heads = Object.fromEntries(Object.entries(measured).map(([name, m]) => [name, m.heads.map((h) => ({
    ...h, label: labelHead(h.scores, kinds[name]).label, scores: round(h.scores),
  }))]));
  process.stdout.write(JSON.stringify({ rules: LABELS.map(({ name, score, min }) => ({ name, score, min })), heads }));
}

await (process.argv.includes('--check') ? checkScores() : build());
