// llama_reference.mjs's tokenizer files (Llama 2's and 3's real vocabularies, in Hugging Face's
// layout, and the pipelines put on them) and its references' encodings of the hard texts: written
// once per test run for the files that compare against them (run_once.cjs). Read, never write, it.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { once } = require('../run_once.cjs');
const { HARD } = require('./hard_texts.cjs');

const root = path.resolve(__dirname, '../..');

/** The folder: <name>/tokenizer.json, tokenizer_config.json, generation_config.json per
 * tokenizer, and references.json ({ [name]: [{ text, hf, hfDecoded, ... }] }). */
function llamaReferences() {
  return once('llama-references', (out) => {
    fs.writeFileSync(path.join(out, 'texts.json'), JSON.stringify(HARD));
    const run = spawnSync(process.execPath, [path.join(__dirname, 'llama_reference.mjs'), out, path.join(out, 'texts.json')], { cwd: root, encoding: 'utf8' });
    // The references are devDependencies: llama-tokenizer-js, llama3-tokenizer-js, @huggingface/tokenizers.
    if (run.status !== 0) throw new Error(`llama_reference.mjs failed (are the reference devDependencies installed?):\n${run.stderr}`);
  });
}

module.exports = { llamaReferences };
