// Everything the demo knows about the encoder-decoder (worker side): the spelling-to-sound model's
// files, pronouncing each typed word, and which of its three attentions the views draw:
//   cross   - rows: the phonemes it wrote, columns: the letters (queries from the decoder, keys and
//             values from the encoder output), the alignment a learner reads;
//   decoder - the decoder's masked self-attention over what it has written so far;
//   encoder - the encoder's self-attention over the letters.
// The run it returns has the shape every model's has (models/gpt2.js), plus keyTokens when the
// keys are another sequence, so the views stay generic.

import { arpabetToIpa } from '../../../dist/index.js';
import { headLabels, labelNote } from '../head_labels.js';
import { layerWeights } from '../layer_weights.js';

const KINDS = ['cross', 'decoder', 'encoder'];

export async function loadBart({ attn: attnReady, config: rawConfig, fetchFile, name, dtype }) {
  const [weights, vocab, heads] = await Promise.all([
    fetchFile('model.safetensors', 'arrayBuffer'), fetchFile('vocab.json', 'json'),
    // Optional: the cross-attention heads' labels (tools/heads/label_heads.mjs).
    fetchFile('heads.json', 'json').catch(() => null),
  ]);
  const attn = await attnReady; // (the library, loaded while the files downloaded)
  const lm = await attn.loadModel({ config: rawConfig, weights, tokenizer: { vocab } }, { dtype });
  const c = lm.config;
  const D = c.d_model;
  const g2p = c.task === 'grapheme-to-phoneme';
  const info = {
    type: 'bart', name, config: c, modelBytes: weights.byteLength,
    nLayer: c.decoder_layers, nHead: c.decoder_attention_heads, dModel: D, maxTokens: c.max_position_embeddings - 2, causal: true,
    headLabels: null,
    // The labels are the cross-attention's (the view the model opens on); the other views have none.
    openingLabels: headLabels(heads, c.decoder_layers, c.decoder_attention_heads),
    features: { pronounce: g2p, attend: true, crossTrained: true, generateView: true },
    facts: [['Shape', `${c.encoder_layers} encoder + ${c.decoder_layers} decoder layers × ${c.decoder_attention_heads} heads, d_model ${D}`],
      ['Vocabulary', `${Object.keys(vocab).length} symbols: letters in, phonemes (ARPAbet) out`]],
    text: {
      sentenceHelp: 'Type a word, or several: each is spelled out letter by letter to the encoder, and the decoder writes its sounds one phoneme at a time. Click a word in the Pronunciation panel to see its attention.',
      causalNote: 'The decoder’s self-attention is causal; the encoder’s and the cross-attention are not',
      headLabelNote: labelNote(heads),
      xName: 'X = decoder state', wOName: 'encoder_attn.out_proj',
    },
  };

  /** The text's words (each one pronounced) and the index of the chosen one. */
  function wordsOf(text, wordIndex) {
    const words = (g2p ? text.match(/[\p{L}']+/gu) : [text.trim()])?.filter(Boolean) ?? [];
    if (!words.length) throw new Error('Type a word (letters only).');
    return { words, chosen: Math.max(0, Math.min(words.length - 1, wordIndex | 0)) };
  }

  /**
   * The generate view's steps for the chosen word (views/generate_view.js), greedy: the library's
   * generate with attention (each step's decoder self-attention over ▶ and the phonemes before it,
   * and its cross-attention over the letters, read from the KV-cache steps), handed to onToken as
   * the decoder-only models stream theirs. Step t reads ▶ or phoneme t - 1 and writes phoneme t.
   */
  function generate({ text, wordIndex = 0, onToken }) {
    const { words, chosen } = wordsOf(text, wordIndex);
    const r = lm.generate(words[chosen].slice(0, info.maxTokens), { attention: true });
    onToken({ start: { columns: ['▶'], rowBase: 1, nLayer: c.decoder_layers, nHead: c.decoder_attention_heads, keyTokens: r.sourceTexts, word: words[chosen] } });
    r.tokenAttention.forEach(({ self, cross }, t) => onToken({ index: t, label: r.outputTexts[t], text: r.outputTexts[t], self, cross }));
    return { finishReason: r.finished ? 'eos' : 'length', text: r.text };
  }

  /** Words of the text, each pronounced; the chosen one also with its attention and a trace. */
  function run({ text, layer, wordIndex = 0, attend = 'cross', beams = 1, check = false, ablate = null }) {
    const kind = KINDS.includes(attend) ? attend : 'cross';
    const traceLayer = Math.max(0, Math.min(c.decoder_layers - 1, layer | 0));
    const { words, chosen } = wordsOf(text, wordIndex);
    // The model's attention the view draws (the library's part), and the mask it applied there,
    // read right after the chosen word's pass (a later word's, or encoderOutput's, replaces it).
    const part = { encoder: 'self', decoder: 'decoder', cross: 'cross' }[kind];
    let mask = null;
    const results = words.map((w, i) => {
      const result = lm.generate(w.slice(0, info.maxTokens), {
        beams, ...(i === chosen ? { traceLayer, traceKind: kind === 'decoder' ? 'self' : 'cross' } : {}),
      });
      if (i === chosen) mask = lm.appliedMask(kind === 'encoder' ? Math.min(traceLayer, c.encoder_layers - 1) : traceLayer, part);
      return result;
    });
    const r = results[chosen];
    const pronunciations = words.map((word, i) => ({
      word, phonemes: results[i].tokenTexts, ipa: g2p ? arpabetToIpa(results[i].tokenTexts) : null,
      finished: results[i].finished,
    }));
    // The page's before-and-after panel: every word decoded again with the chosen heads off (each
    // entry names its attention: 'self' the encoder's, 'decoder', 'cross').
    const ablated = ablate?.length ? { heads: ablate, pronunciations: words.map((word) => {
      const off = lm.generate(word.slice(0, info.maxTokens), { beams, ablate });
      return { word, phonemes: off.tokenTexts, ipa: g2p ? arpabetToIpa(off.tokenTexts) : null, finished: off.finished };
    }) } : null;
    const letters = r.sourceTexts;
    const decoderInputs = ['▶', ...r.tokenTexts].slice(0, r.outputTexts.length);
    const T = r.outputTexts.length, S = letters.length;
    const base = { ids: r.tokens, tokenTypes: null, padding: null, truncated: words[chosen].length > info.maxTokens, layer: traceLayer,
      pronunciations, ablated, wordIndex: chosen, attend: kind, predictions: null, facts: [], xCheck: null, mask,
      // The step view's layer weights (it shows the decoder layer's cross-attention, or its self-attention).
      weights: check ? layerWeights(lm, traceLayer, c.decoder_attention_heads, kind === 'decoder' ? 'decoder' : 'cross') : null };
    if (kind === 'encoder') {
      return { ...base, tokenTexts: letters, attention: r.encoderAttention, nLayer: c.encoder_layers, nHead: c.encoder_attention_heads,
        causal: false, trace: r.trace, x: r.trace?.x ?? null, cross: stepsCross(r, letters),
        xNote: 'The step view shows the cross-attention of the chosen decoder layer (the encoder’s self-attention is drawn in the other views).' };
    }
    if (kind === 'decoder') {
      return { ...base, tokenTexts: decoderInputs, attention: r.selfAttention, nLayer: c.decoder_layers, nHead: c.decoder_attention_heads,
        causal: true, trace: r.trace, x: r.trace?.x ?? null, cross: null,
        xNote: `X: the decoder’s states entering layer ${traceLayer + 1}: row t is the step that writes phoneme t, reading ▶ (the start token) and the phonemes written before it.` };
    }
    return { ...base, tokenTexts: r.outputTexts, keyTokens: letters, keyLabel: 'keys: letters', headLabels: info.openingLabels,
      attention: r.crossAttention, nLayer: c.decoder_layers,
      nHead: c.decoder_attention_heads, causal: false, trace: r.trace, x: r.trace?.x ?? null, cross: stepsCross(r, letters),
      xNote: `Rows: the phoneme each decoder step wrote (${T} steps); columns: the ${S} letters the encoder read (with <s> and </s>).` };
  }

  /** The step view's cross-attention: Q from the decoder (X), K and V from the encoder output (Y). */
  function stepsCross(r, letters) {
    if (!r.trace) return null;
    const S = letters.length, y = r.trace.k ? encoderOutput(r) : null;
    return {
      keyTokens: letters, y, trace: r.trace, always: true,
      note: `Trained cross-attention: the queries come from the decoder’s state at each step (X), the keys and values from the encoder’s output for the ${S} letters (Y). This is the attention that learned which letters make which sound.`,
    };
  }

  /** The encoder output the cross-attention read its keys and values from (S x d_model). */
  function encoderOutput(r) {
    return lm.run(r.sourceTokens, [c.decoder_start_token_id]).encoderOutput;
  }

  return { info, run, generate };
}
