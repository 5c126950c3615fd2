// model.save() (issue 36): a loaded Llama-family model written as a GGUF file at the precision it
// holds, read back by loadModel.
// - Tiny random checkpoints of each GGUF architecture (llama, mistral, qwen2, qwen3, smollm3,
//   phi3, gemma3), saved at every dtype they are held in (F32, F16, Q8_0, Q4_0): the file reloads to
//   bit-identical logits (the same values in the same kernels: no tolerance), the same tokenizer,
//   chat template and generation defaults, the same weightTypes; a BF16 checkpoint as BF16.
// - A GGUF file at Q4_K_M (Q4_K and Q6_K blocks) saved again: every tensor's bytes equal the
//   source file's (K-quants are kept, not re-encoded), and so do its tokenizer.* key-values.
// - Each file is parsed by an independent reader (Python's struct, below): magic, version, counts,
//   key types, tensor dims, types and offsets (aligned, in order, inside the file, each tensor's
//   size from its type's block size as ggml-common.h gives it).
// - saveStream() gives the same bytes; Phi-3's decimal longrope factors go in as float32 (logits
//   within 1e-5); a disposed model, a config GGUF cannot carry and GPT-2 are refused by name.
const { execFileSync } = require('node:child_process');
const { createCipheriv } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { load } = require('./helpers.cjs');
const { checkpoint, modelFiles, safetensors, tokenizerFiles } = require('./llama_checkpoint.cjs');
const { writeLlamaGguf } = require('./gguf_convert.cjs');

