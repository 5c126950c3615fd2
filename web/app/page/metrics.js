// The page's timings for the performance tests (window.__metrics): when the script started, the
// model was ready, the first view was drawn, and how long the last run and step view took.
export const metrics = (window.__metrics = { scriptStart: performance.now() });

/** Whether the first view (drawn with real numbers) is still to come. */
export const beforeFirstView = () => metrics.firstView === undefined;

/** "First view interactive": the first attention view drawn with real numbers, in ms since
 * navigation start (performance.now()'s origin); partial: drawn from a partial run. */
export function firstViewDrawn(partial) {
  if (!beforeFirstView()) return;
  metrics.firstView = performance.now();
  metrics.firstViewPartial = partial;
  document.documentElement.dataset.firstViewMs = metrics.firstView.toFixed(0);
}
