// Child processes of the tests (node, vite, webpack, tsc) print without colour codes, as they do
// in a pipe. When Jest's output is a terminal, FORCE_COLOR reaches its workers and their children:
// vite then colours a port number apart from its host, and console.log colours the numbers the
// README test reads. Called by Jest's globalSetup (global_setup.cjs), in the main process before
// the workers start: workers and children inherit this environment. Dropped, not zeroed: Node warns when
// FORCE_COLOR and NO_COLOR are both set.
module.exports = () => {
  delete process.env.FORCE_COLOR;
  process.env.NO_COLOR = '1';
};
