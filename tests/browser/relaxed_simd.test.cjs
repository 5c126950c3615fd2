// The relaxed-SIMD build (attention_relaxed.wasm) in Chromium, the engine it is meant for: picked
// by 'auto' at one thread, its integer products held to the scalar twins (to the bit) and to a
// float64 reference, and a small Llama's greedy tokens equal to the SIMD build's. Only a browser can
// check it: Node 20 runs relaxed SIMD behind a flag only, and its relaxed dot product gives other
// numbers than Chromium's outside the 7-bit range (the kernels stay inside it).
const fs = require('node:fs');
const path = require('node:path');
const { open, servedRepository } = require('./chromium.cjs');
// (random: mulberry32 in [-0.5, 0.5), the same inputs every run)
const { checkpoint, random, safetensors, tokenizerFiles } = require('../js/llama_checkpoint.cjs');

const root = path.resolve(__dirname, '../..');
const site = servedRepository(root);
let page;

beforeAll(async () => {
  ({ page } = await open(site.browser.context, `${site.base}/tests/browser/pages/relaxed.html`));
  await page.waitForFunction(() => window.result !== undefined);
});

test("Chromium validates relaxed SIMD: 'auto' at one thread picks the relaxed build, which runs its own kernels", async () => {
  const r = await page.evaluate(() => window.result);
  expect(r.failed).toBeUndefined();
  expect(r).toEqual({ supported: true, variants: ['relaxed', 'simd'], kernels: ['relaxed', 'simd'] });
});

// Every type with an integer product: the relaxed dot product's (Q4_0, Q4_1, Q5_0, Q5_1) and those
// the relaxed build keeps from the SIMD build (Q8_0, the K-quants).
const TYPES = ['Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q8_0', 'Q4_K', 'Q5_K', 'Q6_K', 'Q3_K', 'Q2_K'];

test.each(TYPES)('%s: the relaxed build equals its scalar twin to the bit, and the float64 product within its quantization', async (type) => {
  // N = 9: two whole groups of four rows and a part; K = 256: a K-quant super-block. M = 1 is a
  // decoding step, M = 3 a prompt. One activation per block is an extreme (its code +-127) and the
  // weights span their block's range, so the end codes of both operands occur.
  const N = 9, K = 256, next = random(TYPES.indexOf(type) + 7);
  const w = Array.from({ length: N * K }, () => 2 * next());
  for (const M of [1, 3]) {
    const a = Array.from({ length: M * K }, (_, i) => (i % 32 === 5 ? -4 : 3 * next()));
    const out = await page.evaluate((spec) => window.products(spec), { type, M, N, K, a, w });
    expect(out.relaxed).toEqual(out.scalar);
    for (let i = 0; i < M; i++)
      for (let j = 0; j < N; j++) {
        // The activations are quantized per block of 32 to d = max|a| / 127: each off by at most d / 2.
        let exact = 0, bound = 0;
        for (let b = 0; b < K; b += 32) {
          let amax = 0, wabs = 0;
          for (let k = b; k < b + 32; k++) {
            const x = a[i * K + k], y = out.decoded[j * K + k];
            exact += x * y, amax = Math.max(amax, Math.abs(x)), wabs += Math.abs(y);
            bound += 1e-5 * Math.abs(x * y);  // (float32 sums of the blocks)
          }
          bound += (amax / 127 / 2) * wabs;
        }
        expect(Math.abs(out.relaxed[i * N + j] - exact)).toBeLessThanOrEqual(bound);
      }
  }
});

test('a small Llama held as q4 and as q8 decodes the same greedy tokens on the relaxed build as on the SIMD build', async () => {
  // Every product's K a multiple of 32, so q4 / q8 hold every matrix in blocks.
  const config = {
    architectures: ['LlamaForCausalLM'], model_type: 'llama', vocab_size: 23, hidden_size: 128, intermediate_size: 256,
    num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 32, max_position_embeddings: 64,
    rms_norm_eps: 1e-5, rope_theta: 10000, tie_word_embeddings: true, hidden_act: 'silu', torch_dtype: 'float32',
  };
  const dir = path.join(root, 'build/relaxed-llama');
  fs.mkdirSync(dir, { recursive: true });
  const tok = tokenizerFiles();
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(tok.tokenizer));
  // (no end-of-text token: every run decodes all n tokens)
  fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify({ bos_token: tok.config.bos_token }));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), safetensors(checkpoint(config, 35)));
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  for (const dtype of ['q4', 'q8']) {
    const out = await page.evaluate((spec) => window.generate(spec), { folder: '/build/relaxed-llama/', dtype, prompt: [0, 4, 9, 13, 2, 17], n: 24 });
    expect(out.relaxed).toHaveLength(24);
    expect(out.relaxed).toEqual(out.simd);
  }
});
