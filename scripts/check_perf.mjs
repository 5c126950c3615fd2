// `npm run check:perf`: the wall-clock checks that `npm test` does not make (a test must not fail
// because the machine is busy): tests/{browser,js}/*.perf.cjs, run one file at a time (in headless
// Chromium or in Node), each printing what it measured and failing when a time is over its bound:
//   browser/first_view.perf.cjs      the demo's first view (plain Chromium, a starting browser, Playwright)
//   browser/step_view.perf.cjs       the step view at 128 tokens, desktop and phone
//   browser/responsiveness.perf.cjs  the longest main-thread task while typing and while tokens stream
//   js/tokenizer_linear.perf.cjs     1 MB of hostile text against 1 MB of prose, BPE and WordPiece
// Run it on a quiet machine, after `npm run build` (it uses dist/ and build/wasm/ as they are).
// Extra arguments go to Jest (e.g. `npm run check:perf -- step_view` for one file).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
if (!existsSync(join(root, 'dist/index.cjs'))) {
  console.error('check:perf: dist/ is not built: run `npm run build` first.');
  process.exit(1);
}
// The suite's Jest settings (jest.config.cjs), for the .perf.cjs files only.
const config = {
  rootDir: root,
  testMatch: ['<rootDir>/tests/browser/**/*.perf.cjs', '<rootDir>/tests/js/**/*.perf.cjs'],
  moduleFileExtensions: ['js', 'cjs', 'mjs', 'json'],
  testEnvironment: 'node',
  transform: {},
  testTimeout: 300000,
};
const jest = join(root, 'node_modules/jest/bin/jest.js');
const r = spawnSync(process.execPath, [jest, '--config', JSON.stringify(config), '--runInBand', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
