// generate()'s repetitionPenalty and minP, and a checkpoint's generation_config.json defaults,
// against references written here on brown-gpt2 (the shipped model, loaded once): each step's
// logits from a full forward (run, last position), the rule applied in float64 here, then the
// choice. The KV cache's logits and a full forward's agree to ~1e-6, far below the gaps between
// the choices compared here.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { root, load } = require('./helpers.cjs');

const FOLDER = path.join(root, 'web/models/brown-gpt2');
const PROMPT = 'The jury said';
let attn, model;
beforeAll(async () => {
  attn = await load('simd');
  model = await attn.loadModel(FOLDER);
}, 60000);
afterAll(() => model?.dispose());

/** The next-token logits after `tokens`, from a full forward (no KV cache). */
const lastLogits = (tokens) => Array.from(model.run(tokens, { logitsToKeep: 1 }).logits);

/** The CTRL / transformers rule: a seen token's logit divided by the penalty when positive, else multiplied. */
function penalized(logits, seen, penalty) {
  const out = logits.slice();
  for (const id of new Set(seen)) out[id] = out[id] > 0 ? out[id] / penalty : out[id] * penalty;
  return out;
}

const argmax = (x) => x.reduce((best, v, i) => (v > x[best] ? i : best), 0);

/** Greedy decoding with a repetition penalty, step by step from full forwards, to the end token
 * or `steps` tokens. */
function referenceGreedy(promptTokens, steps, penalty) {
  const tokens = [...promptTokens], out = [];
  for (let i = 0; i < steps; i++) {
    const next = argmax(penalized(lastLogits(tokens), tokens, penalty));
    if (next === model.eosTokenId) return { tokens: out, finishReason: 'eos' };
    out.push(next);
    tokens.push(next);
  }
  return { tokens: out, finishReason: 'length' };
}

/** A token's probability over the most likely one's at temperature T: exp((l_token - l_max) / T). */
const ratio = (logits, token, T) => Math.exp((logits[token] - logits.reduce((m, l) => Math.max(m, l), -Infinity)) / T);

test('repetitionPenalty: greedy output is the reference rule\'s, and differs from plain greedy', async () => {
  const prompt = model.tokenizer.encode(PROMPT);
  const bos = model.bosTokenId;
  const promptTokens = [bos, ...prompt];
  // 0.8 < 1 favours what was seen: here the end token (the prepended <|endoftext|>) soon wins.
  for (const penalty of [1.5, 1.2, 0.8]) {
    const out = await model.generate(PROMPT, { prependBos: true, maxNewTokens: 10, repetitionPenalty: penalty });
    expect({ tokens: out.tokens, finishReason: out.finishReason }).toEqual(referenceGreedy(promptTokens, 10, penalty));
  }
  const plain = await model.generate(PROMPT, { prependBos: true, maxNewTokens: 10 });
  const penalizedOut = await model.generate(PROMPT, { prependBos: true, maxNewTokens: 10, repetitionPenalty: 1.5 });
  expect(penalizedOut.tokens).not.toEqual(plain.tokens);
  // Plain greedy repeats a token; the penalty makes it repeat less.
  const repeats = (t) => t.length - new Set(t).size;
  expect(repeats(plain.tokens)).toBeGreaterThan(repeats(penalizedOut.tokens));
  // 1 is off: the same tokens as without it.
  expect((await model.generate(PROMPT, { prependBos: true, maxNewTokens: 10, repetitionPenalty: 1 })).tokens).toEqual(plain.tokens);
}, 60000);

test('minP: every sampled token has at least minP times the most likely token\'s probability; without it some do not', async () => {
  const T = 1.5, minP = 0.2;
  let violationsWithout = 0, checked = 0;
  for (let seed = 1; seed <= 4; seed++) {
    for (const withMinP of [true, false]) {
      const out = await model.generate(PROMPT, { prependBos: true, maxNewTokens: 7, temperature: T, seed, ...(withMinP ? { minP } : {}) });
      const tokens = [model.bosTokenId, ...model.tokenizer.encode(PROMPT)];
      for (const token of out.tokens) {
        const r = ratio(lastLogits(tokens), token, T);
        if (withMinP) {
          expect(r).toBeGreaterThanOrEqual(minP - 1e-6);
          checked++;
        } else if (r < minP) violationsWithout++;
        tokens.push(token);
      }
    }
  }
  expect(checked).toBeGreaterThan(15);
  expect(violationsWithout).toBeGreaterThan(0);
  // minP 1 keeps only the most likely token: sampling becomes greedy.
  const greedy = await model.generate(PROMPT, { prependBos: true, maxNewTokens: 8 });
  expect((await model.generate(PROMPT, { prependBos: true, maxNewTokens: 8, temperature: 2, seed: 3, minP: 1 })).tokens).toEqual(greedy.tokens);
}, 60000);

