// tools/gguf/gguf_writer.mjs + bench/llama/gguf.mjs (the GGUF files the wllama peer loads): a tiny random Llama
// written at F32, F16, Q8_0 and Q4_0, read back by @huggingface/gguf (an independent parser), and
// its Q8_0 / Q4_0 blocks compared byte for byte with the core's own quantizer (src/tensors/quantize.cpp,
// built here with the host's g++ as tests/js/our_quantizer.cpp). The work runs in a child process
// (tests/js/gguf_check.mjs: ES modules); this file asserts on the facts it prints.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
let dir;
let facts;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gguf-writer-'));
  const ourq = path.join(dir, 'our_quantizer');
  execFileSync('g++', ['-O2', '-std=c++17', `-I${path.join(ROOT, 'src')}`, path.join(__dirname, 'our_quantizer.cpp'),
    path.join(ROOT, 'src', 'tensors', 'quantize.cpp'), path.join(ROOT, 'src', 'tensors', 'weight_types.cpp'), '-o', ourq]);
  facts = JSON.parse(execFileSync(process.execPath, [path.join(__dirname, 'gguf_check.mjs'), dir, ourq], { encoding: 'utf8', maxBuffer: 16 << 20 }));
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test('the half conversion rounds every weight to its nearest f16', () => {
  expect(facts.halfNotNearest).toBe(0);
});

test.each(['F32', 'F16', 'Q8_0', 'Q4_0'])('%s: @huggingface/gguf reads the header, the metadata and every tensor back', (type) => {
  const f = facts.files[type];
  expect(f.fileSize).toBe(f.size);
  expect(f).toMatchObject({
    version: 3, architecture: 'llama', fileType: { F32: 0, F16: 1, Q4_0: 2, Q8_0: 7 }[type], heads: 4, kvHeads: 2, layers: 2,
    embedding: 64, ffn: 128, ropeDims: 16, ropeBase: 10000, tokens: 512, tokenizer: 'llama', addBos: false,
    textRoundTrip: true, tokenTextMatches: true, tensors: 20, expectedTensors: 20,
  });
  expect(f.eps).toBeCloseTo(1e-5, 10);
  expect({ misnamed: f.misnamed, misshaped: f.misshaped, mistyped: f.mistyped, misaligned: f.misaligned, wrongValues: f.wrongValues })
    .toEqual({ misnamed: [], misshaped: [], mistyped: [], misaligned: [], wrongValues: [] });
});

test.each(['Q8_0', 'Q4_0'])('%s: blocks equal the core quantizer\'s on the values they hold, and dequantize alike', (type) => {
  const q = facts.files[type].quant;
  expect(q.blocks).toBe((512 * 64 + 2 * (4 * 16 * 64 + 2 * 2 * 16 * 64 + 64 * 64 + 3 * 128 * 64)) / 32);
  // The bench gives our loader these dequantized values for 'q8' / 'q4': it re-makes every block
  // bit for bit, so both sides hold one network. Our dequantizer reads ggml's blocks as the writer does.
  expect(q.oursFromDequantizedDiffers).toBe(0);
  expect(q.oursDequantizeDiffers).toBe(0);
  // Within one quantization step of the original weights (|w| <= s: Q8_0 step <= s / 127, error
  // <= half of it plus the f16 scale's rounding; Q4_0 step <= s / 8, error <= one step).
  const s = facts.weightScale;
  expect(q.maxScale).toBeLessThanOrEqual(s);
  expect(q.maxAbsErr).toBeLessThanOrEqual(type === 'Q8_0' ? 0.6 * (s / 127) : s / 8);
  // From the original weights the two quantizers differ (ours rounds the f16 scale away from zero,
  // and for Q4 searches the scale): a count, not a failure.
  expect(q.oursFromOriginalDiffers).toBeGreaterThan(0);
});
