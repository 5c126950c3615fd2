// Jest runs the built package (dist/): "js" in Node, "browser" in headless Chromium.
const common = { moduleFileExtensions: ['js', 'cjs', 'mjs', 'json'], testEnvironment: 'node', transform: {} };
module.exports = {
  // Two workers, one a core (Jest's default is cores - 1: on the 2-core CI machine that ran every
  // file in one process, one core idle while a file waits on a child process, a server or Chromium).
  maxWorkers: 2,
  testTimeout: 120000,
  globalSetup: '<rootDir>/tests/global_setup.cjs',
  globalTeardown: '<rootDir>/tests/global_teardown.cjs',
  projects: [
    { ...common, displayName: 'js', testMatch: ['<rootDir>/tests/js/**/*.test.cjs'] },
    { ...common, displayName: 'browser', testMatch: ['<rootDir>/tests/browser/**/*.test.cjs'] },
  ],
};
