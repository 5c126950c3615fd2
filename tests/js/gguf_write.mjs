// Child of gguf.test.cjs (Jest runs CommonJS; the repository's GGUF writer is an ES module):
// reads a JSON list of { file, metadata, tensors: [{ name, dims, type, data (base64) }] } on
// stdin, writes each file with tools/gguf/gguf_writer.mjs and prints the files' sizes as JSON.
// u64 / i64 metadata values may be decimal strings (the writer takes BigInt(value)).
//   node tests/js/gguf_write.mjs < specs.json
import { readFileSync } from 'node:fs';

import { writeGguf } from '../../tools/gguf/gguf_writer.mjs';

const specs = JSON.parse(readFileSync(0, 'utf8'));
const sizes = specs.map(({ file, metadata, tensors }) => writeGguf(file, metadata, tensors.map((t) => ({
  name: t.name, dims: t.dims, type: t.type, bytes: () => new Uint8Array(Buffer.from(t.data, 'base64')),
}))));
process.stdout.write(JSON.stringify(sizes));
