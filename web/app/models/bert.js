// Everything the demo knows about BERT (worker side): its files, sentence pairs (token types 0/1),
// fill in the blank, a sentence as one padded row of a batch (the key-padding mask), sentence
// embeddings and their similarities, a layer's attention weights (asked of the model, to check X),
// and the words the page shows for it. The run it returns has the shape every model's
// has (see models/gpt2.js), so the views stay generic.
import { similarityMatrix } from '../../../dist/index.js';
import { checkAgainstQ, layerWeights } from '../layer_weights.js';
import { headLabels, labelNote } from '../head_labels.js';

export async function loadBert({ attn: attnReady, config: rawConfig, fetchFile, name, dtype }) {
  const [weights, vocab, tokenizerConfig, heads] = await Promise.all([
    fetchFile('model.safetensors', 'arrayBuffer'),
    fetchFile('vocab.txt', 'text').catch(() => null),
    fetchFile('tokenizer_config.json', 'json').catch(() => null),
    // Optional: the head analysis written next to the model.
    fetchFile('heads.json', 'json').catch(() => null),
  ]);
  // vocab.txt (+ tokenizer_config.json), else tokenizer.json, as on the Hugging Face Hub.
  const tokenizer = vocab !== null
    ? { vocab, doLowerCase: tokenizerConfig?.do_lower_case, stripAccents: tokenizerConfig?.strip_accents }
    : await fetchFile('tokenizer.json', 'json');
  const attn = await attnReady; // (the library, loaded while the files downloaded)
  const lm = await attn.loadModel({ config: rawConfig, weights, tokenizer }, { dtype });
  const { num_hidden_layers: L, num_attention_heads: H, hidden_size: D, max_position_embeddings: P } = lm.config;
  const tk = lm.tokenizer;

  const info = {
    type: 'bert', name, config: lm.config, modelBytes: weights.byteLength,
    nLayer: L, nHead: H, dModel: D, maxTokens: P, causal: false, headLabels: headLabels(heads, L, H),
    // The one-token words of the label tool's induction probe ("test this head" draws from them).
    probeWords: Array.isArray(heads?.probe_words) ? heads.probe_words : null,
    features: { fill: lm.hasMaskedLmHead, compare: true, pair: true, batch: true },
    facts: [['Shape', `${L} layers × ${H} heads, d_model ${D}, up to ${P} tokens`],
      ['Vocabulary', `${lm.config.vocab_size} WordPiece tokens${tk.doLowerCase ? ' (lower-cased)' : ''}`]],
    text: {
      sentenceHelp: 'Results follow your typing. The model sees [CLS] sentence [SEP], and reads it in both directions at once. Click a word under “Fill in the blank” to mask it, or type [MASK].',
      causalNote: 'BERT is an encoder: every token attends to every other, before and after it (no causal mask)',
      headLabelNote: labelNote(heads),
      xName: 'X = h', wOName: 'attention.output.dense',
    },
  };

  /** [CLS] A [SEP] (B [SEP]), cut to the model's length. */
  function encode(text, pair) {
    const input = pair ? [text, pair] : text;
    const full = tk.encode(input);
    if (full.ids.length <= P) return { ...full, truncated: false, input };
    return { ...tk.encode(input, { maxLength: P }), truncated: true, input };
  }

  function run({ text, pair = '', layer, topK = 8, batchWith = null, check = false, ablate = null }) {
    const traceLayer = Math.max(0, Math.min(L - 1, layer | 0));
    const enc = encode(text, pair);
    const n = enc.ids.length;
    // In a batch, every sentence is padded to the longest one's length.
    const partner = batchWith === null ? null : encode(batchWith, '');
    const padTo = partner ? Math.max(n, partner.ids.length) : undefined;
    const r = lm.run({ tokens: enc.ids, tokenTypes: enc.tokenTypes }, { attention: true, traceLayer, padTo });
    const x = r.trace.x ?? null;
    const N = r.tokens.length;
    const mask = lm.appliedMask(traceLayer); // (the [PAD] keys of a padded row)
    // The layer's weights for the step view to print (with `check`: the step view is or was open).
    const weights = check ? layerWeights(lm, traceLayer, H) : null;
    const xCheck = x && check ? checkAgainstQ(x, weights, r.trace.q, N, D, H) : null;
    const hasMask = enc.ids.includes(tk.maskId);
    const fill = hasMask && info.features.fill && !enc.truncated ? lm.fillMask(enc.input, topK) : null;
    // The page's before-and-after panel: the same blanks with the chosen heads switched off.
    const heads = ablate?.map(({ layer: l, head }) => ({ layer: l, head }));
    return {
      ids: r.tokens, tokenTexts: r.tokenTexts, tokenTypes: r.tokenTypes, padding: r.padding ?? null, truncated: enc.truncated,
      layer: traceLayer, attention: r.attention, mask, trace: r.trace, x, xCheck, weights,
      // For learners: what X is. The numeric self-check (X W^Q + b^Q = the trace's Q) is xCheck, for tests.
      xNote: x
        ? `X has one row per token: what layer ${traceLayer + 1} reads. ${traceLayer === 0 ? 'For the first layer that is each word piece’s embedding plus the embeddings of its position and of its sentence (A or B), normalized' : `It is layer ${traceLayer}’s output (BERT normalizes at the end of each block)`}. Each head turns these rows into its queries, keys and values.`
        : 'X, what this layer reads (one row per token): this build of the library does not trace it.',
      // Fill in the blank: one entry per [MASK] (not for an input cut to the model's length).
      fill, ablated: heads?.length ? { heads: ablate, fill: fill ? lm.fillMask(enc.input, topK, { ablate: heads }) : null } : null,
      batch: partner ? { tokens: partner.ids.map((id) => tk.tokenText(id)), length: N, padded: N - n } : null,
      cross: null, facts: [],
    };
  }

  /** Sentence embeddings (one padded batch) and their cosine similarities. */
  function compare({ sentences, pooling = 'mean' }) {
    const e = lm.embed(sentences, { pooling, normalize: true, maxLength: P });
    return { sentences, pooling, dim: e.dim, matrix: similarityMatrix(e), tokenCounts: sentences.map((s) => Math.min(P, tk.encode(s).ids.length)) };
  }

  return { info, run, compare };
}
