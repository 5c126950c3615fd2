import * as tf from '@tensorflow/tfjs-core';
import { setWasmPaths, setThreadsCount, getThreadsCount } from '@tensorflow/tfjs-backend-wasm';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const dir = require.resolve('@tensorflow/tfjs-backend-wasm/package.json').replace(/package\.json$/, 'dist/');
console.log(dir);
tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
setWasmPaths(dir);
setThreadsCount(1);
const t0 = performance.now();
await tf.setBackend('wasm'); await tf.ready();
console.log('backend', tf.getBackend(), 'ms', performance.now()-t0, 'simd', tf.env().getBool('WASM_HAS_SIMD_SUPPORT'), 'threads', getThreadsCount());
const a = tf.randomUniform([128, 768]); const b = tf.randomUniform([768, 768]);
for (let i=0;i<5;i++){ const s=performance.now(); const c=tf.matMul(a,b); c.dataSync(); c.dispose(); console.log(performance.now()-s); }
const c0 = process.cpuUsage(); const w0 = performance.now();
for (let i=0;i<50;i++){ const c=tf.matMul(a,b); c.dataSync(); c.dispose(); }
const w = performance.now()-w0; const cu = process.cpuUsage(c0);
console.log('per call', w/50, 'cpu/wall', (cu.user+cu.system)/1000/w, 'GFLOP/s', 2*128*768*768/(w/50)/1e6);
