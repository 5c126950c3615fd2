// Everything the demo knows about a Llama-style decoder (worker side): model_type llama, qwen2,
// qwen3, mistral, phi3, smollm3 or gemma3(_text) from config.json + model.safetensors + tokenizer.json (brown-llama, trained here, by
// default). Its run has the shape every model's has (models/gpt2.js), plus what only this family
// has: which K/V head each query head reads (grouped-query attention), and the traced layer's
// queries and keys before the rotary embedding (the rotation step of the step view), with what the
// page needs to rotate them itself (rope_theta, head_dim, rope_scaling: views/rotary.js).
import { headLabels, labelNote } from '../head_labels.js';
import { nextTokens, continueIds, ablatedNext, samplingList } from './decoder_text.js';
import { layerWeights } from '../layer_weights.js';

const NAMES = { llama: 'Llama', qwen2: 'Qwen2', qwen3: 'Qwen3', mistral: 'Mistral', phi3: 'Phi-3', smollm3: 'SmolLM3', gemma3_text: 'Gemma 3', gemma3: 'Gemma 3' };

/** The block's parts, as the facts panel lists them: what this model_type adds to a Llama's. */
function blockParts(c) {
  const gemma = c.sandwich_norms, rotating = c.rope_layers.filter(Boolean).length, L = c.num_hidden_layers;
  const windowed = c.sliding_window ? c.window_layers.filter(Boolean).length : 0;
  return [
    gemma ? 'RMSNorm with gains 1 + w, before and after the attention and the MLP' : 'RMSNorm',
    c.qk_norm ? 'an RMSNorm on each head’s q and k (q_norm, k_norm)' : null,
    rotating === L ? `rotary positions (θ = ${c.rope_theta}${c.rotary_dim < c.head_dim ? `, on ${c.rotary_dim} of each head’s ${c.head_dim} values` : ''})`
      : `rotary positions in ${rotating} of ${L} layers (the others: none)`,
    c.rope_local_theta ? `θ = ${c.rope_local_theta} on the windowed layers` : null,
    windowed ? `a sliding window of ${c.sliding_window} on ${windowed === L ? 'every layer' : `${windowed} of ${L} layers`}` : null,
    c.fused_projections ? 'q, k and v in one qkv_proj, gate and up in one gate_up_proj' : null,
    gemma ? 'GeGLU MLP (tanh GELU)' : 'SwiGLU MLP',
    c.attention_bias ? 'q/k/v biases' : 'no biases',
  ].filter(Boolean).join(', ');
}

export async function loadLlama({ attn: attnReady, config: rawConfig, fetchFile, name, dtype }) {
  const optional = (file) => fetchFile(file, 'json').catch(() => null);
  const [weights, tokenizer, tokenizerConfig, generation, heads] = await Promise.all([
    fetchFile('model.safetensors', 'arrayBuffer'), fetchFile('tokenizer.json', 'json'),
    optional('tokenizer_config.json'), optional('generation_config.json'),
    // Optional: the head labels measured on held-out text (tools/heads/label_heads.mjs).
    optional('heads.json'),
  ]);
  const attn = await attnReady; // (the library, loaded while the files downloaded)
  const files = { tokenizer, ...(tokenizerConfig ? { config: tokenizerConfig } : {}), ...(generation ? { generation } : {}) };
  const lm = await attn.loadModel({ config: rawConfig, weights, tokenizer: files }, { dtype });
  return llamaRunner(lm, { name, modelBytes: weights.byteLength, heads });
}

/**
 * The demo's runner for a loaded LlamaModel (from a folder above, or a GGUF file: worker.js).
 * modelBytes: the weights' file size; heads: heads.json or null; gguf (a GGUF file): { file, quant,
 * layerTypes: per layer { q, k, v, o } (the storage type of each projection, from the file's
 * header; null when it could not be read), types: the count of tensors per type }.
 */
/** What the rotation step needs to turn layer l's queries and keys as the core does. */
function layerRotary(c, l) {
  const local = c.rope_local_theta && c.sliding_window && c.window_layers[l];
  return {
    theta: local ? c.rope_local_theta : c.rope_theta, headDim: c.head_dim, rotaryDim: c.rotary_dim,
    scaling: local ? null : c.rope_scaling, local: Boolean(local),
    ropeScale: c.rope_scaling?.type === 'longrope' ? c.rope_scaling.attentionFactor : 1,
    scoreScale: c.attention_scale || 1 / Math.sqrt(c.head_dim),
  };
}

