// Where the demo's models are. The build (scripts/build_web.mjs) sets DEMO_MODEL_PATH (the decoder,
// default "./models/brown-gpt2/") and DEMO_BERT_PATH (the encoder, or null when the build has
// none), relative to the script; unbundled, the defaults apply.
const base = import.meta.url;
const gpt2Path = typeof DEMO_MODEL_PATH === 'string' ? DEMO_MODEL_PATH : './models/brown-gpt2/';
const bertPath = typeof DEMO_BERT_PATH === 'undefined' ? './models/brown-bert/' : DEMO_BERT_PATH;

/** 'gpt2' | 'bert' -> folder URL (null: not in this build). */
export const MODEL_URLS = {
  gpt2: new URL(gpt2Path, base).href,
  bert: typeof bertPath === 'string' ? new URL(bertPath, base).href : null,
};
