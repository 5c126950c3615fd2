// Jest's globalSetup (in the main process, before the workers start: they inherit its environment).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const plainOutput = require('./plain_output.cjs');

module.exports = () => {
  plainOutput();
  // The folder run_once.cjs shares made things in; global_teardown.cjs removes it.
  process.env.ATTENTION_TEST_RUN_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'attention-wasm-run-'));
};
