// loadModel on GGUF files (issue 33), written here as llama.cpp's converter writes them (Q and K
// rows permuted, llama.* metadata, the tokenizer as tokenizer.ggml.*), against the same network
// from a safetensors folder:
// - brown-llama (the shipped model) as F32 and F16 GGUF: logits equal to the folder's, the text
//   tokenized alike, the same greedy tokens;
// - a random Llama whose rows fill the K-quants' 256-value blocks, at every GGUF type and as a
//   Q4_K_M-like mix: logits within a stated bound of the float32 network on the decoded weights;
// - every source: path, file URL, bytes, Blob, split shards, hf:owner/repo/file.gguf and { quant };
// - named errors for files the Llama family cannot run.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { api, load } = require('./helpers.cjs');
const { readFolder, startHubServer } = require('./hub_server.cjs');
const { safetensors } = require('./llama_checkpoint.cjs');

const ROOT = path.resolve(__dirname, '../..');
const { BROWN, writeLlamaGguf: writeWith } = require('./gguf_convert.cjs');

let mod, dir;
beforeAll(async () => {
  mod = await load('simd');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gguf-load-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const writeLlamaGguf = (...args) => writeWith(mod, ...args);

/** brown-llama's tensors as float32, by name. */
function brownTensors() {
  const st = api.parseSafetensors(fs.readFileSync(path.join(BROWN, 'model.safetensors')));
  return Object.fromEntries([...st.tensors].map(([name, e]) => [name, { shape: e.shape, values: e.toFloat32() }]));
}

const argmax = (row) => row.reduce((best, v, i) => (v > row[best] ? i : best), 0);

describe('brown-llama as GGUF', () => {
  const config = JSON.parse(fs.readFileSync(path.join(BROWN, 'config.json'), 'utf8'));
  let folderModel, file32;
  beforeAll(async () => {
    folderModel = await mod.loadModel(BROWN, { dtype: 'f32' });
    file32 = path.join(dir, 'brown-llama-f32.gguf');
    writeLlamaGguf(file32, config, brownTensors(), () => 'F32');
  });
  afterAll(() => folderModel.dispose());

  test('F32: the same tokens, logits and greedy continuation as the safetensors folder', async () => {
    const model = await mod.loadModel(file32);
    try {
      expect(model.type).toBe('llama');
      expect(model.config).toMatchObject({ hidden_size: 160, num_key_value_heads: 2, head_dim: 20, tie_word_embeddings: true });
      const text = 'The jury said the city was "well handled" in 1962, and 3.5 percent more.';
      expect(model.tokenizer.encode(text)).toEqual(folderModel.tokenizer.encode(text));
      const a = model.run(text), b = folderModel.run(text);
      let err = 0;
      for (let i = 0; i < b.logits.length; i++) err = Math.max(err, Math.abs(a.logits[i] - b.logits[i]));
      expect(err).toBeLessThan(1e-4);  // one network, two loaders (the folder's F16 widened to F32 both ways)
      const greedy = async (m) => (await m.generate(text, { maxNewTokens: 16 })).tokens;
      expect(await greedy(model)).toEqual(await greedy(folderModel));
    } finally {
      model.dispose();
    }
  });

  test('the same model from a file URL, bytes, a Blob and two split shards', async () => {
    const shards = writeLlamaGguf(path.join(dir, 'brown-split.gguf'), config, brownTensors(), () => 'F16', { shards: 2 });
    expect(shards.map((f) => path.basename(f))).toEqual(['brown-split-00001-of-00002.gguf', 'brown-split-00002-of-00002.gguf']);
    const bytes = fs.readFileSync(file32);
    const ids = folderModel.tokenizer.encode('He said that the jury');
    const reference = folderModel.run(ids).logits;
    for (const source of [pathToFileURL(file32), new Uint8Array(bytes), bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length), new Blob([bytes]), shards[1]]) {
      const model = await mod.loadModel(source);
      try {
        const logits = model.run(ids).logits;
        const f16 = source === shards[1];
        for (let i = 0; i < logits.length; i += 97) expect(Math.abs(logits[i] - reference[i])).toBeLessThan(f16 ? 1e-3 : 1e-4);
      } finally {
        model.dispose();
      }
    }
  });

  /** A Blob whose stream() hands out `chunk`-byte pieces of `bytes`, counting what it handed out. */
  function countingBlob(bytes, chunk, pulled) {
    const blob = new Blob([bytes]);
    blob.stream = () => new ReadableStream({
      pull(controller) {
        if (pulled.bytes >= bytes.length) return controller.close();
        controller.enqueue(new Uint8Array(bytes.subarray(pulled.bytes, pulled.bytes + chunk)));
        pulled.bytes += Math.min(chunk, bytes.length - pulled.bytes);
      },
    }, { highWaterMark: 0 });
    return blob;
  }

  test('streamed: tensors go in as they arrive, with progress; a signal stops the read; a cut file is named', async () => {
    const bytes = fs.readFileSync(file32);
    const header = api.parseGgufHeader(bytes, bytes.length).header;
    const pulled = { bytes: 0 }, progress = [];
    const model = await mod.loadModel(countingBlob(bytes, 1 << 16, pulled), { onProgress: (p) => progress.push(p) });
    try {
      expect(pulled.bytes).toBe(bytes.length);
      expect(progress.at(-1)).toMatchObject({ loaded: bytes.length, total: bytes.length, done: true });
      // Progress came chunk by chunk, in order, as the bytes arrived.
      expect(progress.length).toBeGreaterThan(bytes.length / (1 << 16));
      for (let i = 1; i < progress.length; i++) expect(progress[i].loaded).toBeGreaterThanOrEqual(progress[i - 1].loaded);
      const ids = folderModel.tokenizer.encode('The jury');
      expect(model.run(ids).logits).toEqual((await mod.loadModel(file32)).run(ids).logits);
    } finally {
      model.dispose();
    }
    // Aborted once the header and a third of the data are in: the read stops there.
    const controller = new AbortController(), stopAt = header.dataOffset + (bytes.length - header.dataOffset) / 3;
    const stopped = { bytes: 0 };
    await expect(mod.loadModel(countingBlob(bytes, 1 << 16, stopped), {
      signal: controller.signal, onProgress: (p) => { if (p.loaded >= stopAt) controller.abort(); },
    })).rejects.toMatchObject({ code: 'aborted' });
    expect(stopped.bytes).toBeLessThan(stopAt + 2 * (1 << 16));
    // Cut inside the last tensor: the size a Blob (or a Content-Length) announces names it from the
    // header, before any tensor is read.
    const last = [...header.tensors.values()].sort((a, b) => b.offset - a.offset)[0];
    await expect(mod.loadModel(new Blob([bytes.subarray(0, last.offset + 10)])))
      .rejects.toThrow(`GGUF: tensor "${last.name}": data [${last.offset}, ${last.offset + last.byteLength}) (${last.byteLength} bytes of F32, dims [160]) goes past the end of the file (${last.offset + 10} bytes): truncated?`);
    await expect(mod.loadModel(new Blob([bytes.subarray(0, 100)]))).rejects.toThrow('GGUF: tensor count at byte 8 is');
    // Without a size (a chunked answer), the cut is found where the bytes stop.
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      res.end(bytes.subarray(0, last.offset + 10));
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await expect(mod.loadModel(`http://127.0.0.1:${server.address().port}/cut.gguf`))
        .rejects.toThrow(`ends at byte ${last.offset + 10}, inside tensor "${last.name}" (bytes ${last.offset} to ${last.offset + last.byteLength}): truncated?`);
    } finally {
      server.close();
    }
    // The module stays usable.
    expect(folderModel.run('The jury').logits.length).toBeGreaterThan(0);
  });

  test('hf:owner/repo/file.gguf and hf:owner/repo with { quant } through the Hub', async () => {
    const repo = path.join(dir, 'hub', 'someone', 'brown-gguf');
    fs.mkdirSync(repo, { recursive: true });
    fs.copyFileSync(file32, path.join(repo, 'brown-llama-F32.gguf'));
    writeLlamaGguf(path.join(repo, 'brown-llama-Q8_0.gguf'), { ...config }, brownTensors(), () => 'F16');
    const server = await startHubServer({ 'someone/brown-gguf': { files: readFolder(repo) } });
    try {
      const progress = [];
      const named = await mod.loadModel('hf:someone/brown-gguf/brown-llama-F32.gguf', { hubUrl: server.url, cache: false, onProgress: (p) => progress.push(p) });
      expect(progress.at(-1)).toMatchObject({ file: 'brown-llama-F32.gguf', done: true });
      const picked = await mod.loadModel('hf:someone/brown-gguf', { hubUrl: server.url, cache: false, quant: 'F32' });
      const ids = [5, 6, 7];
      expect(picked.run(ids).logits).toEqual(named.run(ids).logits);
      named.dispose(), picked.dispose();
      await expect(mod.loadModel('hf:someone/brown-gguf', { hubUrl: server.url, cache: false, quant: 'Q4_K_M' }))
        .rejects.toThrow('hf:someone/brown-gguf@main has no GGUF file of quantization "Q4_K_M"; its GGUF files: brown-llama-F32.gguf, brown-llama-Q8_0.gguf');
    } finally {
      await server.close();
    }
  });
});

