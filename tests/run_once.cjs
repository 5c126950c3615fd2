// What several test files need made the same way (the packed tarball, the tokenizer references) is
// made once per Jest run and shared: in the run's folder (global_setup.cjs names it in
// ATTENTION_TEST_RUN_DIR, global_teardown.cjs removes it), the first file to ask makes it while the
// others wait for it. Outside such a run (no folder named), each caller makes its own.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const WAIT_MS = 300_000;
const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** The folder that `make(dir)` filled, made by the first caller of `name` in this run. */
function once(name, make) {
  const base = process.env.ATTENTION_TEST_RUN_DIR;
  if (!base) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `attention-wasm-${name}-`));
    process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    make(dir);
    return dir;
  }
  const dir = path.join(base, name), making = `${dir}.making`, failed = `${dir}.failed`;
  if (fs.existsSync(dir)) return dir;
  try {
    fs.mkdirSync(making);  // atomic: one file of the run wins and makes it
    // (or it was made and renamed between the check above and this: then it is there)
    if (fs.existsSync(dir)) {
      fs.rmdirSync(making);
      return dir;
    }
  } catch {
    for (const start = Date.now(); !fs.existsSync(dir); pause(100)) {
      if (fs.existsSync(failed)) throw new Error(`${name}: making it failed in another test file:\n${fs.readFileSync(failed, 'utf8')}`);
      if (Date.now() - start > WAIT_MS) throw new Error(`${name}: another test file has been making it for ${WAIT_MS / 1000} s`);
    }
    return dir;
  }
  try {
    make(making);
  } catch (e) {
    fs.writeFileSync(failed, String(e?.stack ?? e));
    throw e;
  }
  fs.renameSync(making, dir);
  return dir;
}

module.exports = { once };
