// The demo's own rotary embedding (web/app/rotary.js: the step view turns a query and a key to
// other positions with it) equals the core's: every row of Q and K before the rotation, turned by
// the page's code to its position, is the trace's row after it, for rope_theta 10000 and 500000 and
// rope_scaling linear and llama3 (tiny random Llamas). In a child process: rotary.js is an ES module.
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { root } = require('./helpers.cjs');

test('the page rotates queries and keys as the library does, for each rope setting', () => {
  const out = JSON.parse(execFileSync(process.execPath, [path.join(root, 'tests/js/demo_rotary_check.mjs')], { encoding: 'utf8', timeout: 60000 }));
  expect(Object.keys(out)).toEqual(['default', 'theta500k', 'linear', 'llama3']);
  for (const [name, { maxDiff, rotationMoves }] of Object.entries(out)) {
    expect({ name, close: maxDiff < 1e-5 }).toEqual({ name, close: true });
    expect({ name, moves: rotationMoves > 1e-3 }).toEqual({ name, moves: true }); // (the check could fail)
  }
  console.log(`rotary.js vs the trace, max abs difference: ${Object.entries(out).map(([k, v]) => `${k} ${v.maxDiff.toExponential(1)}`).join(', ')}`);
});