describe('every GGUF weight type on a Llama whose rows are whole 256-value blocks', () => {
  const config = {
    model_type: 'llama', vocab_size: 14336, hidden_size: 256, intermediate_size: 512, num_hidden_layers: 2, num_attention_heads: 4,
    num_key_value_heads: 2, head_dim: 64, max_position_embeddings: 64, rms_norm_eps: 1e-5, rope_theta: 10000, tie_word_embeddings: true,
    hidden_act: 'silu', bos_token_id: 14335, eos_token_id: 14335,
  };
  const tensors = {};
  beforeAll(() => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32 - 0.5);
    const shapes = [['model.embed_tokens.weight', [14336, 256]], ['model.norm.weight', [256]]];
    for (let l = 0; l < 2; l++) {
      const p = `model.layers.${l}.`;
      shapes.push([`${p}input_layernorm.weight`, [256]], [`${p}post_attention_layernorm.weight`, [256]], [`${p}self_attn.q_proj.weight`, [256, 256]],
        [`${p}self_attn.k_proj.weight`, [128, 256]], [`${p}self_attn.v_proj.weight`, [128, 256]], [`${p}self_attn.o_proj.weight`, [256, 256]],
        [`${p}mlp.gate_proj.weight`, [512, 256]], [`${p}mlp.up_proj.weight`, [512, 256]], [`${p}mlp.down_proj.weight`, [256, 512]]);
    }
    for (const [name, shape] of shapes) {
      const values = new Float32Array(shape.reduce((a, b) => a * b, 1));
      for (let i = 0; i < values.length; i++) values[i] = shape.length === 1 ? 1 + 0.2 * rand() : 0.25 * rand();
      tensors[name] = { shape, values };
    }
  });

  /** The network with every matrix decoded from `type` (what a loader of that file must compute), as safetensors F32. */
  async function decodedModel(typeOf) {
    const folder = fs.mkdtempSync(path.join(dir, 'decoded-'));
    const decoded = {};
    for (const [name, { shape, values }] of Object.entries(tensors)) {
      const type = shape.length === 1 ? 'F32' : typeOf(name, shape);
      const cols = shape[shape.length - 1];
      decoded[name] = { shape, data: type === 'F32' ? values : mod.decodeWeights(mod.encodeWeights(values, { type, cols }), { type, cols }) };
    }
    fs.writeFileSync(path.join(folder, 'model.safetensors'), safetensors(decoded));
    fs.writeFileSync(path.join(folder, 'config.json'), JSON.stringify(config));
    for (const f of ['tokenizer.json', 'tokenizer_config.json']) fs.copyFileSync(path.join(BROWN, f), path.join(folder, f));
    return mod.loadModel(folder);
  }

  const Q4_K_M = (name) => (name === 'model.embed_tokens.weight' || /layers\.0\.(self_attn\.v_proj|mlp\.down_proj)/.test(name) ? 'Q6_K' : 'Q4_K');
  const cases = ['F32', 'F16', 'Q8_0', 'Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q2_K', 'Q3_K', 'Q4_K', 'Q5_K', 'Q6_K'].map((t) => [t, () => t]);
  cases.push(['Q4_K_M mix', Q4_K_M]);
  const ids = [14335, 120, 4061, 33, 900, 12000, 7, 7, 450, 3000];
  const errors = [];
  afterAll(() => console.log(`GGUF logits against the decoded network, max error / max |logit|: ${errors.join(', ')}`));

  test.each(cases)('%s: logits of the file equal the decoded network within the activation-quantization bound', async (label, typeOf) => {
    const file = path.join(dir, `random-${label.replace(/\W+/g, '_')}.gguf`);
    writeLlamaGguf(file, config, tensors, typeOf);
    const [model, reference] = [await mod.loadModel(file), await decodedModel(typeOf)];
    try {
      const a = model.run(ids).logits, b = reference.run(ids).logits;
      let err = 0, range = 0;
      for (let i = 0; i < b.length; i++) {
        err = Math.max(err, Math.abs(a[i] - b[i]));
        range = Math.max(range, Math.abs(b[i]));
      }
      // F32 / F16 compute as the reference does; the quantized types' products quantize the
      // activations to 8 bits per block of 32 (the weights are the same decoded values on both
      // sides), which moves these logits by at most 5% of their range (measured: see the closing
      // note); a wrong layout, permutation or type moves them by their own size.
      const bound = label === 'F32' || label === 'F16' ? 1e-4 * range : 0.05 * range;
      expect(err).toBeLessThan(bound);
      errors.push(`${label} ${(err / range).toExponential(2)}`);
    } finally {
      model.dispose(), reference.dispose();
    }
  });
});

