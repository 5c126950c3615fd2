// The Web Worker that does all the computing: one WebAssembly instance, the models it has loaded,
// and the seed preset's 2-dimensional layer. The page (and every <attention-view> on it) talks to
// it through compute_client.js, so typing never blocks the main thread.
//
// Requests are { id, channel, type, payload }. Within one channel only the newest pending request
// runs: while a sentence is being computed, the keystrokes that arrive meanwhile collapse into one.
import { loadAttention, parseSafetensors, simdSupported } from '../../dist/index.js';
import { CheckpointTensors, layerAttentionWeights, checkAgainstQ } from './layer_weights.js';

let attnPromise = null;
const models = new Map(); // folder URL -> Promise<entry>

function library() {
  // Both builds sit next to this script; the SIMD one wherever the engine supports it.
  attnPromise ??= loadAttention({ wasmUrl: new URL(simdSupported() ? './attention_simd.wasm' : './attention_scalar.wasm', import.meta.url) });
  return attnPromise;
}

async function fetchOk(url, as) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`could not fetch ${url}: HTTP ${response.status}`);
  return response[as]();
}

/** Loads a model folder once; keeps the parsed checkpoint for the layer-input and weight views. */
function model(folder) {
  const url = new URL(folder.endsWith('/') ? folder : folder + '/', self.location.href).href;
  if (!models.has(url)) {
    const entry = (async () => {
      const [attn, config, weights, vocab, merges, heads] = await Promise.all([
        library(),
        fetchOk(new URL('config.json', url), 'json'),
        fetchOk(new URL('model.safetensors', url), 'arrayBuffer'),
        fetchOk(new URL('vocab.json', url), 'json'),
        fetchOk(new URL('merges.txt', url), 'text'),
        // Optional: the head analysis written next to the model (tools/train/analyze_heads.py).
        fetchOk(new URL('heads.json', url), 'json').catch(() => null),
      ]);
      const lm = await attn.loadModel({ config, weights, tokenizer: { vocab, merges } });
      // The demo feeds "<|endoftext|> + sentence", as the model was trained and analysed.
      const eot = Number.isInteger(config.bos_token_id) ? config.bos_token_id : vocab['<|endoftext|>'];
      return { attn, lm, config: { ...lm.config, ...config }, eot, heads, tensors: new CheckpointTensors(parseSafetensors(weights)), layers: new Map(), bytes: weights.byteLength };
    })();
    models.set(url, entry);
    entry.catch(() => models.delete(url)); // let a later request retry
  }
  return models.get(url);
}

// heads.json measures, per head, the average share of attention on the previous token, the first
// token, the token itself and punctuation. The label names the pattern; its largest share says
// more when the label is only "broad".
const SHARES = { prev: 'previous', first: 'first', self: 'self', punct: 'punctuation' };

function headLabels(entry) {
  const { n_layer: L, n_head: H } = entry.lm.config;
  if (!Array.isArray(entry.heads?.heads)) return null;
  const labels = Array.from({ length: L }, () => new Array(H).fill(null));
  for (const h of entry.heads.heads) {
    if (!(h.layer < L && h.head < H && typeof h.label === 'string')) continue;
    const [key, share] = Object.keys(SHARES).map((k) => [k, Number(h[k])]).filter(([, v]) => Number.isFinite(v)).sort((a, b) => b[1] - a[1])[0] ?? [];
    labels[h.layer][h.head] = h.label === 'broad' && key ? `broad · ${SHARES[key]} ${Math.round(share * 100)}%` : h.label;
  }
  return labels;
}

function encode(entry, text) {
  const ids = Number.isInteger(entry.eot) ? [entry.eot] : [];
  ids.push(...entry.lm.tokenizer.encode(text));
  const max = entry.lm.config.n_positions;
  return { ids: ids.slice(0, max), truncated: ids.length > max };
}

function layerLayer(entry, layer) {
  // A MultiHeadAttention holding this GPT-2 layer's weights, for cross-attention.
  if (!entry.layers.has(layer)) {
    const { n_embd: C, n_head: H } = entry.lm.config;
    const weights = layerAttentionWeights(entry.tensors, entry.config, layer);
    const mha = entry.attn.createMultiHeadAttention({ dModel: C, numHeads: H, bias: true });
    mha.setWeights(weights);
    entry.layers.set(layer, { mha, weights });
  }
  return entry.layers.get(layer);
}

