// Hostile input at every entry point of the attention layers (issues 21 and 26): each argument and
// each option key set to each hostile value, unknown and misspelt keys, non-objects, calls after
// dispose(). Every call gives a result or an AttentionError, and the layer computes the same
// output afterwards; every documented key is accepted.
const fs = require('node:fs');
const path = require('node:path');
const { api, load, root, randomArray } = require('./helpers.cjs');
const { HOSTILE, hostileOptions, fuzz, outcome, expectNamed } = require('./fuzz.cjs');
const { documentedKeys } = require('./documented_keys.cjs');

const D = 8, H = 2, S = 3;
const weights = () => ({
  wQ: randomArray(D * D, 1), wK: randomArray(D * D, 2), wV: randomArray(D * D, 3), wO: randomArray(D * D, 4),
  bQ: randomArray(D, 5), bK: randomArray(D, 6), bV: randomArray(D, 7), bO: randomArray(D, 8),
});
const x = randomArray(S * D, 42);
// An options object's hostile cases merged into a valid base (a lone key would often fail only
// for a missing required one); non-objects are passed as they are.
const over = (base, cases) => cases.map((c) => (c && typeof c === 'object' && !Array.isArray(c) && !ArrayBuffer.isView(c) ? { ...base, ...c } : c));
const equal = (a, b) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));

let attn, layer, good;
beforeAll(async () => {
  attn = await load('simd');
  layer = attn.createMultiHeadAttention({ dModel: D, numHeads: H });
  layer.setWeights(weights());
  good = layer.forward(x).output;
});
afterAll(() => layer.dispose());

/** Throws unless the layer still gives the first output (fuzz's "model unchanged" check). */
function same() {
  if (!equal(layer.forward(x).output, good)) throw new Error('the output changed');
}

test('createMultiHeadAttention: hostile configs and config keys', async () => {
  const configs = [...HOSTILE, ...over({ dModel: D, numHeads: H }, hostileOptions(documentedKeys('MultiHeadAttentionConfig')))];
  const bad = await fuzz(configs, (c) => attn.createMultiHeadAttention(c).dispose(), same);
  expect(bad).toEqual([]);
  await expectNamed(() => attn.createMultiHeadAttention({ dModel: D, numHeads: H, bais: false }), /^createMultiHeadAttention: unknown config key 'bais' \(did you mean 'bias'\?\)$/);
  await expectNamed(() => attn.createMultiHeadAttention(null), /^createMultiHeadAttention: config must be an object like \{ dModel: 512, numHeads: 8 \}, got null$/);
});

test('setWeights: hostile weights objects and each weight set to each hostile value', async () => {
  const target = attn.createMultiHeadAttention({ dModel: D, numHeads: H });
  target.setWeights(weights());
  const before = target.forward(x).output;
  const unchanged = () => { same(); if (!equal(target.forward(x).output, before)) throw new Error('the target changed'); };
  const cases = [...HOSTILE, ...over(weights(), hostileOptions(documentedKeys('MultiHeadAttentionWeights')))];
  expect(await fuzz(cases, (w) => target.setWeights(w), unchanged)).toEqual([]);
  await expectNamed(() => target.setWeights({ ...weights(), Wq: weights().wQ }), /^setWeights: unknown weight 'Wq' \(did you mean 'wQ'\?\)$/);
  target.dispose();
});

test('forward: hostile queries, and each option set to each hostile value', async () => {
  expect(await fuzz(HOSTILE, (q) => layer.forward(q), same)).toEqual([]);
  expect(await fuzz(hostileOptions(documentedKeys('ForwardOptions')), (o) => layer.forward(x, o), same)).toEqual([]);
  await expectNamed(() => layer.forward(x, { casual: true }), /^forward: unknown option 'casual' \(did you mean 'causal'\?\)$/);
  await expectNamed(() => layer.forward(x, null), /^forward: options must be an object \(or left out\), got null$/);
});

test('scaledDotProductAttention: hostile q, k, v and options', async () => {
  const q = randomArray(2 * 3 * 4, 9), base = { dK: 4, heads: 2 };
  const sdpa = (args) => attn.scaledDotProductAttention(...args);
  const first = sdpa([q, q, q, base]).output;
  const unchanged = () => { same(); if (!equal(sdpa([q, q, q, base]).output, first)) throw new Error('sdpa changed'); };
  const cases = [
    ...HOSTILE.map((v) => [v, q, q, base]), ...HOSTILE.map((v) => [q, v, q, base]), ...HOSTILE.map((v) => [q, q, v, base]),
    ...HOSTILE.map((v) => [q, q, q, v]),
    ...over(base, hostileOptions(documentedKeys('ScaledDotProductAttentionOptions'))).map((o) => [q, q, q, o]),
  ];
  expect(await fuzz(cases, sdpa, unchanged)).toEqual([]);
  await expectNamed(() => sdpa([q, q, q, { ...base, heeds: 2 }]), /^scaledDotProductAttention: unknown option 'heeds' \(did you mean 'heads'\?\)$/);
});