// brown-llama's weights under the other architectures' GGUF layouts, against the same checkpoint
// as a folder of that model_type: Qwen2 with q/k/v biases (rows not permuted), Qwen3 with q/k norms
// (not permuted), SmolLM3 (permuted; llama.cpp's every-4th layer without rotation: layer 3 here).
test.each([
  ['qwen2', 'q/k/v biases', { model_type: 'qwen2' }],
  ['qwen3', 'q_norm / k_norm', { model_type: 'qwen3', attention_bias: false }],
  ['smollm3', 'layer 3 not rotated', { model_type: 'smollm3', no_rope_layer_interval: 4 }],
  // llama.cpp's Gemma 3: the window on all but every 6th layer (all 4 here), local rope base 1e4,
  // scores over sqrt(head_dim); norms stored as 1 + weight.
  ['gemma3', 'four norms a layer, window 4', { model_type: 'gemma3_text', hidden_act: undefined, sliding_window: 4, sliding_window_pattern: 6,
    rope_local_base_freq: 10000, attention_bias: false, tie_word_embeddings: true }],
])('%s (%s): equal to the same checkpoint as a folder', async (arch, what, change) => {
  const brown = JSON.parse(fs.readFileSync(path.join(BROWN, 'config.json'), 'utf8'));
  const config = { ...brown, ...change };
  if (arch === 'gemma3') config.query_pre_attn_scalar = brown.head_dim;  // (llama.cpp's 1/sqrt(head_dim))
  const tensors = brownTensors();
  let seed = 3;
  const noise = (n, around) => new Float32Array(n).map(() => around + ((seed = (seed * 69069 + 1) >>> 0) / 2 ** 32 - 0.5) * 0.5);
  for (const [name, { shape }] of Object.entries(tensors)) {
    const m = /^(model\.layers\.\d+\.self_attn)\.([qkv])_proj\.weight$/.exec(name);
    if (m && arch === 'qwen2') tensors[`${m[1]}.${m[2]}_proj.bias`] = { shape: [shape[0]], values: noise(shape[0], 0) };
    if (m && (arch === 'qwen3' || arch === 'gemma3') && m[2] !== 'v') tensors[`${m[1]}.${m[2]}_norm.weight`] = { shape: [config.head_dim], values: noise(config.head_dim, 1) };
    const layer = /^(model\.layers\.\d+)\.input_layernorm\.weight$/.exec(name);
    if (layer && arch === 'gemma3')
      for (const n of ['pre', 'post']) tensors[`${layer[1]}.${n}_feedforward_layernorm.weight`] = { shape, values: noise(shape[0], 0) };
  }
  const file = path.join(dir, `brown-${arch}.gguf`);
  writeLlamaGguf(file, config, tensors, () => 'F32', { arch });
  const folder = fs.mkdtempSync(path.join(dir, `${arch}-`));
  fs.writeFileSync(path.join(folder, 'model.safetensors'), safetensors(Object.fromEntries(Object.entries(tensors).map(([n, t]) => [n, { shape: t.shape, data: t.values }]))));
  fs.writeFileSync(path.join(folder, 'config.json'), JSON.stringify(config));
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) fs.copyFileSync(path.join(BROWN, f), path.join(folder, f));
  const [a, b] = [await mod.loadModel(file), await mod.loadModel(folder)];
  try {
    expect(a.config).toMatchObject({ model_type: config.model_type, attention_bias: arch === 'qwen2', qk_norm: arch === 'qwen3' || arch === 'gemma3',
      rope_layers: arch === 'smollm3' ? [true, true, true, false] : [true, true, true, true] });
    const ids = b.tokenizer.encode('The jury said the city was');
    const x = a.run(ids).logits, y = b.run(ids).logits;
    let err = 0;
    for (let i = 0; i < y.length; i++) err = Math.max(err, Math.abs(x[i] - y[i]));
    expect(err).toBeLessThan(1e-4);
  } finally {
    a.dispose(), b.dispose();
  }
});