export function llamaRunner(lm, { name, modelBytes, heads = null, gguf = null }) {
  const c = lm.config;
  const { num_hidden_layers: L, num_attention_heads: H, num_key_value_heads: KV, head_dim: d, hidden_size: D } = c;
  const P = c.max_position_embeddings;
  // The tokens the tokenizer's template puts around any text (brown-llama's: <|endoftext|> first,
  // as it was trained; a Hub model's own choice), as the library's run(text) and the label tool do.
  const template = lm.tokenizer.encode('');
  const kvHeadOf = Array.from({ length: H }, (_, h) => lm.kvHeadOf(h));
  const family = NAMES[c.model_type] ?? c.model_type;

  const info = {
    type: 'llama', name, config: c, modelBytes, gguf,
    nLayer: L, nHead: H, nKvHead: KV, kvHeadOf, dModel: D, headDim: d, maxTokens: P, causal: true,
    headLabels: headLabels(heads, L, H),
    probeWords: Array.isArray(heads?.probe_words) ? heads.probe_words : null,
    // What the rotation step needs to rotate a query or key to any position, as the core does.
    rotary: layerRotary(c, 0),
    features: { next: true, generate: true, generateView: true, kvGroups: true, rotary: true },
    facts: [
      ['Shape', `${L} layers × ${H} query heads sharing ${KV} key/value head${KV > 1 ? 's' : ''} (${H / KV} per group), d_model ${D}, context ${P}`],
      ['Block', `${family}: ${blockParts(c)}`],
      ['Vocabulary', `${c.vocab_size} tokens (${gguf ? 'the GGUF file’s tokenizer.ggml.*' : 'tokenizer.json'})`],
      ...(gguf ? [['File', `${gguf.file} (GGUF${gguf.quant ? `, ${gguf.quant}` : ''})`]] : []),
      ...(gguf?.types ? [['Held as stored', Object.entries(gguf.types).map(([t, n]) => `${t} × ${n}`).join(', ') + ' tensors']] : []),
    ],
    text: {
      sentenceHelp: `Results follow your typing.${template.length ? ` The model sees ${template.map((id) => lm.tokenizer.tokenText(id)).join(' ')} first (its tokenizer's template), as in training.` : ''}`,
      causalNote: `A ${family}-style decoder: its attention is always causal`,
      headLabelNote: labelNote(heads),
      xName: 'X = RMSNorm₁(h)', wOName: 'o_proj',
    },
  };

  function encode(text) {
    const ids = lm.tokenizer.encode(text);
    return { ids: ids.slice(0, P), truncated: ids.length > P };
  }

  /** quick (the page's first view): no sentence loss, the last position's logits only. */
  function run({ text, layer, topK = 8, ablate = null, sampling = null, quick = false, check = false }) {
    const traceLayer = Math.max(0, Math.min(L - 1, layer | 0));
    const { ids, truncated } = encode(text);
    if (!ids.length) throw new Error('Type some text.');
    const r = lm.run(ids, { attention: true, traceLayer, logitsToKeep: quick ? 1 : ids.length });
    const mask = lm.appliedMask(traceLayer); // (causal, and Mistral's sliding window)
    const loss = ids.length > 1 && !quick ? lm.loss(r) : null;
    return {
      ids, tokenTexts: r.tokenTexts, tokenTypes: null, padding: null, truncated, layer: traceLayer,
      // Mistral: each query sees its latest `window` keys; Gemma 3: on its windowed layers only.
      window: c.sliding_window && c.window_layers[traceLayer] ? c.sliding_window : null,
      // SmolLM3: this layer may not rotate (rotary null); Gemma 3: its own base on windowed layers.
      rotary: c.rope_layers[traceLayer] ? layerRotary(c, traceLayer) : null,
      qkNorm: c.qk_norm,
      attention: r.attention, mask, trace: r.trace, x: r.trace.x, xCheck: null,
      // The layer's weights for the step view to print (with `check`: the step view is or was open):
      // W^K and W^V hold each query head's K/V head's columns, as the step view's K and V do.
      weights: check ? layerWeights(lm, traceLayer, H) : null,
      xNote: `X has one row per token: what layer ${traceLayer + 1} reads. ${traceLayer === 0
        ? 'For the first layer that is each token’s embedding alone: a Llama has no position embedding (positions enter later, by rotating the queries and keys)'
        : 'It is everything the layers before have added up, token by token'}, normalized (RMSNorm: each row divided by its root mean square) so that every row has a similar scale.`,
      ...nextTokens(lm, r, topK), ablated: ablatedNext(lm, ids, ablate, topK),
      sampling: sampling ? samplingList(lm, r, sampling, topK) : null, loss, cross: null, partial: quick && ids.length > 1,
      facts: loss ? [['This sentence', `${loss.loss.toFixed(2)} nats/token (perplexity ${loss.perplexity.toFixed(1)})`]] : [],
    };
  }

  /** Continues the text through the KV cache (which holds only the K/V heads), token by token. */
  function generate({ text, ...options }) {
    return continueIds(lm, encode(text).ids, P, options);
  }

  return { info, run, generate };
}
