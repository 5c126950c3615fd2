// Plain JavaScript multi-head attention with cache-friendly loops: what a web developer could
// write without any library. Float32Array everywhere, i-k-j GEMM (the inner loop streams a row
// of B and a row of C), per-head Q/K/V gathered into contiguous buffers, causal work skipped.

// C[M x N] = A[M x K] B[K x N] + bias (row-major).
function gemmBias(M, N, K, A, B, bias, C) {
  for (let i = 0; i < M; i++) {
    const c0 = i * N;
    for (let j = 0; j < N; j++) C[c0 + j] = bias[j];
    for (let k = 0; k < K; k++) {
      const a = A[i * K + k];
      const b0 = k * N;
      for (let j = 0; j < N; j++) C[c0 + j] += a * B[b0 + j];
    }
  }
}

// Copies head h's column block of a rows x D matrix into a contiguous rows x dk buffer.
function gatherHead(src, rowStart, rows, D, h, dk, dst) {
  for (let r = 0; r < rows; r++) {
    const s = (rowStart + r) * D + h * dk;
    for (let c = 0; c < dk; c++) dst[r * dk + c] = src[s + c];
  }
}

export function makeLayer(wl, d) {
  const { batch: B, seqLen: S, dModel: D, numHeads: H, causal } = wl;
  const dk = D / H;
  const scale = 1 / Math.sqrt(dk);
  const rows = B * S;
  const Q = new Float32Array(rows * D), K = new Float32Array(rows * D), V = new Float32Array(rows * D);
  const concat = new Float32Array(rows * D);
  const qh = new Float32Array(S * dk), kh = new Float32Array(S * dk), vh = new Float32Array(S * dk);
  const p = new Float32Array(S), z = new Float32Array(dk);

  return function forward(x) {
    gemmBias(rows, D, D, x, d.wQ, d.bQ, Q);
    gemmBias(rows, D, D, x, d.wK, d.bK, K);
    gemmBias(rows, D, D, x, d.wV, d.bV, V);
    for (let b = 0; b < B; b++) {
      for (let h = 0; h < H; h++) {
        gatherHead(Q, b * S, S, D, h, dk, qh);
        gatherHead(K, b * S, S, D, h, dk, kh);
        gatherHead(V, b * S, S, D, h, dk, vh);
        for (let i = 0; i < S; i++) {
          const nk = causal ? i + 1 : S;  // keys after i are masked: never computed
          let max = -Infinity;
          for (let j = 0; j < nk; j++) {
            let s = 0;
            for (let c = 0; c < dk; c++) s += qh[i * dk + c] * kh[j * dk + c];
            s *= scale;
            p[j] = s;
            if (s > max) max = s;
          }
          let sum = 0;
          for (let j = 0; j < nk; j++) { const e = Math.exp(p[j] - max); p[j] = e; sum += e; }
          z.fill(0);
          for (let j = 0; j < nk; j++) {
            const w = p[j] / sum;
            for (let c = 0; c < dk; c++) z[c] += w * vh[j * dk + c];
          }
          concat.set(z, (b * S + i) * D + h * dk);
        }
      }
    }
    const out = new Float32Array(rows * D);
    gemmBias(rows, D, D, concat, d.wO, d.bO, out);
    return out;
  };
}

export async function load() {
  return {
    loadMs: 0,
    info: {},
    prepare(wl, d) {
      const forward = makeLayer(wl, d);
      return { isAsync: false, run: () => forward(d.x), dispose() {} };
    },
  };
}