/** brown-llama's tensors with each layer's q/k/v rows in one qkv_proj and its gate and up rows in
 * one gate_up_proj, as Phi-3 stores them. */
function fusedBrownTensors(layers) {
  const tensors = brownTensors();
  const fuse = (p, parts, into) => {
    const list = parts.map((n) => tensors[p + n]);
    const values = new Float32Array(list.reduce((n, t) => n + t.values.length, 0));
    let at = 0;
    for (const t of list) values.set(t.values, at), at += t.values.length;
    for (const n of parts) delete tensors[p + n];
    tensors[p + into] = { shape: [list.reduce((n, t) => n + t.shape[0], 0), list[0].shape[1]], values };
  };
  for (let l = 0; l < layers; l++) {
    fuse(`model.layers.${l}.`, ['self_attn.q_proj.weight', 'self_attn.k_proj.weight', 'self_attn.v_proj.weight'], 'self_attn.qkv_proj.weight');
    fuse(`model.layers.${l}.`, ['mlp.gate_proj.weight', 'mlp.up_proj.weight'], 'mlp.gate_up_proj.weight');
  }
  return tensors;
}

// Phi-3 as Phi-4-mini is: fused projections, half of each head rotated (rope.dimension_count 10 of
// 20), longrope with an original context of 4 positions. Its converter's file: attn_qkv and ffn_up
// whole, the factors as two F32 tensors ahead of the weights, attn_factor as a key. A 3-token call
// rotates with the short factors, a 9-token one with the long (Hugging Face's rule), both scaled by
// sqrt(1 + ln 16 / ln 4). Read streamed from its path (the factors read ahead) and from its bytes.
test('phi3 (fused qkv and gate_up, half of each head rotated, longrope short and long): equal to the same checkpoint as a folder', async () => {
  const brown = JSON.parse(fs.readFileSync(path.join(BROWN, 'config.json'), 'utf8'));
  const config = { ...brown, model_type: 'phi3', partial_rotary_factor: 0.5, max_position_embeddings: 64, original_max_position_embeddings: 4,
    rope_scaling: { rope_type: 'longrope', short_factor: [1, 1.5, 2, 3, 5], long_factor: [2, 4, 8, 16, 40] } };
  const tensors = fusedBrownTensors(config.num_hidden_layers);
  const file = path.join(dir, 'brown-phi3.gguf');
  writeLlamaGguf(file, config, tensors, () => 'F32', { arch: 'phi3' });
  const folder = fs.mkdtempSync(path.join(dir, 'phi3-'));
  fs.writeFileSync(path.join(folder, 'model.safetensors'), safetensors(Object.fromEntries(Object.entries(tensors).map(([n, t]) => [n, { shape: t.shape, data: t.values }]))));
  fs.writeFileSync(path.join(folder, 'config.json'), JSON.stringify(config));
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) fs.copyFileSync(path.join(BROWN, f), path.join(folder, f));
  const reference = await mod.loadModel(folder, { dtype: 'f32' });
  const models = [await mod.loadModel(file), await mod.loadModel(new Uint8Array(fs.readFileSync(file)))];
  try {
    const ids = reference.tokenizer.encode('The jury said the city was well handled in 1962');
    expect(ids.length).toBeGreaterThanOrEqual(9);
    for (const model of models) {
      expect(model.config).toMatchObject({ model_type: 'phi3', fused_projections: true, rotary_dim: 10, sliding_window: 0,
        rope_scaling: { type: 'longrope', originalMaxPositionEmbeddings: 4, shortFactor: config.rope_scaling.short_factor, longFactor: config.rope_scaling.long_factor } });
      expect(model.config.rope_scaling.attentionFactor).toBeCloseTo(Math.sqrt(1 + Math.log(16) / Math.log(4)), 6);
      for (const n of [3, 9]) {  // within the original context (short factors), past it (long)
        const x = model.run(ids.slice(0, n)).logits, y = reference.run(ids.slice(0, n)).logits;
        let err = 0, top = 0;
        for (let i = 0; i < y.length; i++) err = Math.max(err, Math.abs(x[i] - y[i])), top = Math.max(top, Math.abs(y[i]));
        expect(err / top).toBeLessThan(1e-5);  // one network at F32 (the attention factor went through an f32 key)
      }
    }
  } finally {
    for (const m of [...models, reference]) m.dispose();
  }
});

