// What a viewer asks a loaded model (models/layer_inspection.ts): model.headWeights(layer, head)
// against the checkpoint's own tensors read here the way each family stores them (GPT-2's Conv1D
// in x out, Llama's nn.Linear out x in with 2 K/V heads for 8 query heads), equal to the bit as
// stored (f16 -> float32 is exact) and within Q8_0's step at q8; and model.appliedMask(layer)
// against the causal triangle and BERT's padded keys written out here.
const fs = require('node:fs');
const path = require('node:path');
const { root, load, api } = require('./helpers.cjs');

const folder = (name) => path.join(root, 'web/models', name);
function checkpoint(name) {
  const file = api.parseSafetensors(new Uint8Array(fs.readFileSync(path.join(folder(name), 'model.safetensors'))));
  return (tensor) => file.tensors.get(tensor).toFloat32();
}

describe('headWeights', () => {
  let attn;
  beforeAll(async () => { attn = await load('simd'); });

  for (const dtype of [undefined, 'q8']) {
    test(`GPT-2${dtype ? ' at ' + dtype : ''}: W^Q/W^K/W^V columns of c_attn and W^O rows of c_proj`, async () => {
      const model = await attn.loadModel(folder('brown-gpt2'), dtype ? { dtype } : {});
      const t = checkpoint('brown-gpt2');
      const { n_embd: D, n_head: H } = model.config;
      const dK = D / H;
      // Element (input i, output o) of a Conv1D matrix with `outs` outputs, and its Q8_0 block's
      // largest |value| (blocks run along the inputs of one output).
      const at = (m, outs, i, o) => m[i * outs + o];
      const blockMax = (m, outs, i, o) => {
        let mx = 0;
        for (let k = i - (i % 32); k < i - (i % 32) + 32; k++) mx = Math.max(mx, Math.abs(at(m, outs, k, o)));
        return mx;
      };
      const same = (got, m, outs, i, o) => {
        const want = at(m, outs, i, o);
        if (!dtype) return got === want;
        return Math.abs(got - want) <= (blockMax(m, outs, i, o) / 127) * 0.5 * (1 + 2 ** -10) + 1e-12;
      };
      for (const [layer, head] of [[0, 0], [1, 3], [3, 2]]) {
        const w = model.headWeights(layer, head);
        expect([w.dModel, w.dK, w.dV, w.kvHead, w.wQ.length, w.wO.length]).toEqual([D, dK, dK, head, D * dK, dK * D]);
        const cAttn = t(`h.${layer}.attn.c_attn.weight`), cProj = t(`h.${layer}.attn.c_proj.weight`);
        const bias = t(`h.${layer}.attn.c_attn.bias`);
        let bad = 0;
        for (let i = 0; i < D; i++)
          for (let c = 0; c < dK; c++) {
            if (!same(w.wQ[i * dK + c], cAttn, 3 * D, i, head * dK + c)) bad++;
            if (!same(w.wK[i * dK + c], cAttn, 3 * D, i, D + head * dK + c)) bad++;
            if (!same(w.wV[i * dK + c], cAttn, 3 * D, i, 2 * D + head * dK + c)) bad++;
          }
        for (let k = 0; k < dK; k++)
          for (let r = 0; r < D; r++) if (!same(w.wO[k * D + r], cProj, D, head * dK + k, r)) bad++;
        expect(bad).toBe(0);
        expect(Array.from(w.bQ)).toEqual(Array.from(bias.subarray(head * dK, (head + 1) * dK)));
      }
      expect(() => model.headWeights(4, 0)).toThrow(/headWeights: layer 4 out of range/);
      expect(() => model.headWeights(0, 9)).toThrow(/headWeights: head 9 out of range \(4 heads\)/);
      expect(() => model.headWeights(0.5, 0)).toThrow(/headWeights: layer must be a non-negative integer, got 0.5/);
      model.dispose();
    });
  }

  test('Llama: query head h reads K/V head h / 4; rows of q/k/v_proj and columns of o_proj, as stored', async () => {
    const model = await attn.loadModel(folder('brown-llama'));
    const t = checkpoint('brown-llama');
    const { hidden_size: D, head_dim: dK, num_attention_heads: H } = model.config;
    for (const [layer, head] of [[0, 0], [2, 5], [3, 7]]) {
      const w = model.headWeights(layer, head);
      const kv = Math.floor(head / 4);
      expect(w.kvHead).toBe(kv);
      expect(w.bQ.length).toBe(0);  // attention_bias false
      const p = `model.layers.${layer}.self_attn.`;
      const q = t(p + 'q_proj.weight'), k = t(p + 'k_proj.weight'), v = t(p + 'v_proj.weight'), o = t(p + 'o_proj.weight');
      const wantQ = new Float32Array(D * dK), wantK = new Float32Array(D * dK), wantV = new Float32Array(D * dK);
      const wantO = new Float32Array(dK * D);
      for (let i = 0; i < D; i++)
        for (let c = 0; c < dK; c++) {
          wantQ[i * dK + c] = q[(head * dK + c) * D + i];
          wantK[i * dK + c] = k[(kv * dK + c) * D + i];
          wantV[i * dK + c] = v[(kv * dK + c) * D + i];
        }
      for (let c = 0; c < dK; c++) for (let r = 0; r < D; r++) wantO[c * D + r] = o[r * H * dK + head * dK + c];
      expect(w.wQ).toEqual(wantQ);
      expect(w.wK).toEqual(wantK);
      expect(w.wV).toEqual(wantV);
      expect(w.wO).toEqual(wantO);
    }
    model.dispose();
  });
});

describe('appliedMask', () => {
  let attn;
  beforeAll(async () => { attn = await load('simd'); });

  test('a decoder run with attention: the causal triangle in every layer; null before', async () => {
    const model = await attn.loadModel(folder('brown-llama'));
    expect(model.appliedMask(0)).toBeNull();
    const run = model.run('The jury said it', { attention: true });
    const n = run.tokenTexts.length;
    for (let layer = 0; layer < 4; layer++) {
      const m = model.appliedMask(layer);
      expect([m.batch, m.seqQ, m.seqK]).toEqual([1, n, n]);
      for (let i = 0; i < n; i++)
        for (let j = 0; j < n; j++) expect(m.hidden[i * n + j]).toBe(j > i ? 1 : 0);
    }
    expect(() => model.appliedMask(-1)).toThrow(/appliedMask: layer must be a non-negative integer/);
    model.dispose();
  });

  test("BERT padded to 8: the [PAD] keys hidden from every query, nothing else", async () => {
    const model = await attn.loadModel(folder('brown-bert'));
    const run = model.run('the jury said', { padTo: 8, attention: true });
    const m = model.appliedMask(2);
    expect([m.seqQ, m.seqK]).toEqual([8, 8]);
    for (let i = 0; i < 8; i++)
      for (let j = 0; j < 8; j++) expect(m.hidden[i * 8 + j]).toBe(run.padding[j]);
    expect(run.padding.filter((p) => p).length).toBeGreaterThan(0);
    model.dispose();
  });
});
