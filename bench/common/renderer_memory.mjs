// The resident memory of the Chromium renderers this process started (Linux /proc): a page's
// JavaScript heap, its WebAssembly memories and its workers all live in its renderer process.
// Sampled every `intervalMs`; peak() is the largest sum seen since the last reset().
import { readdirSync, readFileSync } from 'node:fs';

/** pid -> parent pid of every process (those that vanish while being read are left out). */
function parents() {
  const map = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // The command name may hold spaces and parentheses: the fields after its last ')' are fixed.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      map.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch { /* gone */ }
  }
  return map;
}

/** Renderer processes descending from `root` (Chromium's --type=renderer children). */
export function rendererPids(root = process.pid) {
  const map = parents();
  const under = (pid) => { for (let p = pid, i = 0; p > 1 && i < 64; p = map.get(p), i++) if (p === root) return true; return false; };
  return [...map.keys()].filter((pid) => {
    if (!under(pid)) return false;
    try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer'); } catch { return false; }
  });
}

function rssBytes(pid) {
  try { return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024; } catch { return 0; }
}

/** Samples the renderers' summed RSS until stop(). */
export function rendererMemory({ intervalMs = 100 } = {}) {
  let top = 0;
  let pids = [];
  let ticks = 0;
  const sample = () => {
    if (ticks++ % 10 === 0) pids = rendererPids();  // new pages start new renderers
    top = Math.max(top, pids.reduce((s, p) => s + rssBytes(p), 0));
  };
  const timer = setInterval(sample, intervalMs);
  return {
    now: () => rendererPids().reduce((s, p) => s + rssBytes(p), 0),
    peak: () => { sample(); return top; },
    reset: () => { pids = rendererPids(); ticks = 1; top = 0; },
    stop: () => clearInterval(timer),
  };
}
