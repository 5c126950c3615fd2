// Where the demo's models (and its worker) are. The build (scripts/build_web.mjs) sets DEMO_MODEL_PATH (the decoder,
// default "./models/brown-gpt2/"), DEMO_BERT_PATH (the encoder) and DEMO_BART_PATH (the
// encoder-decoder), each null when the build has none, relative to the script; unbundled, the defaults apply.
const base = import.meta.url;
const gpt2Path = typeof DEMO_MODEL_PATH === 'string' ? DEMO_MODEL_PATH : './models/brown-gpt2/';
const bertPath = typeof DEMO_BERT_PATH === 'undefined' ? './models/brown-bert/' : DEMO_BERT_PATH;
const bartPath = typeof DEMO_BART_PATH === 'undefined' ? './models/g2p-bart/' : DEMO_BART_PATH;
// The Llama-style decoder (DEMO_LLAMA_PATH, null when the build has none).
const llamaPath = typeof DEMO_LLAMA_PATH === 'undefined' ? './models/brown-llama/' : DEMO_LLAMA_PATH;

/** The demo's compute worker (bundled beside the page's scripts). */
export const DEMO_WORKER_URL = new URL('./worker.js', base).href;

/** 'gpt2' | 'bert' | 'bart' | 'llama' -> folder URL (null: not in this build). */
export const MODEL_URLS = {
  gpt2: new URL(gpt2Path, base).href,
  bert: typeof bertPath === 'string' ? new URL(bertPath, base).href : null,
  bart: typeof bartPath === 'string' ? new URL(bartPath, base).href : null,
  llama: typeof llamaPath === 'string' ? new URL(llamaPath, base).href : null,
};

/**
 * Which optional files (quality.json, heads.json, generation_config.json, tokenizer_config.json)
 * each of the build's own models holds, so that none is asked for in vain: the widget's build
 * (scripts/build_widget.mjs) lists them as WIDGET_MODEL_FILES. Elsewhere (unbundled, the demo's
 * site) null: every optional file is asked for.
 */
export const MODEL_FILES = typeof WIDGET_MODEL_FILES === 'object' && WIDGET_MODEL_FILES !== null ? WIDGET_MODEL_FILES : null;
