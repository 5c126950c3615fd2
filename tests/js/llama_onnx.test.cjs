// The generate-llama bench's references and peers on the tiny random Llama (bench/llama/weights.mjs):
// PyTorch's greedy tokens (bench/llama/reference.py, a Llama forward written from the architecture
// in torch) against this library at f32 and onnxruntime-web running bench/llama/onnx.mjs's float32
// graph, and its int8 graph (transformers.js's q8: int8 weights per tensor, activations quantized at
// run time) against PyTorch with that quantization simulated. PyTorch's side is a fixture
// (tests/fixtures/llama_onnx/, made by tests/fixtures/generate_llama_onnx_fixture.mjs: no torch
// here). The work runs in a child process (llama_onnx_check.mjs: ES modules; about 2 s).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

let facts;

beforeAll(() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'llama-onnx-'));
  try {
    execFileSync(process.execPath, [path.join(__dirname, 'llama_onnx_check.mjs'), path.join(dir, 'facts.json')], { stdio: ['ignore', 'ignore', 'inherit'] });
    facts = JSON.parse(fs.readFileSync(path.join(dir, 'facts.json'), 'utf8'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 120000);

test('the PyTorch fixture was made from this tiny model (else: node tests/fixtures/generate_llama_onnx_fixture.mjs)', () => {
  expect(facts.fixture).toEqual({ sameConfig: true, sameWeights: true });
});

test('PyTorch: float32 gives float64\'s 64 greedy tokens, and they vary (a model repeating one token would agree on anything)', () => {
  expect(facts.pytorch.f32Equal).toBe(64);
  expect(facts.pytorch.distinct).toBeGreaterThan(30);
});

test('this library at f32: PyTorch\'s 64 greedy tokens, prompt logits within 1e-4', () => {
  expect(facts.ours.equal).toBe(64);
  expect(facts.ours.logits).toBeLessThan(1e-4);
});

test('onnxruntime-web, float32 graph: PyTorch\'s 64 greedy tokens, prompt logits within 1e-4', () => {
  expect(facts.ortFloat.equal).toBe(64);
  expect(facts.ortFloat.logits).toBeLessThan(1e-4);
});

test('onnxruntime-web, int8 graph: the int8 computation (logits within 1e-5 of its simulation, 0.1 or more from float)', () => {
  // Measured 4.8e-7 and 0.36: the quantization moves the logits 5 orders of magnitude more than
  // the graph's distance from the simulation, so a float product or another rounding shows.
  expect(facts.ortInt8.logits).toBeLessThan(1e-5);
  expect(facts.ortInt8.logitsVsFloat).toBeGreaterThan(0.1);
  expect(facts.pytorch.int8VsFloat).toBeGreaterThan(0.1);
});

test('onnxruntime-web, int8 graph: the simulation\'s greedy tokens, or where they part its runner-up at a near tie', () => {
  // Float32 against float64 between the products moves an activation to the next 8-bit code now
  // and then; on these random weights that can flip a near tie (measured: step 38, margin 0.0015).
  const { equal, parts } = facts.ortInt8;
  expect(equal).toBeGreaterThanOrEqual(16);
  if (equal < 64) {
    expect(parts.got).toBe(parts.runnerUp);
    expect(parts.margin).toBeLessThan(0.01);
  }
});
