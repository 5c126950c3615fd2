// Warm-up and repetition policy shared by the Node engines and the browser page. Browser-safe.

export const POLICY = {
  // Full run: V8 tiers wasm and JS up after a few calls, so warm up for several calls and at
  // least half a second; then spend about `budgetMs` per engine and workload on timed calls.
  full: { warmupMinCalls: 5, warmupMinMs: 500, warmupMaxMs: 3000, budgetMs: 3000, minReps: 5, maxReps: 400 },
  quick: { warmupMinCalls: 2, warmupMinMs: 100, warmupMaxMs: 800, budgetMs: 500, minReps: 3, maxReps: 50 },
};

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Times `call` (sync, or async when `isAsync`): warm-up, then N reps sized from the warm-up
 * speed so one engine/workload costs about policy.budgetMs. Slow calls (seconds each) get
 * fewer warm-up calls than warmupMinCalls, but never fewer than one, plus minReps timed ones.
 */
export async function timeCalls(call, isAsync, policy) {
  const now = () => performance.now();
  let warmCalls = 0;
  const warmStart = now();
  const warm = [];
  // warmupMinCalls 0: the caller has warmed up already (generate: its checked first call); time
  // minReps calls straight away.
  for (; policy.warmupMinCalls > 0;) {
    const t = now();
    if (isAsync) await call(); else call();
    const ms = now() - t;
    warm.push(ms);
    warmCalls++;
    const spent = now() - warmStart;
    if (warmCalls >= policy.warmupMinCalls && spent >= policy.warmupMinMs) break;
    if (spent + ms > policy.warmupMaxMs) break;
  }
  const warmupMs = now() - warmStart;
  // Size the reps from the warm-up's median call, not its last one: one GC pause or preemption
  // in the last warm-up call would otherwise cut the reps tenfold.
  const perCall = warm.length ? median(warm.length > 1 ? warm.slice(1) : warm) : Infinity;
  const reps = Math.max(policy.minReps, Math.min(policy.maxReps, Math.floor(policy.budgetMs / Math.max(perCall, 1e-3))));
  const samples = new Array(reps);
  const cpu0 = typeof process !== 'undefined' && process.cpuUsage ? process.cpuUsage() : null;
  const wall0 = now();
  for (let i = 0; i < reps; i++) {
    const t = now();
    if (isAsync) await call(); else call();
    samples[i] = now() - t;
  }
  const wallMs = now() - wall0;
  // CPU time / wall time over the timed calls: ~1 for one thread, up to 2 when a second
  // thread really works. It tells whether a "2 threads" engine used them.
  let cpuPerWall = null;
  if (cpu0) {
    const c = process.cpuUsage(cpu0);
    cpuPerWall = (c.user + c.system) / 1000 / wallMs;
  }
  return { medianMs: median(samples), minMs: Math.min(...samples), reps, warmupCalls: warmCalls, warmupMs, cpuPerWall };
}