describe('GGUF files the Llama family cannot run get named errors', () => {
  test('a file whose weights cannot fit the WebAssembly memory is refused after its header, before its data', async () => {
    // A header announcing 4 GiB of F32 embeddings, then a little data, sent without a size.
    const script = `import('${pathToFileURL(path.join(ROOT, 'tools/gguf/gguf_writer.mjs')).href}').then((w) => process.stdout.write(Buffer.from(w.ggufHeader(
      { 'general.architecture': { type: 'string', value: 'llama' } }, [{ name: 'token_embd.weight', dims: [1024, 1048576], type: 0 }]).header)))`;
    const header = execFileSync(process.execPath, ['-e', script]);
    let sent = 0;
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      res.write(header);
      const more = () => { if (sent < 64 << 20 && !res.destroyed) { sent += 1 << 20; res.write(Buffer.alloc(1 << 20), more); } else res.end(); };
      more();
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await expect(mod.loadModel(`http://127.0.0.1:${server.address().port}/huge.gguf`))
        .rejects.toMatchObject({ code: 'too-large', message: expect.stringMatching(/huge\.gguf holds 4096 MiB of weights, more than the \d+ MiB the WebAssembly memory can still grow by \(its limit is 4 GiB\); nothing was read past its header/) });
      expect(sent).toBeLessThan(64 << 20);  // the read stopped (the connection was let go)
    } finally {
      server.close();
    }
  });

  test('phi3: longrope factors of the wrong length, or one without the other', async () => {
    const brown = JSON.parse(fs.readFileSync(path.join(BROWN, 'config.json'), 'utf8'));
    const config = { ...brown, model_type: 'phi3', partial_rotary_factor: 0.5, max_position_embeddings: 64, original_max_position_embeddings: 4 };
    const embed = { 'model.embed_tokens.weight': { shape: [4, brown.hidden_size], values: new Float32Array(4 * brown.hidden_size) } };
    const cases = [
      [{ short_factor: [1, 1, 1, 1], long_factor: [1, 1, 1, 1] }, 'GGUF: tensor rope_factors_long.weight must be 5 F32 values (half of phi3.rope.dimension_count, 10), got F32 of shape [4]'],
      [{ long_factor: [1, 2, 3, 4, 5] }, 'GGUF: a phi3 file has either both rope_factors_long.weight and rope_factors_short.weight (longrope) or neither; this one has only rope_factors_long.weight'],
      [{ short_factor: [1, 1, 1, 1, 1], long_factor: [1, 2, 0, 4, 5] }, 'GGUF: tensor rope_factors_long.weight must hold positive numbers, got [1, 2, 0, 4, 5]'],
    ];
    for (const [i, [factors, message]] of cases.entries()) {
      const file = path.join(dir, `bad-phi3-${i}.gguf`);
      writeLlamaGguf(file, { ...config, rope_scaling: { rope_type: 'longrope', ...factors } }, embed, () => 'F32', { arch: 'phi3' });
      await expect(mod.loadModel(file)).rejects.toThrow(message);  // streamed
      await expect(mod.loadModel(new Uint8Array(fs.readFileSync(file)))).rejects.toThrow(message);
    }
  });

  test('an architecture no family runs, and bytes that are not GGUF', async () => {
    const file = path.join(dir, 'other-arch.gguf');
    const json = JSON.stringify([{ file, metadata: { 'general.architecture': { type: 'string', value: 'mamba' } }, tensors: [] }]);
    execFileSync(process.execPath, [path.join(__dirname, 'gguf_write.mjs')], { input: json });
    await expect(mod.loadModel(file)).rejects.toThrow('GGUF: general.architecture "mamba" is not supported (this library runs: llama, qwen2, qwen3, smollm3, gemma3, phi3)');
    await expect(mod.loadModel(new Uint8Array([1, 2, 3, 4, 5]))).rejects.toThrow('loadModel: bytes given as the source must be a GGUF file');
    await expect(mod.loadModel(path.join(dir, 'absent.gguf'))).rejects.toThrow('absent.gguf');
  });
});
