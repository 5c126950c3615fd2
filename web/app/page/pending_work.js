// data-busy="1" on <main> while a request of ours is in the worker or a debounced one is waiting
// (tests wait for "0").
export function pendingWork(app) {
  let pending = 0;
  const busy = (delta) => {
    pending += delta;
    app.dataset.busy = pending > 0 ? '1' : '0';
  };
  return {
    busy,
    /** Counts a promise as pending until it settles; returns it. */
    track(promise) {
      busy(+1);
      const done = () => busy(-1);
      promise.then(done, done);
      return promise;
    },
    /** Runs `what` once the frame being drawn is on screen (busy meanwhile: tests wait for it). */
    afterPaint(what) {
      busy(+1);
      requestAnimationFrame(() => setTimeout(() => { what(); busy(-1); }, 0));
    },
  };
}
