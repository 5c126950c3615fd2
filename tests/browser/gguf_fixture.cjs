// GGUF files of the shipped brown-llama for the demo's GGUF tests, written as llama.cpp's converter
// writes them (tests/js/gguf_model_write.mjs: llama.* metadata, the tokenizer as tokenizer.ggml.*,
// Q and K rows permuted for llama.cpp's rotation), with the matrices encoded by the library's own
// encoders (attn.encodeWeights), as tests/js/gguf_load.test.cjs writes them.
//
// brown-llama's rows are 160 and 432 values long: no K-quant block (256 values) fits, and 432 is
// no whole number of 32-value blocks either. llama.cpp's quantizer then falls back per tensor (a
// K-quant to Q5_0 where a row is whole 32-value blocks, to F16 where it is not); `typeOf` here does
// the same, so a file named Q4_K_M holds what llama.cpp would write for this model.
const fs = require('node:fs');
const path = require('node:path');
const { BROWN, writeLlamaGguf } = require('../js/gguf_convert.cjs');

/** A file type's matrices for brown-llama, with llama.cpp's per-tensor fallbacks (see above). */
function typesOf(quant) {
  const block = { F16: 1, F32: 1, Q8_0: 32, Q4_0: 32, Q5_0: 32 };
  const want = { F16: 'F16', F32: 'F32', Q8_0: 'Q8_0', Q4_0: 'Q4_0', Q4_K_M: 'Q5_0', Q6_K: 'Q8_0' }[quant];
  if (!want) throw new Error(`no brown-llama fixture for ${quant}`);
  return (name, shape) => (shape[shape.length - 1] % block[want] === 0 ? want : 'F16');
}

/**
 * Writes brown-llama as a GGUF of `quant` ('F16', 'F32', 'Q8_0', 'Q4_0', 'Q4_K_M' as llama.cpp
 * would write it for these row lengths) to `file`. attn: a loaded library (its encoders).
 */
function writeBrownGguf(attn, api, file, quant) {
  const config = JSON.parse(fs.readFileSync(path.join(BROWN, 'config.json'), 'utf8'));
  const st = api.parseSafetensors(fs.readFileSync(path.join(BROWN, 'model.safetensors')));
  const tensors = Object.fromEntries([...st.tensors].map(([name, e]) => [name, { shape: e.shape, values: e.toFloat32() }]));
  writeLlamaGguf(attn, file, config, tensors, typesOf(quant));
  return file;
}

module.exports = { writeBrownGguf, BROWN };
