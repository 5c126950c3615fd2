// A careless user gets a clear AttentionError naming the problem, and the module stays usable.
const { api, variants, load, randomArray } = require('./helpers.cjs');

const D = 8, H = 2;
function weights(seed = 1) {
  return {
    wQ: randomArray(D * D, seed), wK: randomArray(D * D, seed + 1), wV: randomArray(D * D, seed + 2),
    wO: randomArray(D * D, seed + 3), bQ: randomArray(D, seed + 4), bK: randomArray(D, seed + 5),
    bV: randomArray(D, seed + 6), bO: randomArray(D, seed + 7),
  };
}

describe.each(variants)('%s build', (variant) => {
  let attn, layer;
  const x = randomArray(2 * 3 * D, 42);
  beforeAll(async () => {
    attn = await load(variant);
    layer = attn.createMultiHeadAttention({ dModel: D, numHeads: H });
    layer.setWeights(weights());
  });
  afterAll(() => layer.dispose());

  // After every bad call the same layer must still compute the same good answer.
  let good;
  beforeEach(() => { good ??= layer.forward(x, { batch: 2 }).output; });
  afterEach(() => { expect(layer.forward(x, { batch: 2 }).output).toEqual(good); });

  const throws = (fn, message) => {
    let error;
    try { fn(); } catch (e) { error = e; }
    expect(error).toBeInstanceOf(api.AttentionError);
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toMatch(message);
  };

  test('configs: numHeads 0, dModel not divisible, missing fields', () => {
    throws(() => attn.createMultiHeadAttention({ dModel: 8, numHeads: 0 }), /numHeads must be a positive integer, got 0/);
    throws(() => attn.createMultiHeadAttention({ dModel: 10, numHeads: 3 }), /dModel \(10\) is not divisible by numHeads \(3\)/);
    throws(() => attn.createMultiHeadAttention({ dModel: 8 }), /numHeads must be a positive integer, got undefined/);
    throws(() => attn.createMultiHeadAttention({ dModel: 8.5, numHeads: 1 }), /dModel must be a positive integer/);
    throws(() => attn.createMultiHeadAttention(), /createMultiHeadAttention: config must be an object like \{ dModel: 512, numHeads: 8 \}, got undefined/);
    throws(() => attn.createMultiHeadAttention({ dModel: 1e6, numHeads: 1 }), /dModel must be between 1 and 65536/);
  });

  test('wrong-length and wrong-type weights, NaN weights, missing biases', () => {
    const other = attn.createMultiHeadAttention({ dModel: D, numHeads: H });
    try {
      throws(() => other.forward(x, { batch: 2 }), /weights have not been set: call setWeights\(\) first/);
      throws(() => other.setWeights({ ...weights(), wQ: new Float32Array(63) }), /wQ has 63 elements, expected dModel\*numHeads\*dK = 8\*2\*4 = 64/);
      throws(() => other.setWeights({ ...weights(), wK: new Float64Array(64) }), /wK must be a Float32Array \(or an array of numbers\), got Float64Array\(64\)/);
      throws(() => other.setWeights({ ...weights(), bO: undefined }), /bO must be a Float32Array .* got undefined/);
      const nan = weights(); nan.wV[10] = NaN;
      throws(() => other.setWeights(nan), /wV contains NaN at index 10/);
      const inf = weights(); inf.bQ[2] = Infinity;
      throws(() => other.setWeights(inf), /bQ contains Infinity at index 2/);
      throws(() => other.forward(x, { batch: 2 }), /weights have not been set/); // none were ever set
      // A refused setWeights leaves the last good weights in place: the layer computes as before.
      other.setWeights(weights());
      const before = other.forward(x, { batch: 2 }).output;
      throws(() => other.setWeights(nan), /wV contains NaN at index 10/);
      expect(other.forward(x, { batch: 2 }).output).toEqual(before);
    } finally {
      other.dispose();
    }
    const noBias = attn.createMultiHeadAttention({ dModel: D, numHeads: H, bias: false });
    throws(() => noBias.setWeights(weights()), /bQ given but the layer was created with bias: false/);
    noBias.dispose();
  });

  test('wrong-length inputs, sequence length 0, NaN and Inf inputs', () => {
    throws(() => layer.forward(randomArray(47), { batch: 2 }), /query has 47 elements, not a multiple of batch\*dModel = 2\*8 = 16/);
    throws(() => layer.forward(x, { batch: 2, seqLen: 4 }), /query has 48 elements, expected batch\*seqLen\*dModel = 2\*4\*8 = 64/);
    throws(() => layer.forward(new Float32Array(0)), /query is empty: seqLen must be >= 1/);
    throws(() => layer.forward(x, { batch: 2, seqLen: 0 }), /seqLen must be a positive integer, got 0/);
    throws(() => layer.forward(x, { batch: 0 }), /batch must be a positive integer, got 0/);
    throws(() => layer.forward('hello'), /query has 5 elements|query must be a Float32Array/);
    const bad = x.slice(); bad[17] = NaN;
    throws(() => layer.forward(bad, { batch: 2 }), /query contains NaN at index 17/);
    bad[17] = -Infinity;
    throws(() => layer.forward(bad, { batch: 2 }), /query contains -Infinity at index 17/);
    const key = randomArray(2 * 5 * D); key[3] = Infinity;
    throws(() => layer.forward(x, { batch: 2, key }), /key contains Infinity at index 3/);
    throws(() => layer.forward(x, { batch: 2, key: randomArray(2 * 5 * D), value: randomArray(2 * 4 * D) }), /value has 64 elements, expected batch\*seqLenKV\*vdim = 2\*5\*8 = 80/);
    throws(() => layer.forward(x, { batch: 2, scale: NaN }), /scale must be a finite number, got NaN/);
  });

  test('mismatched masks', () => {
    throws(() => layer.forward(x, { batch: 2, keyPaddingMask: new Uint8Array(5) }), /keyPaddingMask has 5 elements, expected batch\*seqLenKV = 2\*3 = 6/);
    throws(() => layer.forward(x, { batch: 2, keyPaddingMask: new Float32Array(6) }), /keyPaddingMask must be a Uint8Array or an array of booleans/);
    throws(() => layer.forward(x, { batch: 2, attnMask: new Uint8Array(8) }), /attnMask has 8 elements, expected seqQ\*seqK = 3\*3 = 9 or batch\*heads\*seqQ\*seqK = 2\*2\*3\*3 = 36/);
    throws(() => layer.forward(x, { batch: 2, attnMask: new Int32Array(9) }), /attnMask must be a Uint8Array or boolean\[\] .* got Int32Array\(9\)/);
    const nanMask = new Float32Array(9); nanMask[4] = NaN;
    throws(() => layer.forward(x, { batch: 2, attnMask: nanMask }), /attn_mask contains NaN at index 4/);
    const posInf = new Float32Array(9); posInf[0] = Infinity;
    throws(() => layer.forward(x, { batch: 2, attnMask: posInf }), /attn_mask contains \+Infinity/);
  });

  test('sizes the heap cannot hold are an error, not an abort', () => {
    // 45000^2 attention weights = 8.1 GB > the 4 GiB maximum heap.
    const long = new Float32Array(45000 * D);
    throws(() => layer.forward(long, { returnAttention: true }), /out of memory: this call needs \d+\.\d MiB/);
    // The trace needs the full 45000 x 45000 score matrix (without it the tiled path needs none).
    throws(() => layer.forward(long, { trace: true }), /attention is too large: batch\*heads\*seqQ\*seqK exceeds the memory limit/);
    const sdpaQ = new Float32Array(45000 * 4);
    throws(() => attn.scaledDotProductAttention(sdpaQ, sdpaQ, sdpaQ, { dK: 4, trace: true }), /attention is too large/);
    throws(() => attn.scaledDotProductAttention(sdpaQ, sdpaQ, sdpaQ, { dK: 4, returnAttention: true }), /out of memory: this call needs/);
  });

  test('sizes that would wrap a 32-bit size are rejected before any allocation', () => {
    // 32769^2 scores are just over 2^30 floats: their byte count wraps on wasm32.
    const q = new Float32Array(32769);
    throws(() => attn.scaledDotProductAttention(q, q, q, { dK: 1, trace: true }), /attention is too large/);
    // Q|K|V side by side: 16385 rows x 3 x 65536 floats.
    const wide = attn.createMultiHeadAttention({ dModel: 1, numHeads: 1, dK: 65536 });
    const n = 65536;
    wide.setWeights({ wQ: new Float32Array(n), wK: new Float32Array(n), wV: new Float32Array(n), wO: new Float32Array(n),
      bQ: new Float32Array(n), bK: new Float32Array(n), bV: new Float32Array(n), bO: new Float32Array(1) });
    throws(() => wide.forward(new Float32Array(16385)), /too large: .* exceed the memory limit/);
    wide.dispose();
  });

  test('calls after dispose()', () => {
    const temp = attn.createMultiHeadAttention({ dModel: D, numHeads: H });
    temp.setWeights(weights());
    temp.dispose();
    expect(temp.disposed).toBe(true);
    throws(() => temp.forward(x, { batch: 2 }), /has been disposed/);
    throws(() => temp.setWeights(weights()), /has been disposed/);
    temp.dispose(); // twice is harmless
  });

  test('memory stays bounded over many calls and layers', () => {
    // Each call below stages ~100 KB and traces ~200 KB: a leak of either would grow the heap.
    const x64 = randomArray(2 * 64 * D, 7);
    layer.forward(x64, { batch: 2, returnAttention: true, trace: true });
    const before = attn.memoryBytes;
    for (let i = 0; i < 2000; i++) {
      layer.forward(x64, { batch: 2, returnAttention: i % 2 === 0, trace: i % 7 === 0 });
      try { layer.forward(x64, { batch: 2, seqLen: 5 }); } catch { /* bad call, on purpose */ }
    }
    for (let i = 0; i < 500; i++) {
      const t = attn.createMultiHeadAttention({ dModel: 64, numHeads: 4 });
      t.setWeights({ wQ: new Float32Array(4096), wK: new Float32Array(4096), wV: new Float32Array(4096), wO: new Float32Array(4096),
        bQ: new Float32Array(64), bK: new Float32Array(64), bV: new Float32Array(64), bO: new Float32Array(64) });
      t.forward(new Float32Array(10 * 64));
      t.dispose();
    }
    // The heap may have grown once during the out-of-memory test; it must not grow here.
    expect(attn.memoryBytes).toBe(before);
  });
});
