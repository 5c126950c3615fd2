// Jest's globalTeardown: removes the run's shared folder (global_setup.cjs, run_once.cjs).
const fs = require('node:fs');

module.exports = () => {
  const dir = process.env.ATTENTION_TEST_RUN_DIR;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
};