const handlers = {
  async model({ modelUrl }) {
    const entry = await model(modelUrl);
    return {
      config: entry.lm.config, eot: entry.eot, headLabels: headLabels(entry), variant: entry.attn.variant,
      modelBytes: entry.bytes, name: decodeURIComponent(new URL(modelUrl, self.location.href).pathname.split('/').filter(Boolean).pop() ?? 'model'),
    };
  },

  async run({ modelUrl, text, layer, topK = 8, crossText = null }) {
    const entry = await model(modelUrl);
    const t0 = performance.now();
    const { n_layer: L, n_embd: C, n_head: H } = entry.lm.config;
    const traceLayer = Math.max(0, Math.min(L - 1, layer | 0));
    const { ids, truncated } = encode(entry, text);
    const r = entry.lm.run(ids, { attention: true, traceLayer });
    const predictions = entry.lm.predictNext(r, topK);
    const tokenTexts = r.tokenTexts.slice();
    if (Number.isInteger(entry.eot) && ids[0] === entry.eot) tokenTexts[0] = '<|endoftext|>';
    // X = LN_1(h), the layer's input; older library builds did not trace it (the views then say so).
    const x = r.trace.x ?? null;
    const result = {
      ids, tokenTexts, truncated, layer: traceLayer, attention: r.attention, trace: r.trace, x,
      xCheck: x ? checkAgainstQ(x, layerAttentionWeights(entry.tensors, entry.config, traceLayer), r.trace.q, ids.length, C, H) : null,
      predictions, loss: ids.length > 1 ? entry.lm.loss(r) : null, cross: null,
    };
    if (crossText !== null && x) {
      // Cross-attention with this layer's own weights: queries from the sentence, keys and values
      // from the second sentence's layer input. GPT-2 was never trained to do this; it shows the
      // mechanics (Q from one sequence, K and V from another) on real weights.
      const other = encode(entry, crossText);
      const y = entry.lm.run(other.ids, { traceLayer }).trace.x;
      if (y) {
        const { mha } = layerLayer(entry, traceLayer);
        const out = mha.forward(x, { key: y, value: y, trace: true, returnAttention: true });
        const keyTexts = other.ids.map((id) => (id === entry.eot ? '<|endoftext|>' : entry.lm.tokenizer.tokenText(id)));
        result.cross = { keyTokens: keyTexts, keyIds: other.ids, y, trace: out.trace, attention: out.attention };
      }
    }
    result.ms = performance.now() - t0;
    return result;
  },

  async seed({ x, y = null, wQ, wK, wV, wO, causal }) {
    const attn = await library();
    // One head, d_model = d_k = 2, no biases: exactly the tutorial's setting. W^O defaults to the
    // identity there (a single head needs no mixing), but it is editable like the others.
    const mha = attn.createMultiHeadAttention({ dModel: 2, numHeads: 1, bias: false });
    try {
      mha.setWeights({ wQ, wK, wV, wO });
      const options = { causal: !!causal, trace: true, returnAttention: true };
      if (y) Object.assign(options, { key: Float32Array.from(y), value: Float32Array.from(y) });
      const out = mha.forward(Float32Array.from(x), options);
      return { trace: out.trace, attention: out.attention, output: out.output };
    } finally {
      mha.dispose();
    }
  },

  async metrics() {
    // Resource timings of what this worker fetched (the page cannot see them).
    return performance.getEntriesByType('resource').map((e) => ({
      name: e.name, transferSize: e.transferSize, encodedBodySize: e.encodedBodySize, decodedBodySize: e.decodedBodySize, duration: e.duration,
    }));
  },
};

// Latest-wins queue per channel.
const pending = [];
let draining = false;

self.onmessage = (event) => {
  pending.push(event.data);
  if (!draining) {
    draining = true;
    // A macrotask, so that messages already queued behind this one arrive before we choose.
    setTimeout(drain, 0);
  }
};

async function drain() {
  while (pending.length) {
    const request = pending.shift();
    if (request.channel && pending.some((r) => r.channel === request.channel)) {
      self.postMessage({ id: request.id, stale: true });
      continue;
    }
    try {
      const handler = handlers[request.type];
      if (!handler) throw new Error(`unknown request ${request.type}`);
      const result = await handler(request.payload ?? {});
      self.postMessage({ id: request.id, ok: true, result }, transferables(result));
    } catch (e) {
      self.postMessage({ id: request.id, ok: false, error: String(e?.message ?? e) });
    }
    // Let newer messages in before picking the next request.
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  draining = false;
}

function transferables(value, out = [], seen = new Set()) {
  if (ArrayBuffer.isView(value)) {
    if (!seen.has(value.buffer)) { seen.add(value.buffer); out.push(value.buffer); }
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) transferables(v, out, seen);
  }
  return out;
}
