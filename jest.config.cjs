// Jest runs the built package (dist/) in Node: the suites are CommonJS test files.
module.exports = {
  testMatch: ['<rootDir>/tests/js/**/*.test.cjs'],
  moduleFileExtensions: ['js', 'cjs', 'mjs', 'json'],
  testEnvironment: 'node',
  transform: {},
  testTimeout: 60000,
};
