// Llama-family models by Hub id, through the local Hub stand-in (hub_server.cjs): SmolLM2-135M's
// and TinyLlama-1.1B-Chat's exact config.json fields and file names, the sizes shrunk and the
// weights random, sharded into three files; each load's numbers equal the float64 reference, the
// progress covers every file read, and a second load is served from the cache.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { load } = require('./helpers.cjs');
const { startHubServer, shardSafetensors } = require('./hub_server.cjs');
const { checkpoint, maxDiff, reference, safetensors, tokenizerFiles } = require('./llama_checkpoint.cjs');

// HuggingFaceTB/SmolLM2-135M's config.json: every field as published, the sizes made small (9
// query heads sharing 3 K/V heads kept: 30 layers of 576 become 2 of 18).
const SMOLLM2 = {
  architectures: ['LlamaForCausalLM'], attention_bias: false, attention_dropout: 0.0, bos_token_id: 0, eos_token_id: 0,
  hidden_act: 'silu', hidden_size: 18, initializer_range: 0.041666666666666664, intermediate_size: 24,
  is_llama_config: true, max_position_embeddings: 8192, mlp_bias: false, model_type: 'llama', num_attention_heads: 9,
  num_hidden_layers: 2, num_key_value_heads: 3, pretraining_tp: 1, rms_norm_eps: 1e-05, rope_interleaved: false,
  rope_scaling: null, rope_theta: 100000, tie_word_embeddings: true, torch_dtype: 'bfloat16',
  transformers_version: '4.40.1', use_cache: true, vocab_size: 23,
};
// TinyLlama/TinyLlama-1.1B-Chat-v1.0's: 32 query heads over 4 K/V heads become 8 over 2.
const TINYLLAMA = {
  architectures: ['LlamaForCausalLM'], attention_bias: false, bos_token_id: 1, eos_token_id: 2, hidden_act: 'silu',
  hidden_size: 16, initializer_range: 0.02, intermediate_size: 24, max_position_embeddings: 2048, model_type: 'llama',
  num_attention_heads: 8, num_hidden_layers: 2, num_key_value_heads: 2, pretraining_tp: 1, rms_norm_eps: 1e-05,
  rope_scaling: null, rope_theta: 10000.0, tie_word_embeddings: false, torch_dtype: 'bfloat16', transformers_version: '4.35.0',
  use_cache: true, vocab_size: 23,
};
const json = (v) => Buffer.from(JSON.stringify(v));

/** A repository's files: config, sharded weights, tokenizer files as the model's repo names them. */
function repo(config, tensors, extra) {
  const tok = tokenizerFiles();
  const files = shardSafetensors(Buffer.from(safetensors(tensors)), 3);
  files.set('config.json', json(config));
  files.set('tokenizer.json', json(tok.tokenizer));
  files.set('tokenizer_config.json', json(tok.config));
  files.set('generation_config.json', json({ bos_token_id: config.bos_token_id, eos_token_id: config.eos_token_id }));
  files.set('special_tokens_map.json', json({ bos_token: '<s>', eos_token: '</s>' }));
  for (const [name, bytes] of Object.entries(extra)) files.set(name, bytes);
  return files;
}

const MODELS = {
  'HuggingFaceTB/SmolLM2-135M': { config: SMOLLM2, tensors: checkpoint(SMOLLM2, 31), extra: { 'vocab.json': json({}), 'merges.txt': Buffer.from('#version: 0.2\n') } },
  'TinyLlama/TinyLlama-1.1B-Chat-v1.0': { config: TINYLLAMA, tensors: checkpoint(TINYLLAMA, 32), extra: { 'tokenizer.model': Buffer.from([0]) } },
};
const TOKENS = [0, 3, 7, 7, 12, 2, 20, 5];

let server, attn, cacheRoot;
beforeAll(async () => {
  cacheRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-llama-hub-'));
  attn = await load('simd');
  server = await startHubServer(Object.fromEntries(Object.entries(MODELS).map(([id, m]) => [id, { files: repo(m.config, m.tensors, m.extra) }])));
});
afterAll(async () => {
  await server?.close();
  fs.rmSync(cacheRoot, { recursive: true, force: true });
});

test.each(Object.keys(MODELS))('hf:%s: sharded, with progress, the reference numbers, then from the cache', async (id) => {
  const { config, tensors } = MODELS[id];
  const cacheDir = fs.mkdtempSync(path.join(cacheRoot, 'c-'));
  const events = [];
  const model = await attn.loadModel(`hf:${id}`, { hubUrl: server.url, cacheDir, onProgress: (e) => events.push(e) });
  try {
    expect(model.type).toBe('llama');
    const files = [...new Set(events.map((e) => e.file))].sort();
    expect(files).toEqual(['config.json', 'generation_config.json', 'model-00001-of-00003.safetensors', 'model-00002-of-00003.safetensors',
      'model-00003-of-00003.safetensors', 'model.safetensors.index.json', 'tokenizer.json', 'tokenizer_config.json']);
    for (const file of files) expect(events.filter((e) => e.file === file && e.done)).toHaveLength(1);
    const run = model.run(TOKENS, { attention: true }), ref = reference(config, tensors, TOKENS);
    expect(maxDiff(run.logits, ref.logits)).toBeLessThan(2e-5);
    expect(maxDiff(run.attention, ref.attention)).toBeLessThan(2e-6);
    expect(model.kvHeadOf(config.num_attention_heads - 1)).toBe(config.num_key_value_heads - 1);
    expect(model.eosTokenId).toBe(config.eos_token_id);
  } finally {
    model.dispose();
  }
  const before = server.requests.length, again = [];
  const cached = await attn.loadModel(`hf:${id}`, { hubUrl: server.url, cacheDir, onProgress: (e) => again.push(e) });
  try {
    expect(server.requests.length).toBe(before);
    expect(again.every((e) => e.cached && e.done)).toBe(true);
    expect(maxDiff(cached.run(TOKENS).logits, reference(config, tensors, TOKENS).logits)).toBeLessThan(2e-5);
  } finally {
    cached.dispose();
  }
});
