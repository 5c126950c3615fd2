// The library's C++ core built natively (bench/native, -O3 -march=native) into
// build/bench-native/, run as a subprocess per step. Parent-side: same interface as ChildEngine.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = `${ROOT}bench/native`;
const BUILD = `${ROOT}build/bench-native`;
const EXE = `${BUILD}/bench_native`;

function which(tool) {
  return spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).status === 0;
}

/** Configures and builds (incrementally); returns a skip reason instead of throwing. */
function build() {
  const missing = ['cmake', 'c++'].filter((t) => !which(t));
  if (missing.length) return `${missing.join(' and ')} not found`;
  mkdirSync(BUILD, { recursive: true });
  try {
    const opts = { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' };
    if (!existsSync(`${BUILD}/CMakeCache.txt`)) execFileSync('cmake', ['-S', SRC, '-B', BUILD, '-DCMAKE_BUILD_TYPE=Release'], opts);
    // -j1: the bench machine has 2 cores and the bench must not run two heavy processes at once.
    execFileSync('cmake', ['--build', BUILD, '-j1'], opts);
  } catch (e) {
    const out = `${e.stdout ?? ''}${e.stderr ?? ''}`.trim().split('\n').slice(-4).join(' | ');
    return `build failed: ${out || e.message}`;
  }
  return null;
}

function run(args) {
  const r = spawnSync(EXE, args, { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`bench_native failed: ${(r.stderr || r.error?.message || '').trim()}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

export class NativeEngine {
  constructor(engine) { this.engine = engine; this.args = null; }

  async load() {
    const t0 = performance.now();
    const skip = build();
    if (skip) return { skip };
    return { loadMs: null, info: { buildMs: performance.now() - t0, exe: EXE } };
  }

  async prepare(wl, d) {
    const data = `${BUILD}/${wl.name}.data.f32`;
    const out = `${BUILD}/${wl.name}.out.f32`;
    const parts = [d.wQ, d.wK, d.wV, d.wO, d.bQ, d.bK, d.bV, d.bO, d.x];
    writeFileSync(data, Buffer.concat(parts.map((a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength))));
    this.args = ['--data', data, '--batch', wl.batch, '--seq', wl.seqLen, '--dmodel', wl.dModel, '--heads', wl.numHeads, '--causal', wl.causal ? 1 : 0].map(String);
    const r = run([...this.args, '--out', out]);
    const bytes = readFileSync(out);
    const output = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    return { firstCallMs: r.firstCallMs, output };
  }

  async time(policy) {
    const p = policy;
    return run([...this.args, '--time', ...[p.warmupMinCalls, p.warmupMinMs, p.warmupMaxMs, p.budgetMs, p.minReps, p.maxReps].map(String)]);
  }

  async close() {}
}
