// Child of gguf_writer.test.cjs (Jest runs CommonJS; @huggingface/gguf and bench/ are ES modules).
// Writes the tiny random Llama as GGUF at each type into DIR, reads every file back with
// @huggingface/gguf and compares what it finds with the values the writer was given; for Q8_0 and
// Q4_0, compares the blocks with the core's own quantizer (OURQ, tests/js/our_quantizer.cpp).
// Prints one JSON object of facts; the test asserts on them.
//   node tests/js/gguf_check.mjs DIR OURQ
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { gguf } from '@huggingface/gguf';

import { decode, fromHalf, GGML_TYPE, toHalf, typeBytes } from '../../tools/gguf/ggml_quant.mjs';
import { writeGguf } from '../../tools/gguf/gguf_writer.mjs';
import { ggufName, llamaGgufTensors, llamaMetadata, textIds, tokenText } from '../../bench/llama/gguf.mjs';
import { llamaShapes, llamaTensor, TINY_LLAMA, weightScale } from '../../bench/llama/weights.mjs';

const [dir, ourq] = process.argv.slice(2);
const C = TINY_LLAMA;
const hd = C.head_dim;

/** HF row of GGUF row r in a Q/K weight: row h*d + 2i + k holds HF row h*d + k*d/2 + i. */
const hfRow = (r) => { const h = Math.floor(r / hd), j = r % hd; return h * hd + (j % 2) * (hd / 2) + Math.floor(j / 2); };

/** The values the writer was given for a tensor, in GGUF row order. */
function expectedValues(hf, shape) {
  const x = llamaTensor(C, hf, shape);
  if (!/[qk]_proj/.test(hf)) return x;
  const cols = shape[1], out = new Float32Array(x.length);
  for (let r = 0; r < shape[0]; r++) out.set(x.subarray(hfRow(r) * cols, (hfRow(r) + 1) * cols), r * cols);
  return out;
}

function ours(op, input, ...rest) {
  const inFile = path.join(dir, `${op}.in`), outFile = path.join(dir, `${op}.out`);
  writeFileSync(inFile, input);
  execFileSync(ourq, [op, inFile, ...rest.map(String), outFile]);
  return new Uint8Array(readFileSync(outFile));
}

const equalBytes = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);
const asBytes = (x) => new Uint8Array(x.buffer, x.byteOffset, x.byteLength);

// toHalf rounds to the nearest half (ties to even): checked against its neighbours' values.
let halfNotNearest = 0;
for (const x of llamaTensor(C, 'model.embed_tokens.weight', [C.vocab_size, C.hidden_size])) {
  const h = toHalf(x), err = Math.abs(x - fromHalf(h));
  for (const n of [h - 1, h + 1]) if ((n & 0x7fff) < 0x7c00 && Math.abs(x - fromHalf(n)) < err) halfNotNearest++;
}

const facts = { halfNotNearest, weightScale: weightScale(C), files: {} };
for (const type of ['F32', 'F16', 'Q8_0', 'Q4_0']) {
  const file = path.join(dir, `tiny-${type}.gguf`);
  const size = writeGguf(file, llamaMetadata(C, type), llamaGgufTensors(C, type));
  const parsed = await gguf(file, { allowLocalFile: true });
  const bytes = new Uint8Array(readFileSync(file));
  const m = parsed.metadata;
  const f = {
    size, fileSize: bytes.length, version: m.version, architecture: m['general.architecture'], fileType: m['general.file_type'],
    heads: m['llama.attention.head_count'], kvHeads: m['llama.attention.head_count_kv'], layers: m['llama.block_count'],
    embedding: m['llama.embedding_length'], ffn: m['llama.feed_forward_length'], ropeDims: m['llama.rope.dimension_count'],
    ropeBase: m['llama.rope.freq_base'], eps: m['llama.attention.layer_norm_rms_epsilon'], tokens: m['tokenizer.ggml.tokens']?.length,
    tokenizer: m['tokenizer.ggml.model'], addBos: m['tokenizer.ggml.add_bos_token'],
    textRoundTrip: JSON.stringify(textIds([3, 77, C.vocab_size - 1].map(tokenText).join(''))) === '[3,77,511]',
    tokenTextMatches: m['tokenizer.ggml.tokens']?.[77] === tokenText(77),
    tensors: parsed.tensorInfos.length, expectedTensors: llamaShapes(C).length,
    misnamed: [], misshaped: [], mistyped: [], misaligned: [], wrongValues: [],
    quant: { blocks: 0, oursFromDequantizedDiffers: 0, oursDequantizeDiffers: 0, oursFromOriginalDiffers: 0, maxAbsErr: 0, maxScale: 0 },
  };
  const byName = new Map(parsed.tensorInfos.map((t) => [t.name, t]));
  for (const [hf, shape] of llamaShapes(C)) {
    const t = byName.get(ggufName(hf));
    if (!t) { f.misnamed.push(hf); continue; }
    if (JSON.stringify(t.shape.map(Number)) !== JSON.stringify([...shape].reverse())) f.misshaped.push(t.name);
    const want = shape.length === 1 ? GGML_TYPE.F32 : GGML_TYPE[type];
    if (t.dtype !== want) f.mistyped.push(t.name);
    const at = Number(parsed.tensorDataOffset + t.offset);
    if (at % 32) f.misaligned.push(t.name);
    const n = shape.reduce((a, b) => a * b, 1);
    const data = bytes.slice(at, at + typeBytes(t.dtype, n));
    const x = expectedValues(hf, shape);
    if (t.dtype === GGML_TYPE.F32 && !equalBytes(data, asBytes(x))) f.wrongValues.push(t.name);
    if (t.dtype === GGML_TYPE.F16 && !decode(t.dtype, data, n).every((v, i) => v === fromHalf(toHalf(x[i])))) f.wrongValues.push(t.name);
    if (t.dtype === GGML_TYPE.Q8_0 || t.dtype === GGML_TYPE.Q4_0) {
      const q8 = t.dtype === GGML_TYPE.Q8_0, blockBytes = q8 ? 34 : 18;
      const deq = decode(t.dtype, data, n);
      // Our dequantizer on the GGUF blocks gives the same floats as the writer's decode.
      if (!equalBytes(ours(q8 ? "dq8" : "dq4", data, n), asBytes(deq))) f.quant.oursDequantizeDiffers++;
      // Our quantizer, given those floats (what the bench hands our loader), makes the same blocks.
      const again = ours(q8 ? 'q8' : 'q4', asBytes(deq));
      const direct = ours(q8 ? 'q8' : 'q4', asBytes(x));
      for (let b = 0; b < n / 32; b++) {
        const block = (u) => u.subarray(b * blockBytes, (b + 1) * blockBytes);
        f.quant.blocks++;
        if (!equalBytes(block(again), block(data))) f.quant.oursFromDequantizedDiffers++;
        if (!equalBytes(block(direct), block(data))) f.quant.oursFromOriginalDiffers++;
        let amax = 0;
        for (let i = b * 32; i < (b + 1) * 32; i++) amax = Math.max(amax, Math.abs(x[i]));
        f.quant.maxScale = Math.max(f.quant.maxScale, amax);
      }
      for (let i = 0; i < n; i++) f.quant.maxAbsErr = Math.max(f.quant.maxAbsErr, Math.abs(deq[i] - x[i]));
    }
  }
  facts.files[type] = f;
}
console.log(JSON.stringify(facts));
