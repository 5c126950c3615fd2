// Jest runs the built package (dist/): "js" in Node, "browser" in headless Chromium.
const common = { moduleFileExtensions: ['js', 'cjs', 'mjs', 'json'], testEnvironment: 'node', transform: {} };
module.exports = {
  testTimeout: 120000,
  globalSetup: '<rootDir>/tests/plain_output.cjs',
  projects: [
    { ...common, displayName: 'js', testMatch: ['<rootDir>/tests/js/**/*.test.cjs'] },
    { ...common, displayName: 'browser', testMatch: ['<rootDir>/tests/browser/**/*.test.cjs'] },
  ],
};
