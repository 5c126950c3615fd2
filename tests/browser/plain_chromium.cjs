// The demo's first view as a visitor's browser has it: Chromium started with no automation attached.
// Playwright drives Chromium through the DevTools protocol, which reports every network request and
// worker back to the test and so slows a cold page's downloads (a 7 MB fetch: ~2x); the number a
// learner waits for is measured without it. A harness page frames the demo and prints the demo's
// data-first-view-ms (ms since the frame's navigation start) to Chromium's log on stderr.
//
// A visitor opens the demo in a browser that is already running. A browser that has just started
// is still busy with itself for a second or two (on a 2-core machine its own user-interface
// renderer takes most of a core), so by default the harness frames the demo 3 s after Chromium
// starts; settleMs: 0 measures the demo as the browser's very first page.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { CHROMIUM_ARGS, executablePath } = require('./chromium.cjs');

const harness = (settleMs) => `<!doctype html><meta charset="utf-8"><title>first view</title>
<iframe id="demo" style="width:1280px;height:800px;border:0"></iframe>
<script>
setTimeout(() => { document.getElementById('demo').src = 'index.html'; }, ${settleMs});
const poll = setInterval(() => {
  const ms = document.getElementById('demo').contentDocument?.documentElement?.dataset.firstViewMs;
  if (ms) { clearInterval(poll); console.log('first-view-ms=' + ms); }
}, 5);
</script>`;

/** Cold first views (fresh profile each) of `${base}/index.html`; `dir` is the served folder. */
async function plainFirstViews(base, dir, runs, { settleMs = 3000 } = {}) {
  fs.writeFileSync(path.join(dir, 'first-view-harness.html'), harness(settleMs));
  const out = [];
  for (let k = 0; k < runs; k++) {
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'attn-plain-'));
    const chromium = spawn(executablePath(), [...CHROMIUM_ARGS, '--enable-logging=stderr', '--window-size=1300,900',
      `--user-data-dir=${profile}`, `${base}/first-view-harness.html`], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
    try {
      out.push(await new Promise((resolve, reject) => {
        let log = '';
        const timer = setTimeout(() => reject(new Error(`no first view within 30 s; Chromium said:\n${log.slice(-2000)}`)), 30000);
        chromium.stderr.on('data', (d) => {
          log += d;
          const m = log.match(/first-view-ms=(\d+)/);
          if (m) { clearTimeout(timer); resolve(Number(m[1])); }
        });
        chromium.on('exit', (code) => { clearTimeout(timer); reject(new Error(`Chromium exited (${code}):\n${log.slice(-2000)}`)); });
      }));
    } finally {
      // The whole process group: Chromium's renderer and helper processes too.
      const exited = new Promise((r) => (chromium.exitCode !== null || chromium.signalCode ? r() : chromium.once('exit', r)));
      try { process.kill(-chromium.pid, 'SIGKILL'); } catch { /* already gone */ }
      await exited;
      fs.rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 50 });
    }
  }
  return out;
}

module.exports = { plainFirstViews };
