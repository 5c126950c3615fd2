// A random-weight BERT (masked-LM head included) with a small word-level WordPiece vocabulary, for
// developing the demo's encoder before the trained one (web/models/brown-bert) exists. Never
// shipped: point the build at it with DEMO_BERT=<dir> node scripts/build_web.mjs.
//
// Usage: node scripts/make_dev_bert.mjs <out_dir>
// The layout is Hugging Face's BertForMaskedLM: "bert." names, nn.Linear weights out x in, the
// decoder tied to the word embeddings, vocab.txt with [PAD] [UNK] [CLS] [SEP] [MASK] first,
// tokenizer_config.json. heads.json holds made-up head statistics (to exercise the head labels).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomFill, writeSafetensors } from './dev_weights.mjs';

const out = process.argv[2];
if (!out) throw new Error('usage: node scripts/make_dev_bert.mjs <out_dir>');
mkdirSync(out, { recursive: true });

// Whole words for common text, then single letters and continuation pieces so that any word can be
// spelled (no [UNK] for ordinary English).
const words = ('the animal didn t cross street because it was too tired a of and to in that is he for on with as '
  + 'his they at be this from have or by one had not but what all were when we there can an your which their '
  + 'said if do will each about how up out them then she many some so these would other into has more her two '
  + 'like him see time could no make than first been its who now people my made over did down only way find '
  + 'use may water long little very after words called just where most know write poem cat sat mat dog ran '
  + 'man woman house city jury election grand county market stocks prices fell rose sold shares investors '
  + 'monday friday week year day night morning field ball yard small big old new good well playing across '
  + 'praised conducted thanked work home school children church war state government president money '
  + 'wide slow fast quick brown fox jumped lazy sky blue food eating pasta').split(' ');
const letters = 'abcdefghijklmnopqrstuvwxyz'.split('');
const vocabList = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...'.,;:!?\'"()-'.split(''), ...'0123456789'.split(''),
  ...new Set(words), ...letters, ...letters.map((c) => '##' + c), '##s', '##ed', '##ing', '##ly', '##er'];
const V = vocabList.length;

const config = {
  architectures: ['BertForMaskedLM'], model_type: 'bert', vocab_size: V, hidden_size: 128, num_hidden_layers: 4,
  num_attention_heads: 4, intermediate_size: 512, hidden_act: 'gelu', max_position_embeddings: 128,
  type_vocab_size: 2, layer_norm_eps: 1e-12, pad_token_id: 0, position_embedding_type: 'absolute', torch_dtype: 'float32',
};

const fill = randomFill(424242);
const D = config.hidden_size, I = config.intermediate_size;
const linear = (name, outDim, inDim, std) => ({ [`${name}.weight`]: [[outDim, inDim], fill(outDim * inDim, std)], [`${name}.bias`]: [[outDim], fill(outDim, 0.02)] });
const norm = (name) => ({ [`${name}.weight`]: [[D], fill(D, 0.05, 1)], [`${name}.bias`]: [[D], fill(D, 0.02)] });
const tensors = {
  'bert.embeddings.word_embeddings.weight': [[V, D], fill(V * D, 0.5)],
  'bert.embeddings.position_embeddings.weight': [[config.max_position_embeddings, D], fill(config.max_position_embeddings * D, 0.3)],
  'bert.embeddings.token_type_embeddings.weight': [[2, D], fill(2 * D, 0.3)],
  ...norm('bert.embeddings.LayerNorm'),
};
for (let l = 0; l < config.num_hidden_layers; l++) {
  const p = `bert.encoder.layer.${l}`;
  // Large query/key weights make the random heads peaky, so the views have something to show.
  Object.assign(tensors, linear(`${p}.attention.self.query`, D, D, 0.15), linear(`${p}.attention.self.key`, D, D, 0.15),
    linear(`${p}.attention.self.value`, D, D, 0.08), linear(`${p}.attention.output.dense`, D, D, 0.08), norm(`${p}.attention.output.LayerNorm`),
    linear(`${p}.intermediate.dense`, I, D, 0.05), linear(`${p}.output.dense`, D, I, 0.05), norm(`${p}.output.LayerNorm`));
}
Object.assign(tensors, linear('cls.predictions.transform.dense', D, D, 0.08), norm('cls.predictions.transform.LayerNorm'),
  { 'cls.predictions.bias': [[V], fill(V, 0.02)] });

const bytes = writeSafetensors(join(out, 'model.safetensors'), tensors, { format: 'pt', note: 'random weights for demo development' });
writeFileSync(join(out, 'config.json'), JSON.stringify(config, null, 1));
writeFileSync(join(out, 'vocab.txt'), vocabList.join('\n') + '\n');
writeFileSync(join(out, 'tokenizer_config.json'), JSON.stringify({ do_lower_case: true, tokenizer_class: 'BertTokenizer' }, null, 1));
const share = randomFill(7);
const heads = [];
for (let l = 0; l < config.num_hidden_layers; l++)
  for (let h = 0; h < config.num_attention_heads; h++) {
    const s = Object.fromEntries(['cls', 'sep', 'prev', 'next', 'self'].map((k) => [k, Number(Math.abs(share(1, 0.15)[0]).toFixed(4))]));
    heads.push({ layer: l, head: h, label: (l + h) % 3 === 0 ? 'broad' : ['previous-token head', '[SEP] head', 'next-token head'][(l + h) % 3], ...s, entropy: 1.5 });
  }
writeFileSync(join(out, 'heads.json'), JSON.stringify({ model: 'dev-bert', note: 'made-up statistics: random development model', heads }, null, 1));
writeFileSync(join(out, 'MODEL_CARD.md'), '# Random development BERT\n\nRandom weights. Not a trained model; for developing the demo only.\n');
console.log(`dev BERT: ${out} (vocab ${V}, ${(bytes / 1e6).toFixed(1)} MB)`);
