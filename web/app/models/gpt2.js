// Everything the demo knows about GPT-2 (worker side): its files, the "<|endoftext|>" it reads
// first, next-token predictions and loss, a layer's attention weights (asked of the model: for
// cross-attention with a real layer and for checking X), and the words the page shows for it.
// The run it returns has the shape every model's has (see models/bert.js), so the views stay generic.
import { BpeTokenizer } from '../../../dist/index.js';
import { checkAgainstQ, layerWeights } from '../layer_weights.js';
import { headLabels, labelNote } from '../head_labels.js';
import { nextTokens, continueIds, ablatedNext, samplingList } from './decoder_text.js';

export async function loadGpt2({ attn: attnReady, config: rawConfig, fetchFile, name, dtype }) {
  // The tokenizer is built as soon as its files are in, while the weights (far larger) still download.
  const tokenizer = Promise.all([fetchFile('vocab.json', 'json'), fetchFile('merges.txt', 'text')])
    .then(([vocab, merges]) => new BpeTokenizer({ vocab, merges }));
  const [weights, bpe, heads] = await Promise.all([
    fetchFile('model.safetensors', 'arrayBuffer'), tokenizer,
    // Optional: the head analysis written next to the model (tools/train/analyze_heads.py).
    fetchFile('heads.json', 'json').catch(() => null),
  ]);
  performance.mark('gpt2 files fetched');
  const attn = await attnReady; // (the library, loaded while the files downloaded)
  const lm = await attn.loadModel({ config: rawConfig, weights, tokenizer: bpe }, { dtype });
  performance.mark('gpt2 weights loaded');
  const { n_layer: L, n_head: H, n_embd: C, n_positions: P } = lm.config;
  // The demo feeds "<|endoftext|> + sentence", as the model was trained and analysed.
  const eot = Number.isInteger(rawConfig.bos_token_id) ? rawConfig.bos_token_id : bpe.tokenId('<|endoftext|>');
  const layers = new Map(); // layer -> a MultiHeadAttention with its weights, for cross-attention

  const info = {
    type: 'gpt2', name, config: lm.config, modelBytes: weights.byteLength,
    nLayer: L, nHead: H, dModel: C, maxTokens: P, causal: true, headLabels: headLabels(heads, L, H),
    // The one-token words of the label tool's induction probe ("test this head" draws from them).
    probeWords: Array.isArray(heads?.probe_words) ? heads.probe_words : null,
    features: { next: true, cross: true, generate: true, generateView: true },
    facts: [['Shape', `${L} layers × ${H} heads, d_model ${C}, context ${P}`], ['Vocabulary', `${lm.config.vocab_size} tokens (byte-level BPE)`]],
    text: {
      sentenceHelp: 'Results follow your typing. The model sees <|endoftext|> first, as in training.',
      causalNote: 'GPT-2 is a decoder: its attention is always causal',
      headLabelNote: labelNote(heads),
      xName: 'X = LN₁(h)', wOName: 'c_proj',
    },
  };

  function encode(text) {
    const ids = Number.isInteger(eot) ? [eot] : [];
    ids.push(...lm.tokenizer.encode(text));
    return { ids: ids.slice(0, P), truncated: ids.length > P };
  }
  const texts = (ids, r) => ids.map((id, i) => (id === eot ? '<|endoftext|>' : r ? r.tokenTexts[i] : lm.tokenizer.tokenText(id)));

  function layerMha(layer) {
    // A MultiHeadAttention holding this layer's weights, for cross-attention.
    if (!layers.has(layer)) {
      const mha = attn.createMultiHeadAttention({ dModel: C, numHeads: H, bias: true });
      mha.setWeights(layerWeights(lm, layer, H));
      layers.set(layer, mha);
    }
    return layers.get(layer);
  }

  /**
   * quick (the page's first view): everything but the sentence's loss (partial: true), from the
   * last position's logits alone. The language-model head over every position is most of a cold
   * first run, and the next-token list needs one row of it.
   */
  function run({ text, layer, topK = 8, ablate = null, sampling = null, crossText = null, check = false, quick = false }) {
    const traceLayer = Math.max(0, Math.min(L - 1, layer | 0));
    const { ids, truncated } = encode(text);
    const r = lm.run(ids, { attention: true, traceLayer, logitsToKeep: quick ? 1 : ids.length });
    // The mask the layer applied (read before the cross-attention run below replaces it).
    const mask = lm.appliedMask(traceLayer);
    // X = LN_1(h), the layer's input; older library builds did not trace it (the views then say so).
    const x = r.trace.x ?? null;
    // The layer's weights for the step view to print (with `check`: the step view is or was open).
    const weights = check ? layerWeights(lm, traceLayer, H) : null;
    const xCheck = x && check ? checkAgainstQ(x, weights, r.trace.q, ids.length, C, H) : null;
    const loss = ids.length > 1 && !quick ? lm.loss(r) : null;
    const result = {
      ids, tokenTexts: texts(ids, r), tokenTypes: null, padding: null, truncated, layer: traceLayer,
      attention: r.attention, mask, trace: r.trace, x, xCheck, weights,
      // For learners: what X is. The numeric self-check (X W^Q + b^Q = the trace's Q) is xCheck, for tests.
      xNote: x
        ? `X has one row per token: what layer ${traceLayer + 1} reads. ${traceLayer === 0 ? 'For the first layer that is each token’s embedding plus the embedding of its position' : 'It is everything the layers before have added up, token by token'}, normalized (LayerNorm) so that every row has a similar scale. Each head turns these rows into its queries, keys and values.`
        : 'X, what this layer reads (one row per token): this build of the library does not trace it.',
      ...nextTokens(lm, r, topK), ablated: ablatedNext(lm, ids, ablate, topK),
      sampling: sampling ? samplingList(lm, r, sampling, topK) : null, loss, cross: null, partial: quick && ids.length > 1,
      facts: loss ? [['This sentence', `${loss.loss.toFixed(2)} nats/token (perplexity ${loss.perplexity.toFixed(1)})`]] : [],
    };
    if (crossText !== null && x) {
      // Cross-attention with this layer's own weights: queries from the sentence, keys and values
      // from the second sentence's layer input. GPT-2 was never trained to do this; it shows the
      // mechanics (Q from one sequence, K and V from another) on real weights.
      const other = encode(crossText);
      const y = lm.run(other.ids, { traceLayer, logitsToKeep: 0 }).trace.x;
      if (y) {
        const out = layerMha(traceLayer).forward(x, { key: y, value: y, trace: true, returnAttention: true });
        result.cross = {
          keyTokens: texts(other.ids), keyIds: other.ids, y, trace: out.trace, attention: out.attention,
          note: `Layer ${traceLayer + 1}'s own weights: queries from X of the sentence, keys and values from X of the second sentence (each through layers 1–${traceLayer + 1} on its own). GPT-2 has no cross-attention and never learned any, so the pattern means little; the arithmetic is exactly an encoder-decoder's.`,
        };
      }
    }
    return result;
  }

  /** Continues the text through the KV cache, token by token (onToken streams them). */
  function generate({ text, ...options }) {
    const { ids } = encode(text);
    return continueIds(lm, ids, P, { ...options, columns: texts(ids) });
  }

  return { info, run, generate };
}
