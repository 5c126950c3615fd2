// The URL follows the state, written at most every 150 ms: replaceState costs milliseconds, and
// streamed tokens change the state many times a second. (Counted as pending work, so tests that
// wait for an idle page read the final URL.)
import { serializeState } from '../state.js';
import { openingHead } from '../head_labels.js';

/** Whether the address named a layer or head (the page then keeps them: no opening head). */
export const urlChoseHead = ['layer', 'head'].some((k) => new URLSearchParams(location.search).has(k));

export function urlState(page, { busy }) {
  let timer = null;

  /** The address of what is on screen now (the URL is written a little later). */
  function stateUrl() {
    // A model the page opens on another head needs layer 1 / head 1 written out to come back to them.
    const info = page.info;
    const opening = page.isSeed ? null : openingHead(info?.openingLabels ?? info?.headLabels);
    const layerHead = !!opening && (opening.layer !== 0 || opening.head !== 0);
    return serializeState(page.state, { layerHead }) || location.pathname;
  }

  function writeSoon() {
    if (timer) return;
    busy(+1);
    timer = setTimeout(() => {
      timer = null;
      history.replaceState(null, '', stateUrl());
      busy(-1);
    }, 150);
  }

  return { stateUrl, writeSoon };
}
