// The page opens each model on its clearest head (a previous-token head when the model card names
// one) unless the address or the learner chose a head: the first picture shows a pattern.
import { openingHead } from '../head_labels.js';
import { urlChoseHead } from './url_state.js';

export function openingHeads(page, { update }) {
  const opened = new Set(); // models whose opening head was applied or whose head was chosen
  return {
    /** Opens `model` on its clearest head, once, if it is on screen and its description is in. */
    open(model) {
      const info = page.infos.get(model);
      if (opened.has(model) || model !== page.state.model || page.isSeed || !info) return;
      opened.add(model);
      if (urlChoseHead || page.state.layer !== 0 || page.state.head !== 0) return;
      const { layer, head } = openingHead(info.openingLabels ?? info.headLabels);
      if (layer !== 0 || head !== 0) update({ layer, head });
    },
    /** A newly loaded model of this kind opens on its own clearest head too. */
    forget(model) { opened.delete(model); },
  };
}
