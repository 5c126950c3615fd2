// Child of gguf_load.test.cjs (Jest runs CommonJS; the writers are ES modules): writes a Llama as
// llama.cpp's converter would, from JSON on stdin:
//   { file, arch ('llama' default, 'qwen2'), config (config.json), folder (its tokenizer.json, tokenizer_config.json), shards,
//     tensors: [{ name (GGUF's), dims (ne0 first), type (ggml id), data (base64, already encoded
//     and with Q/K rows permuted by the test) }] }
// The metadata: bench/llama/gguf.mjs's llama.* keys, the tokenizer by tools/gguf/tokenizer_metadata.mjs.
// With shards > 1, gguf-split's layout: name-0000i-of-0000n.gguf, the metadata in the first,
// split.no / split.count / split.tensors.count in each. Prints the files written, as JSON.
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { writeGguf } from '../../tools/gguf/gguf_writer.mjs';
import { gpt2TokenizerMetadata } from '../../tools/gguf/tokenizer_metadata.mjs';
import { llamaMetadata } from '../../bench/llama/gguf.mjs';

const spec = JSON.parse(readFileSync(0, 'utf8'));
const json = (f) => JSON.parse(readFileSync(path.join(spec.folder, f), 'utf8'));
// (bench's llama.* keys without its stand-in vocabulary; under arch's prefix for another architecture)
const arch = spec.arch ?? 'llama';
const llama = Object.fromEntries(Object.entries(llamaMetadata(spec.config, 'F32')).filter(([k]) => !k.startsWith('tokenizer.'))
  .map(([k, v]) => (k === 'general.architecture' ? [k, { type: 'string', value: arch }] : [k.replace(/^llama\./, `${arch}.`), v])));
// (Gemma 3's window; llama.cpp fixes its pattern, local rope base and scale)
if (arch === 'gemma3') llama['gemma3.attention.sliding_window'] = { type: 'u32', value: spec.config.sliding_window };
const metadata = { ...llama, ...gpt2TokenizerMetadata(json('tokenizer.json'), { config: json('tokenizer_config.json'), modelConfig: spec.config }) };
const tensors = spec.tensors.map((t) => ({ name: t.name, dims: t.dims, type: t.type, bytes: () => new Uint8Array(Buffer.from(t.data, 'base64')) }));
const n = spec.shards ?? 1;
const written = [];
if (n === 1) {
  writeGguf(spec.file, metadata, tensors);
  written.push(spec.file);
} else {
  const per = Math.ceil(tensors.length / n);
  for (let i = 0; i < n; i++) {
    const file = spec.file.replace(/\.gguf$/, `-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.gguf`);
    const split = { 'split.no': { type: 'u16', value: i }, 'split.count': { type: 'u16', value: n }, 'split.tensors.count': { type: 'i32', value: tensors.length } };
    writeGguf(file, i === 0 ? { ...metadata, ...split } : { 'general.architecture': metadata['general.architecture'], ...split }, tensors.slice(i * per, (i + 1) * per));
    written.push(file);
  }
}
process.stdout.write(JSON.stringify(written));
