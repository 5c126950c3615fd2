// A tiny Llama checkpoint laid out as every source loadModel reads (a folder, the same sharded, a
// GGUF file, the same split), and stand-ins for what reads them that count what is running and
// fail on demand: fetch() (for URLs and the Hub) answers from a Map of files, and fs.promises.open
// (the Node build's file reads) is wrapped. Shared by load_tasks.test.cjs and load_progress.test.cjs.
const fs = require('node:fs');
const fsp = require('node:fs/promises');
const os = require('node:os');
const path = require('node:path');
const { shardSafetensors } = require('./hub_server.cjs');
const { checkpoint, safetensors, tokenizerFiles } = require('./llama_checkpoint.cjs');
const { writeLlamaGguf } = require('./gguf_convert.cjs');

const CONFIG = {
  model_type: 'llama', vocab_size: 23, max_position_embeddings: 64, hidden_size: 16, intermediate_size: 32, num_hidden_layers: 1,
  num_attention_heads: 2, num_key_value_heads: 1, rms_norm_eps: 1e-5, bos_token_id: 0, eos_token_id: 1, hidden_act: 'silu', tie_word_embeddings: true, rope_theta: 10000,
};
const TENSORS = checkpoint(CONFIG, 5);
const json = (v) => Buffer.from(JSON.stringify(v));

/** The model's files by name: one safetensors file, or `shards` of them with their index. */
function modelFiles(shards = 1) {
  const tok = tokenizerFiles();
  // (byte-level, as GGUF's gpt2 tokenizer model needs: the letters are their own byte symbols)
  tok.tokenizer.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  tok.tokenizer.decoder = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  const weights = Buffer.from(safetensors(TENSORS));
  const files = shards > 1 ? shardSafetensors(weights, shards) : new Map([['model.safetensors', weights]]);
  files.set('config.json', json(CONFIG));
  files.set('tokenizer.json', json(tok.tokenizer));
  files.set('tokenizer_config.json', json(tok.config));
  return files;
}

/** Writes the files into a fresh folder under `root`; returns its path. */
function writeFolder(root, files) {
  const dir = fs.mkdtempSync(path.join(root, 'm-'));
  for (const [name, bytes] of files) fs.writeFileSync(path.join(dir, name), bytes);
  return dir;
}

/** The model as a GGUF file (`shards` > 1: split) in a folder of its own; returns the files written. */
function writeGguf(attn, root, shards = 1) {
  const dir = writeFolder(root, modelFiles());
  const tensors = Object.fromEntries(Object.entries(TENSORS).map(([name, { shape, data }]) => [name, { shape, values: Float32Array.from(data) }]));
  return writeLlamaGguf(attn, path.join(dir, 'tiny.gguf'), CONFIG, tensors, () => 'F32', { shards, folder: dir });
}

const tmpRoot = () => fs.mkdtempSync(path.join(os.tmpdir(), 'attn-load-'));
const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

/**
 * fetch() answering from `sites` (url prefix -> Map of file name -> bytes; anything else 404),
 * bodies in chunks of 1 kB on timers, honouring the request's signal. `running` counts requests
 * whose body is not yet finished, errored or cancelled; `fault(n, url)` picks what the n-th
 * request (from 1) meets: undefined (none), 'refuse' (fetch rejects), 'cut' (the body fails after
 * its first chunk), 'hang' (no answer until aborted), 'late' (the body fails 50 ms after the load
 * would have moved on). Install with install(), restore with uninstall().
 */
function fakeFetch(sites) {
  const real = globalThis.fetch;
  const stub = {
    running: 0, calls: [], fault: () => undefined,
    install() { globalThis.fetch = fetchStub; },
    uninstall() { globalThis.fetch = real; },
  };
  const lookup = (url) => {
    for (const [prefix, files] of Object.entries(sites)) {
      if (!url.startsWith(prefix)) continue;
      const file = decodeURIComponent(url.slice(prefix.length).replace(/^resolve\/main\//, '').replace(/[?#].*$/, ''));
      return files.get(file);
    }
    return undefined;
  };
  async function fetchStub(input, init = {}) {
    const url = String(input), signal = init.signal;
    stub.calls.push(url);
    const fault = stub.fault(stub.calls.length, url);
    const aborted = () => signal?.reason ?? new DOMException('aborted', 'AbortError');
    if (signal?.aborted) throw aborted();
    if (fault === 'refuse') throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    stub.running++;
    let finished = false;
    const finish = () => { if (!finished) { finished = true; stub.running--; } };
    if (fault === 'hang') {
      return new Promise((_, reject) => signal?.addEventListener('abort', () => { finish(); reject(aborted()); }));
    }
    const bytes = lookup(url);
    if (!bytes) {
      finish();
      return new Response('not found', { status: 404 });
    }
    let at = 0, timer, ctrl, pending;
    const body = new ReadableStream({
      start(controller) { ctrl = controller; },
      pull(controller) {
        return new Promise((resolve) => {
          pending = resolve;
          timer = setTimeout(() => {
            if (fault === 'cut' && at > 0) { finish(); controller.error(new TypeError('terminated')); return resolve(); }
            if (fault === 'late' && at > 0) {
              timer = setTimeout(() => { finish(); controller.error(new TypeError('terminated late')); resolve(); }, 50);
              return;
            }
            if (at >= bytes.length) { finish(); controller.close(); return resolve(); }
            controller.enqueue(new Uint8Array(bytes.subarray(at, at + 1024)));
            at += 1024;
            resolve();
          }, 1);
        });
      },
      cancel() { clearTimeout(timer); finish(); },
    });
    // An abort errors the body, as fetch's own would.
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      if (finished) return;
      finish();
      try { ctrl.error(aborted()); } catch {}
      pending?.();
    });
    // (a closed or errored stream stays so; the reader sees the abort as fetch's own body would)
    return new Response(body, { status: 200, headers: { 'content-length': String(bytes.length), etag: `"${bytes.length}"` } });
  }
  return stub;
}

/**
 * fs.promises.open wrapped: `open` counts files open now; `fault(n, file)` picks what the n-th open
 * (from 1) meets: 'refuse' (open fails with EIO), 'cut' (its first read fails), 'late' (its first
 * read fails after 50 ms).
 */
function fakeFiles() {
  const real = fsp.open;
  const stub = {
    open: 0, calls: [], fault: () => undefined,
    install() { fsp.open = openStub; },
    uninstall() { fsp.open = real; },
  };
  const eio = () => Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
  async function openStub(file, flags) {
    stub.calls.push(file);
    const fault = stub.fault(stub.calls.length, file);
    if (fault === 'refuse') throw eio();
    const handle = await real(file, flags);
    stub.open++;
    let closed = false;
    return {
      stat: () => handle.stat(),
      async read(...args) {
        if (fault === 'cut') throw eio();
        if (fault === 'late') { await new Promise((r) => setTimeout(r, 50)); throw eio(); }
        return handle.read(...args);
      },
      async close() { if (!closed) { closed = true; stub.open--; } return handle.close(); },
    };
  }
  return stub;
}

module.exports = { CONFIG, TENSORS, modelFiles, writeFolder, writeGguf, tmpRoot, tick, fakeFetch, fakeFiles };
