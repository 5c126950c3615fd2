// Runs one engine in its own process (forked by proxy.mjs). A fresh process per engine
// gives cold load/first-call numbers, keeps one engine's JIT and heap from another's, and is
// required for ORT, whose thread count is fixed at its wasm init.
import { median, timeCalls } from '../common/timing.mjs';

const [moduleFile, optionsJson] = process.argv.slice(2);
let engine = null;
let current = null;  // { wl, inst }

async function handle(msg) {
  switch (msg.cmd) {
    case 'load': {
      const mod = await import(new URL(`./${moduleFile}`, import.meta.url).href);
      engine = await mod.load(JSON.parse(optionsJson));
      if (engine.skip) return { skip: engine.skip };
      return { loadMs: engine.loadMs, info: engine.info };
    }
    case 'prepare': {
      if (current) { await current.inst.dispose(); current = null; }
      const t0 = performance.now();
      const inst = await engine.prepare(msg.wl, msg.data);
      const t1 = performance.now();
      // The first call after setting the weights: includes any lazy setup and cold JIT tiers.
      const out = inst.isAsync ? await inst.run() : inst.run();
      const firstCallMs = performance.now() - t1;
      current = { wl: msg.wl, inst };
      // Generate: the prefill's last-position logits too, compared with PyTorch's by the parent.
      const prefillLogits = inst.prefill ? Float32Array.from(await inst.prefill()) : undefined;
      return { prepareMs: t1 - t0, sessionMs: inst.sessionMs, firstCallMs, output: Float32Array.from(out), prefillLogits };
    }
    case 'time': {
      const r = await timeCalls(current.inst.run, current.inst.isAsync, msg.policy);
      // Generate: each call also logged its time to first token; the last r.reps are the timed ones.
      const split = current.inst.firstToken?.slice(-r.reps);
      if (split?.length) {
        r.ttftMs = median(split.map((s) => s.ttftMs));
        r.decodeMs = median(split.map((s) => s.runMs - s.ttftMs));
      }
      // Generate: the prefill alone, as many times as the runs, after them (already warm).
      if (current.inst.prefill) {
        const ms = [];
        for (let i = 0; i < r.reps; i++) {
          const t = performance.now();
          await current.inst.prefill();
          ms.push(performance.now() - t);
        }
        r.prefillMs = median(ms);
      }
      if (current.inst.stats) Object.assign(r, current.inst.stats());
      // Each engine has its own process: its resident set after the runs compares engines' memory.
      r.rssBytes = process.memoryUsage().rss;
      return r;
    }
    case 'exit':
      if (current) await current.inst.dispose();
      setImmediate(() => process.exit(0));
      return {};
    default:
      throw new Error(`unknown command ${msg.cmd}`);
  }
}

process.on('message', async (msg) => {
  try {
    process.send({ id: msg.id, ok: true, result: await handle(msg) });
  } catch (e) {
    process.send({ id: msg.id, ok: false, error: String(e?.stack ?? e) });
  }
});