test('the ranking sampling and predictNext use is the logits\' order, ties by lower id, for a handful and for the whole vocabulary', () => {
  const run = model.run(PROMPT, { logitsToKeep: 1 });
  const logits = Array.from(run.logits);
  const order = logits.map((_, i) => i).sort((a, b) => logits[b] - logits[a] || a - b);
  // 5: one pass keeping the best; 300 and the whole row: the keyed sort of the row.
  for (const k of [5, 300, logits.length]) expect(model.predictNext(run, k).map((p) => p.id)).toEqual(order.slice(0, k));
});

test('bad values are named errors, and the model stays usable', async () => {
  await expect(model.generate(PROMPT, { repetitionPenalty: 0 })).rejects.toThrow(/repetitionPenalty/);
  await expect(model.generate(PROMPT, { repetitionPenalty: -1 })).rejects.toThrow(/repetitionPenalty/);
  await expect(model.generate(PROMPT, { minP: 1.5 })).rejects.toThrow(/minP/);
  await expect(model.generate(PROMPT, { minP: 'a' })).rejects.toThrow(/minP/);
  expect((await model.generate(PROMPT, { maxNewTokens: 2 })).tokens).toHaveLength(2);
});

describe('generation_config.json', () => {
  let dir;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-genconfig-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** brown-gpt2's folder with this generation_config.json beside its files. */
  async function withConfig(name, generationConfig) {
    const folder = path.join(dir, name);
    fs.mkdirSync(folder);
    for (const f of ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt']) fs.copyFileSync(path.join(FOLDER, f), path.join(folder, f));
    fs.writeFileSync(path.join(folder, 'generation_config.json'), JSON.stringify(generationConfig));
    return attn.loadModel(folder);
  }

  test('its defaults are used unless an option overrides them', async () => {
    const m = await withConfig('greedy', { do_sample: false, repetition_penalty: 1.5, max_new_tokens: 7, temperature: 0.6 });
    try {
      // do_sample false: greedy, whatever its temperature says (as transformers reads it).
      expect(m.generationDefaults).toEqual({ repetitionPenalty: 1.5, maxNewTokens: 7 });
      const out = await m.generate(PROMPT, { prependBos: true });
      expect(out.tokens).toEqual((await model.generate(PROMPT, { prependBos: true, maxNewTokens: 7, repetitionPenalty: 1.5 })).tokens);
      const overridden = await m.generate(PROMPT, { prependBos: true, maxNewTokens: 10, repetitionPenalty: 1 });
      expect(overridden.tokens).toEqual((await model.generate(PROMPT, { prependBos: true, maxNewTokens: 10 })).tokens);
    } finally {
      m.dispose();
    }
  }, 60000);

  test('do_sample: sampling with its temperature and transformers\' top_k default of 50; its eos ids end generate()', async () => {
    const plain = await model.generate(PROMPT, { prependBos: true, maxNewTokens: 10 });
    const third = plain.tokens[2];
    const m = await withConfig('sample', { do_sample: true, temperature: 0.7, top_p: 0.9, min_p: 0.05, eos_token_id: [50256, third] });
    try {
      expect(m.generationDefaults).toEqual({ temperature: 0.7, topK: 50, topP: 0.9, minP: 0.05, eosTokenIds: [50256, third].filter((id) => id < m.config.vocab_size) });
      const sampled = await m.generate(PROMPT, { prependBos: true, maxNewTokens: 10, seed: 9, temperature: 0 });
      // temperature 0 (an option) overrides do_sample: greedy, stopping at the third token.
      expect(sampled.finishReason).toBe('eos');
      expect(sampled.tokens).toEqual(plain.tokens.slice(0, 2));
      const a = await m.generate(PROMPT, { prependBos: true, maxNewTokens: 6, seed: 9 });
      const b = await model.generate(PROMPT, { prependBos: true, maxNewTokens: 6, seed: 9, temperature: 0.7, topK: 50, topP: 0.9, minP: 0.05, stop: [model.tokenizer.decode([third])] });
      expect(a.tokens.filter((t) => t !== third)).toEqual(a.tokens);
      expect(b.tokens.slice(0, a.tokens.length)).toEqual(a.tokens);
    } finally {
      m.dispose();
    }
  }, 60000);

  test('a field of the wrong kind is a named error at load', async () => {
    await expect(withConfig('bad', { do_sample: true, temperature: 'hot' })).rejects.toThrow(/generation_config\.json: temperature must be a number/);
    await expect(withConfig('bad2', { repetition_penalty: 0 })).rejects.toThrow(/generation_config\.json: repetition_penalty/);
  });
});
