// The Llama-style model the demo's "Modern decoder" preset runs in the browser tests:
// web/models/brown-llama/ when it is there (the trained one), else a random-weight Llama of the same
// shape (4 layers, 8 query heads sharing 2 K/V heads, hidden 160, context 128) in Hugging Face's
// layout, written once into build/dev-llama/ with brown-gpt2's byte-level BPE as its tokenizer.json.
// DEMO_LLAMA=<folder> names another.
const fs = require('node:fs');
const path = require('node:path');
const { checkpoint, safetensors } = require('../js/llama_checkpoint.cjs');

const root = path.resolve(__dirname, '../..');
const shipped = path.join(root, 'web/models/brown-llama');
const FILES = ['config.json', 'model.safetensors', 'tokenizer.json'];

const complete = (dir) => FILES.every((f) => fs.existsSync(path.join(dir, f)));

/** brown-gpt2's vocab.json + merges.txt as a tokenizer.json, as tools/train/export_llama.py writes
 * brown-llama's: byte-level BPE, <|endoftext|> special and put first by the template. */
function byteLevelTokenizer(gpt2Dir) {
  const vocab = JSON.parse(fs.readFileSync(path.join(gpt2Dir, 'vocab.json'), 'utf8'));
  const merges = fs.readFileSync(path.join(gpt2Dir, 'merges.txt'), 'utf8').split('\n').filter((l) => l && !l.startsWith('#version'));
  const eot = vocab['<|endoftext|>'];
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: eot, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<|endoftext|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '<|endoftext|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '<|endoftext|>', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<|endoftext|>': { id: '<|endoftext|>', ids: [eot], tokens: ['<|endoftext|>'] } },
    },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, vocab, merges },
  };
}

/** Writes the random-weight stand-in (seeded: the same weights every time) into `dir`. */
function writeRandomLlama(dir) {
  const gpt2Dir = path.join(root, 'web/models/brown-gpt2');
  const tokenizer = byteLevelTokenizer(gpt2Dir);
  const eot = tokenizer.added_tokens[0].id;
  const config = {
    architectures: ['LlamaForCausalLM'], model_type: 'llama', vocab_size: eot + 1, max_position_embeddings: 128,
    hidden_size: 160, intermediate_size: 432, num_hidden_layers: 4, num_attention_heads: 8, num_key_value_heads: 2,
    head_dim: 20, rms_norm_eps: 1e-5, rope_theta: 10000, tie_word_embeddings: true, hidden_act: 'silu',
    bos_token_id: eot, eos_token_id: eot, torch_dtype: 'float32',
  };
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
  fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify({ bos_token: '<|endoftext|>', eos_token: '<|endoftext|>' }));
  fs.writeFileSync(path.join(dir, 'generation_config.json'), JSON.stringify({ bos_token_id: eot, eos_token_id: eot }));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), safetensors(checkpoint(config, 23)));
  fs.writeFileSync(path.join(dir, 'MODEL_CARD.md'), '# dev-llama\n\nRandom weights in brown-llama\'s shape, for the browser tests (tests/browser/llama_demo_model.cjs).\n');
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config, null, 1)); // last: marks the folder complete
}

/** The folder the Llama tests build the demo with (and whether it is the trained model). */
function llamaFolder() {
  if (process.env.DEMO_LLAMA) return { dir: path.resolve(root, process.env.DEMO_LLAMA), trained: true };
  if (complete(shipped)) return { dir: shipped, trained: true };
  const dir = path.join(root, 'build/dev-llama');
  if (!complete(dir)) writeRandomLlama(dir);
  return { dir, trained: false };
}

module.exports = { llamaFolder, byteLevelTokenizer };
