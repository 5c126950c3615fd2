// A user's app, bundled by esbuild: imports the package by name and points it at the .wasm
// files the app copied to its own static folder (bundlers do not follow new URL(..., import.meta.url)).
import { loadAttention } from 'attention-wasm';

const attn = await loadAttention({ wasmUrl: new URL('./attention_simd.wasm', document.baseURI) });
const mha = attn.createMultiHeadAttention({ dModel: 4, numHeads: 2 });
const w = new Float32Array(16).fill(0.1);
const b = new Float32Array(4);
mha.setWeights({ wQ: w, wK: w, wV: w, wO: w, bQ: b, bK: b, bV: b, bO: b });
const { output } = mha.forward(new Float32Array(12).fill(1), { causal: true });
mha.dispose();
window.result = { variant: attn.variant, output: Array.from(output) };