test('weightsFromPyTorch: hostile state dicts, configs and prefixes', async () => {
  const state = { in_proj_weight: randomArray(3 * D * D), in_proj_bias: randomArray(3 * D), 'out_proj.weight': randomArray(D * D), 'out_proj.bias': randomArray(D) };
  const config = { dModel: D, numHeads: H };
  const cases = [
    ...HOSTILE.map((v) => [v, config]), ...HOSTILE.map((v) => [state, v]), ...HOSTILE.filter((v) => v !== undefined).map((v) => [state, config, v]),
    ...over(state, hostileOptions(['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias', 'q_proj_weight'])).map((s) => [s, config]),
    ...over(config, hostileOptions(documentedKeys('MultiHeadAttentionConfig'))).map((c) => [state, c]),
  ];
  expect(await fuzz(cases, (args) => api.weightsFromPyTorch(...args))).toEqual([]);
  // The module's own keys are checked; another submodule's (a dot further down) are not ours.
  await expectNamed(() => api.weightsFromPyTorch({ ...state, in_proj_weights: state.in_proj_weight }, config), /unknown key 'in_proj_weights' \(did you mean 'in_proj_weight'\?\)/);
  expect(api.weightsFromPyTorch({ ...state, 'linear1.weight': new Float32Array(1) }, config).wQ).toHaveLength(D * D);
});

test('loadAttention: hostile options and option values', async () => {
  const cases = hostileOptions(documentedKeys('LoadOptions'));
  expect(await fuzz(cases, async (o) => { await api.loadAttention(o); })).toEqual([]);
  await expectNamed(() => api.loadAttention({ thread: 2 }), /^loadAttention: unknown option 'thread' \(did you mean 'threads'\?\)$/);
});

test('calls after dispose() are named errors', async () => {
  const gone = attn.createMultiHeadAttention({ dModel: D, numHeads: H });
  gone.setWeights(weights());
  gone.dispose();
  for (const call of [() => gone.forward(x), () => gone.setWeights(weights()), () => gone.forward(x, { notAnOption: 1 })])
    await expectNamed(call, /^this MultiHeadAttention has been disposed$/);
});

test('no false positive: every documented key is accepted', async () => {
  const config = { dModel: D, numHeads: H, dK: 4, dV: 4, kdim: D, vdim: D, bias: true };
  expect(Object.keys(config).sort()).toEqual(documentedKeys('MultiHeadAttentionConfig'));
  const full = attn.createMultiHeadAttention(config);
  const w = weights();
  expect(Object.keys(w).sort()).toEqual(documentedKeys('MultiHeadAttentionWeights'));
  full.setWeights(w);
  const options = {
    batch: 1, seqLen: S, key: x, value: x, seqLenKV: S, trace: true, causal: true,
    keyPaddingMask: new Uint8Array(S), attnMask: new Float32Array(S * S), scale: 0.5, returnAttention: true,
  };
  expect(Object.keys(options).sort()).toEqual(documentedKeys('ForwardOptions'));
  const r = full.forward(x, options);
  expect(r.attention).toHaveLength(H * S * S);
  expect(r.trace.output).toEqual(r.output);
  full.dispose();

  const q = randomArray(2 * S * 4, 3);
  const sdpa = { dK: 4, batch: 1, heads: 2, trace: true, causal: false, keyPaddingMask: [false, false, true], attnMask: new Uint8Array(S * S), scale: 1, returnAttention: true };
  expect(Object.keys(sdpa).sort()).toEqual(documentedKeys('ScaledDotProductAttentionOptions'));
  expect(attn.scaledDotProductAttention(q, q, q, sdpa).attention).toHaveLength(2 * S * S);

  const wasmBinary = fs.readFileSync(path.join(root, 'dist/attention_simd.wasm'));
  const load = { simd: 'auto', threads: 1, wasmUrl: 'unused.wasm', wasmBinary };
  expect(Object.keys(load).sort()).toEqual(documentedKeys('LoadOptions'));
  expect((await api.loadAttention(load)).variant).toBe('simd');
  expect(await outcome(() => api.weightsFromPyTorch({ q_proj_weight: randomArray(D * D), k_proj_weight: randomArray(D * D),
    v_proj_weight: randomArray(D * D), in_proj_bias: randomArray(3 * D), 'out_proj.weight': randomArray(D * D), 'out_proj.bias': randomArray(D) }, config))).toBe('ok');
});
