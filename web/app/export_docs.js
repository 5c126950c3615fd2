// What the JSON export holds: the numbers behind the view on screen (export.js writes the file).
// Model-agnostic: whatever a model's run carries beyond attention and trace goes in as it is.
const GENERATOR = 'attention-wasm demo';

/** Attention views (heads, model, heatmap, steps). data/sel: what the views drew; run or seed: the worker's answer. */
export function attentionDocument({ url, view, preset, modelName, causal, sentence, data: d, sel, run = null, seed = null, seedWeights = null }) {
  const n = d.tokens.length, m = (d.keyTokens ?? d.tokens).length;
  const head = sel.head === 'all' ? 0 : sel.head;
  const base = (sel.layer * d.nHead + head) * n * m;
  const doc = {
    generator: GENERATOR, url, preset, model: modelName ?? undefined, sentence,
    tokens: d.tokens, keyTokens: d.keyTokens ?? d.tokens, layer: sel.layer + 1, head: sel.head === 'all' ? 'all' : head + 1,
    query: sel.query + 1, view, causal,
    selectedHead: { layer: sel.layer + 1, head: head + 1, shape: [n, m], weights: d.attention.slice(base, base + n * m) },
    attention: { shape: [d.nLayer, d.nHead, n, m], layout: 'layer x head x query x key, row-major', data: d.attention },
  };
  if (seed) Object.assign(doc, { weights: seedWeights, trace: seed.trace, output: seed.output });
  else {
    Object.assign(doc, { ids: run.ids, traceLayer: run.layer + 1, trace: run.trace });
    for (const k of ['tokenTypes', 'padding', 'predictions', 'fill', 'batch']) if (run[k]) doc[k] = run[k];
    if (run.cross) doc.crossAttention = run.cross;
  }
  return doc;
}

/** "Through the layers": the attention rollout the view draws (L x n x n: row i of layer l, how much
 * of each token reaches position i after layers 1..l), with the options it was computed with. */
export function rolloutDocument({ url, modelName, causal, sentence, data: d, sel, rollout, run }) {
  const n = d.tokens.length, L = d.nLayer, plane = n * n;
  return {
    generator: GENERATOR, url, model: modelName ?? undefined, view: 'rollout', sentence, tokens: d.tokens, ids: run?.ids, causal,
    layer: sel.layer + 1, query: sel.query + 1,
    rollout: {
      shape: [L, n, n], layout: 'layer x query x key, row-major: after layers 1..l, how much of each token (key) reaches position (query)',
      method: 'attention rollout (Abnar & Zuidema 2020): R_1 = Â_1, R_l = Â_l R_(l-1), Â_l = rows normalised of 0.5 x (layer l\'s attention averaged over its heads) + 0.5 x I',
      // attentionRollout's options, and which attention it rolled out (an encoder-decoder's: the one shown).
      options: { heads: d.nHead }, of: run?.attend ? `the ${run.attend}'s self-attention` : 'self-attention',
      data: rollout,
    },
    selectedLayer: { layer: sel.layer + 1, shape: [n, n], rollout: rollout.slice(sel.layer * plane, (sel.layer + 1) * plane) },
  };
}

/** The generate view: every step's attention as the decoding step computed it (generate()'s
 * tokenAttention), with the settings, the tokens written and the step and head on screen. */
export function generationDocument({ url, modelName, text, record: g }) {
  const { start, steps } = g, L = start.nLayer, H = start.nHead;
  const entry = (x, t) => {
    const n = start.rowBase + t;
    return {
      step: t + 1, token: x.token, text: x.label, queryPosition: n,
      attention: { shape: [L, H, n], layout: 'layer x head x key (positions 1..queryPosition), row-major', data: x.self },
      ...(x.cross ? { crossAttention: { shape: [L, H, start.keyTokens.length], layout: 'layer x head x source token, row-major', data: x.cross } } : {}),
    };
  };
  return {
    generator: GENERATOR, url, model: modelName, view: 'generate', text, ...(start.word ? { word: start.word } : {}),
    settings: { maxNewTokens: g.request.maxNewTokens, temperature: g.request.temperature, topK: g.request.topK, seed: g.request.seed },
    finishReason: g.ended, tokens: [...start.columns, ...steps.map((x) => x.label)], ...(start.keyTokens ? { sourceTokens: start.keyTokens } : {}),
    step: g.step + 1, layer: g.layer + 1, head: g.head === 'all' ? 'all' : g.head + 1,
    steps: steps.map(entry),
  };
}

/** "Compare sentences": the sentences and their similarity matrix. */
export function similarityDocument({ url, modelName, compared }) {
  const k = compared.sentences.length;
  return {
    generator: GENERATOR, url, model: modelName, view: 'compare', pooling: compared.pooling, sentences: compared.sentences,
    similarity: { shape: [k, k], measure: 'cosine of the normalized sentence embeddings', data: compared.matrix },
  };
}