const ROOT = path.resolve(__dirname, '../..');
let mod, dir;
beforeAll(async () => {
  mod = await load('simd');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'model-save-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

// An independent GGUF reader: the header as llama.cpp's gguf.cpp lays it out, no package code.
const PARSE = String.raw`
import hashlib, json, struct, sys
def take(fmt):
    global at
    v = struct.unpack_from('<' + fmt, b, at); at += struct.calcsize('<' + fmt); return v[0]
def string():
    global at
    n = take('Q'); s = b[at:at + n].decode('utf-8'); at += n; return s
SCALAR = {0: 'B', 1: 'b', 2: 'H', 3: 'h', 4: 'I', 5: 'i', 6: 'f', 7: '?', 10: 'Q', 11: 'q', 12: 'd'}
def value(t):
    if t == 8: return string()
    if t == 9:
        of = take('I'); n = take('Q'); return [value(of) for _ in range(n)]
    return take(SCALAR[t])
def parse(path):
  global b, at
  b = open(path, 'rb').read()
  assert b[:4] == b'GGUF'; at = 4
  version = take('I'); n_tensors = take('Q'); n_kv = take('Q')
  kv, kv_types = {}, {}
  for _ in range(n_kv):
      k = string(); t = take('I'); kv_types[k] = t; kv[k] = value(t)
  align = kv.get('general.alignment', 32)
  BLOCK = {0: (1, 4), 1: (1, 2), 2: (32, 18), 8: (32, 34), 12: (256, 144), 14: (256, 210), 30: (1, 2)}
  tensors = []
  for _ in range(n_tensors):
      name = string(); nd = take('I'); dims = [take('Q') for _ in range(nd)]; t = take('I'); off = take('Q')
      n = 1
      for d in dims: n *= d
      size = n // BLOCK[t][0] * BLOCK[t][1]
      tensors.append({'name': name, 'dims': dims, 'type': t, 'offset': off, 'size': size})
  data = (at + align - 1) // align * align
  end = 0
  for t in tensors:
      assert t['offset'] % align == 0 and t['offset'] >= end, t
      end = t['offset'] + t['size']
  assert data + end <= len(b) <= data + (end + align - 1) // align * align, (data, end, len(b))
  digest = lambda v: 'sha256:' + hashlib.sha256(json.dumps(v).encode()).hexdigest()  # (lists and long texts)
  small = {k: digest(v) if isinstance(v, list) or (isinstance(v, str) and len(v) > 200) else v for k, v in kv.items()}
  return {'version': version, 'alignment': align, 'data': data, 'size': len(b), 'kv': small, 'kvTypes': kv_types, 'tensors': tensors}
print(json.dumps([parse(path) for path in sys.argv[1:]]))
`;
/** Each file's header as the independent reader sees it (one Python run for them all). */
function parseIndependently(...files) {
  const paths = files.map((bytes, i) => {
    const file = path.join(dir, `check-${i}.gguf`);
    fs.writeFileSync(file, bytes);
    return file;
  });
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', PARSE, ...paths], { maxBuffer: 1 << 26 }).toString());
}

const TEMPLATE = "{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}</s>{% endfor %}{% if add_generation_prompt %}<s>assistant:{% endif %}";
const BASE = {
  vocab_size: 23, max_position_embeddings: 64, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 2, num_attention_heads: 4,
  rms_norm_eps: 1e-5, bos_token_id: 0, eos_token_id: 1, hidden_act: 'silu',
};
// One of each architecture GGUF carries, in shapes whose rows are whole 32-value blocks (so q8 and
// q4 quantize them) and with what each adds: permuted Q/K rows (llama, smollm3), a window and
// linear rope scaling (mistral), biases (qwen2), q/k norms and head_dim != hidden / heads (qwen3),
// layers without rotation (smollm3), fused projections, partial rotary and longrope (phi3: its
// factors as two F32 tensors), 1 + w and sandwich norms and llama.cpp's layer pattern (gemma3:
// every 6th layer global, local rope base 1e4, scores by head_dim^-1/2).
const CASES = {
  llama: { ...BASE, model_type: 'llama', num_key_value_heads: 2, tie_word_embeddings: true, eos_token_id: [1, 0] },  // (a list, as Llama 3's)
  mistral: { ...BASE, model_type: 'mistral', num_key_value_heads: 4, sliding_window: 4, rope_scaling: { type: 'linear', factor: 2 }, tie_word_embeddings: false },
  qwen2: { ...BASE, model_type: 'qwen2', num_key_value_heads: 2, rope_theta: 1e6, tie_word_embeddings: false },
  qwen3: { ...BASE, model_type: 'qwen3', num_key_value_heads: 2, head_dim: 16, attention_bias: false, rope_theta: 1e6, tie_word_embeddings: true },
  smollm3: { ...BASE, model_type: 'smollm3', num_hidden_layers: 4, num_key_value_heads: 2, no_rope_layer_interval: 4, tie_word_embeddings: true },
  // Phi-4-mini's layout in small: fused qkv_proj and gate_up_proj, a quarter of each head
  // unrotated, longrope (factors and attention factor float32 already, as llama.cpp stores them).
  phi3: { ...BASE, model_type: 'phi3', num_key_value_heads: 2, head_dim: 8, partial_rotary_factor: 0.75, sliding_window: 5, tie_word_embeddings: false,
    original_max_position_embeddings: 32, rope_scaling: { type: 'longrope', short_factor: [1, 1.5, 3], long_factor: [2, 5, 11], attention_factor: 1.25 } },
  gemma3_text: { ...BASE, model_type: 'gemma3_text', hidden_act: undefined, hidden_activation: 'gelu_pytorch_tanh', num_key_value_heads: 2, head_dim: 8,
    sliding_window: 4, sliding_window_pattern: 6, rope_theta: 1e6, rope_local_base_freq: 1e4, query_pre_attn_scalar: 8, final_logit_softcapping: null, tie_word_embeddings: true },
};
const TOKENS = [0, 5, 9, 2, 2, 17, 11, 4, 20, 3, 8];
const DTYPES = ['auto', 'f16', 'q8', 'q4'];
const GGML = { F32: 0, F16: 1, Q4_0: 2, Q8_0: 8 };

/** A model's files with a chat template and generation defaults (what must survive the file). */
function files(config, seed) {
  const f = modelFiles(config, checkpoint(config, seed));
  f.tokenizer = { ...tokenizerFiles(), generation: { do_sample: true, temperature: 0.7, top_k: 5, eos_token_id: [1] } };
  f.tokenizer.config.chat_template = TEMPLATE;
  return f;
}

const names = (types) => Object.keys(types).sort();

describe.each(Object.keys(CASES))('%s', (type) => {
  // One checkpoint, loaded at each dtype and saved; the files parsed in one Python run.
  const saved = {};
  beforeAll(async () => {
    const f = files(CASES[type], type.length);
    for (const dtype of DTYPES) {
      const model = await mod.loadModel(f, { dtype });
      saved[dtype] = { model, bytes: model.save() };
    }
    const parsed = parseIndependently(...DTYPES.map((d) => saved[d].bytes));
    DTYPES.forEach((d, i) => { saved[d].file = parsed[i]; });
  });
  afterAll(() => DTYPES.forEach((d) => saved[d]?.model.dispose()));

  test.each(DTYPES)('dtype %s: saved, parsed independently, reloaded to the same logits, tokenizer and template', async (dtype) => {
    const { model, bytes, file } = saved[dtype];
    expect(file.version).toBe(3);
    expect(file.size).toBe(bytes.length);
    const arch = type === 'mistral' ? 'llama' : type === 'gemma3_text' ? 'gemma3' : type;
    expect(file.kv['general.architecture']).toBe(arch);
    expect(file.kv[`${arch}.block_count`]).toBe(CASES[type].num_hidden_layers);
    expect(file.kv[`${arch}.embedding_length`]).toBe(32);
    // Each tensor's ggml type is the type the model holds it in, its dims the checkpoint's shape reversed.
    const held = Object.entries(model.weightTypes), factors = type === 'phi3' ? 2 : 0;  // (rope_factors_long / _short)
    expect(file.tensors.length).toBe(held.length + factors);
    // (Phi-3's rope factors first, as llama.cpp writes them: a streamed read of a large file reads them ahead)
    if (factors) expect(file.tensors.slice(0, 2).map((t) => t.name)).toEqual(['rope_factors_long.weight', 'rope_factors_short.weight']);
    const embed = file.tensors.find((t) => t.name === 'token_embd.weight');
    expect(embed.dims).toEqual([32, 23]);
    expect(embed.type).toBe(GGML[model.weightTypes['model.embed_tokens.weight']]);
    expect(new Set(file.tensors.map((t) => t.type))).toEqual(new Set(held.map(([, t]) => GGML[t])));

    const back = await mod.loadModel(bytes);
    try {
      expect(back.config).toEqual({ ...model.config, model_type: back.config.model_type, rms_norm_eps: Math.fround(model.config.rms_norm_eps) });
      expect(back.dtype).toBe(model.dtype);
      expect(names(back.weightTypes)).toEqual(names(model.weightTypes));
      for (const [name, t] of held) expect([name, back.weightTypes[name]]).toEqual([name, t]);
      // The same network: the same logits, bit for bit (same values, same kernels).
      expect(back.run(TOKENS).logits).toEqual(model.run(TOKENS).logits);
      expect(back.tokenizer.encode('<s>abc</s>ba')).toEqual(model.tokenizer.encode('<s>abc</s>ba'));
      const chat = [{ role: 'user', content: 'hi' }];
      expect(back.applyChatTemplate(chat, { addGenerationPrompt: true })).toBe(model.applyChatTemplate(chat, { addGenerationPrompt: true }));
      expect(back.generationDefaults).toEqual(model.generationDefaults);
      expect(back.bosTokenId).toBe(model.bosTokenId);
      // What chat() and generate() stop at and the template reads (config.json's eos list too).
      const { endIds, bosToken, eosToken } = model.chatDefaults;  // (private in TypeScript)
      expect(back.chatDefaults).toMatchObject({ endIds, bosToken, eosToken });
      // And it saves again to the same file.
      expect(Buffer.compare(back.save(), bytes)).toBe(0);
      // From a path the file is streamed, tensor by tensor (Phi-3's rope factors read ahead: first).
      const saved = path.join(dir, `${type}-${dtype}.gguf`);
      fs.writeFileSync(saved, bytes);
      const streamed = await mod.loadModel(saved);
      expect(streamed.run(TOKENS).logits).toEqual(model.run(TOKENS).logits);
      streamed.dispose();
    } finally {
      back.dispose();
    }
  });
});

test('a BF16 checkpoint saves BF16 tensors (ggml type 30), reloaded to the same logits', async () => {
  const config = CASES.qwen2, f = files(config, 9);
  f.weights = safetensors(checkpoint(config, 9, true), 'BF16');
  const model = await mod.loadModel(f);
  try {
    expect(model.dtype).toBe('BF16');
    const bytes = model.save(), [file] = parseIndependently(bytes);
    expect(new Set(file.tensors.map((t) => t.type))).toEqual(new Set([30, 0]));  // (BF16 matrices, F32 norms and biases)
    const back = await mod.loadModel(bytes);
    expect(back.run(TOKENS).logits).toEqual(model.run(TOKENS).logits);
    back.dispose();
  } finally {
    model.dispose();
  }
});

test('saveStream() gives save()\'s bytes, a tensor a part', async () => {
  const model = await mod.loadModel(files(CASES.llama, 3), { dtype: 'q4' });
  try {
    const parts = [];
    for await (const part of model.saveStream()) parts.push(part);
    const expected = model.save();
    expect(parts.length).toBeGreaterThan(20);  // the header, then each tensor and its padding
    expect(Buffer.compare(Buffer.concat(parts), expected)).toBe(0);
    // A Response reads it as any body (the Cache API's put takes one).
    expect(Buffer.compare(new Uint8Array(await new Response(model.saveStream()).arrayBuffer()), expected)).toBe(0);
  } finally {
    model.dispose();
  }
});

describe('a GGUF file saved again', () => {
  const config = {
    model_type: 'llama', vocab_size: 512, hidden_size: 256, intermediate_size: 256, num_hidden_layers: 1, num_attention_heads: 4,
    num_key_value_heads: 2, head_dim: 64, max_position_embeddings: 64, rms_norm_eps: 1e-5, rope_theta: 10000, tie_word_embeddings: true,
    hidden_act: 'silu', bos_token_id: 256, eos_token_id: 256,
  };
  /** A byte-level BPE tokenizer.json (GPT-2's 256 byte characters, a few merges, <|endoftext|> 256)
   * and its tokenizer_config.json with a chat template, in a folder: small, so the file is too. */
  function tokenizerFolder() {
    const folder = fs.mkdtempSync(path.join(dir, 'bytes-'));
    const printable = [...Array(256).keys()].filter((b) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174);
    const chars = new Array(256);
    let extra = 0;
    for (let b = 0; b < 256; b++) chars[b] = String.fromCharCode(printable.includes(b) ? b : 256 + extra++);
    const vocab = Object.fromEntries(chars.map((c, i) => [c, i]));
    const merges = ['Ġ t', 'h e', 'Ġt he', 'Ġ a', 'r e'];
    merges.forEach((m, i) => { vocab[m.replace(' ', '')] = 257 + i; });
    const special = { id: 256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
    fs.writeFileSync(path.join(folder, 'tokenizer.json'), JSON.stringify({
      version: '1.0', added_tokens: [special], normalizer: null,
      pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }, post_processor: null,
      decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
      model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, vocab: { ...vocab, '<|endoftext|>': 256 }, merges },
    }));
    fs.writeFileSync(path.join(folder, 'tokenizer_config.json'), JSON.stringify({ bos_token: '<|endoftext|>', eos_token: '<|endoftext|>', chat_template: TEMPLATE }));
    return folder;
  }
  /** A Q4_K_M-like file: Q6_K embeddings and V, Q4_K elsewhere, the tokenizer as tokenizer.ggml.*. */
  function writeSource(file) {
    // Values in (-0.25, 0.25): Q8_0 blocks of seeded random bytes (AES-CTR's stream, the same each
    // run) with an f16 scale of 2^-9, decoded by the core: no JavaScript loop over the values.
    const stream = createCipheriv('aes-128-ctr', Buffer.alloc(16, 7), Buffer.alloc(16));
    const random = (shape) => {
      const n = shape.reduce((a, b) => a * b, 1), blocks = new Uint8Array(stream.update(Buffer.alloc((n / 32) * 34)));
      for (let at = 0; at < blocks.length; at += 34) blocks[at] = 0, blocks[at + 1] = 0x18;  // f16 0x1800 = 2^-9
      return mod.decodeWeights(blocks, { type: 'Q8_0', cols: shape[shape.length - 1] });
    };
    const tensors = {};
    const add = (name, shape) => { tensors[name] = { shape, values: shape.length === 1 ? Float32Array.from({ length: shape[0] }, (_, i) => 1 + (i % 7) / 20) : random(shape) }; };
    add('model.embed_tokens.weight', [512, 256]);
    const p = 'model.layers.0.';
    add(`${p}input_layernorm.weight`, [256]);
    add(`${p}self_attn.q_proj.weight`, [256, 256]);
    add(`${p}self_attn.k_proj.weight`, [128, 256]);
    add(`${p}self_attn.v_proj.weight`, [128, 256]);
    add(`${p}self_attn.o_proj.weight`, [256, 256]);
    add(`${p}post_attention_layernorm.weight`, [256]);
    for (const m of ['gate', 'up', 'down']) add(`${p}mlp.${m}_proj.weight`, [256, 256]);
    add('model.norm.weight', [256]);
    writeLlamaGguf(mod, file, config, tensors, (name) => (/embed_tokens|v_proj/.test(name) ? 'Q6_K' : 'Q4_K'), { folder: tokenizerFolder() });
  }

  test('Q4_K_M: every tensor and tokenizer key as in the source file; the same logits, tokens and template', async () => {
    const source = path.join(dir, 'source-q4_k_m.gguf');
    writeSource(source);
    const sourceBytes = fs.readFileSync(source);
    const model = await mod.loadModel(source);
    try {
      expect(new Set(Object.values(model.weightTypes))).toEqual(new Set(['Q4_K', 'Q6_K', 'F32']));
      const bytes = model.save();
      const [a, b] = parseIndependently(sourceBytes, bytes);
      expect(b.tensors.map((t) => [t.name, t.dims, t.type])).toEqual(expect.arrayContaining(a.tensors.map((t) => [t.name, t.dims, t.type])));
      expect(b.tensors.length).toBe(a.tensors.length);
      const at = new Map(a.tensors.map((t) => [t.name, t]));
      for (const t of b.tensors) {
        const s = at.get(t.name);
        // (the Q and K rows too: put back into llama.cpp's order as the source had them)
        expect([t.name, Buffer.compare(bytes.subarray(b.data + t.offset, b.data + t.offset + t.size),
          sourceBytes.subarray(a.data + s.offset, a.data + s.offset + s.size))]).toEqual([t.name, 0]);
      }
      for (const [key, type] of Object.entries(a.kvTypes))
        if (key.startsWith('tokenizer.')) expect([key, b.kvTypes[key], b.kv[key]]).toEqual([key, type, a.kv[key]]);
      const back = await mod.loadModel(bytes);
      try {
        const ids = [256, 120, 401, 33, 90, 500, 7];
        expect(back.run(ids).logits).toEqual(model.run(ids).logits);
        const text = 'The jury said the city was "well handled".';
        expect(back.tokenizer.encode(text)).toEqual(model.tokenizer.encode(text));
        expect((await back.generate(text, { maxNewTokens: 6 })).tokens).toEqual((await model.generate(text, { maxNewTokens: 6 })).tokens);
        const chat = [{ role: 'user', content: 'hi' }];
        expect(back.applyChatTemplate(chat)).toBe(model.applyChatTemplate(chat));
        expect(model.applyChatTemplate(chat)).toBe('<s>user: hi</s>');
      } finally {
        back.dispose();
      }
    } finally {
      model.dispose();
    }
  });
});

test('Phi-3\'s decimal longrope factors are stored as float32, as llama.cpp stores them: logits within 1e-5', async () => {
  const config = { ...CASES.phi3, rope_scaling: { type: 'longrope', short_factor: [1.1, 1.37, 2.9], long_factor: [2.3, 5.1, 10.7] } };  // (attention factor from the context ratio)
  const model = await mod.loadModel(files(config, 4));
  try {
    const back = await mod.loadModel(model.save());
    try {
      const r = model.config.rope_scaling;
      expect(back.config.rope_scaling).toEqual({ ...r, longFactor: r.longFactor.map(Math.fround), shortFactor: r.shortFactor.map(Math.fround), attentionFactor: Math.fround(r.attentionFactor) });
      // Frequencies move by at most 6e-8 of themselves; the logits (of order 1) by less than 1e-5.
      const a = back.run(TOKENS).logits, b = model.run(TOKENS).logits;
      expect(Math.max(...a.map((v, i) => Math.abs(v - b[i])))).toBeLessThan(1e-5);
    } finally {
      back.dispose();
    }
  } finally {
    model.dispose();
  }
});

describe('refused by name', () => {
  test('a disposed model', async () => {
    const model = await mod.loadModel(files(CASES.llama, 1));
    model.dispose();
    expect(() => model.save()).toThrow(expect.objectContaining({ name: 'AttentionError', message: expect.stringContaining('disposed') }));
    expect(() => model.saveStream()).toThrow(expect.objectContaining({ name: 'AttentionError', message: expect.stringContaining('disposed') }));
    // Disposed while its stream is read: the next part is an error naming it.
    const other = await mod.loadModel(files(CASES.llama, 1));
    const reader = other.saveStream().getReader();
    expect((await reader.read()).done).toBe(false);  // (the header)
    other.dispose();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AttentionError', message: expect.stringContaining('disposed') });
  });

  test('a config GGUF cannot carry: Gemma 3\'s softcap, llama3 rope scaling', async () => {
    const gemma = await mod.loadModel(files({ ...CASES.gemma3_text, final_logit_softcapping: 30 }, 2));
    try {
      expect(() => gemma.save()).toThrow(expect.objectContaining({ code: 'unsupported',
        message: 'save: this gemma3_text model\'s config has no GGUF form that loads back the same: final_logit_softcapping 30 (read back: 0)' }));
    } finally {
      gemma.dispose();
    }
    const llama3 = await mod.loadModel(files({ ...CASES.llama, rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 16 } }, 2));
    try {
      expect(() => llama3.save()).toThrow(expect.objectContaining({ code: 'unsupported', message: expect.stringContaining('rope_scaling {"type":"llama3"') }));
      expect(llama3.run([0, 5]).logits.length).toBe(2 * 23);  // (the model stays usable)
    } finally {
      llama3.dispose();
    }
  });

  test('GPT-2', async () => {
    const gpt2 = await mod.loadModel(path.join(ROOT, 'web/models/brown-gpt2'));
    try {
      expect(() => gpt2.save()).toThrow(expect.objectContaining({ code: 'unsupported', message: expect.stringMatching(/^save: GPT-2 models cannot be saved yet/) }));
    } finally {
      gpt2.dispose();
    }
  });
});
