// "Switch heads off": the button beside the pickers (and in "Test this head"'s result) that
// switches the chosen head off or back on, the list of heads that are off, and the model's answers
// with every head and without them (views/ablation_view.js). The run computes both (the library's
// run option `ablate`, in the worker); the state's `off` list is the URL's off=.
import { el } from '../views/dom.js';
import { renderAblationView } from '../views/ablation_view.js';

// An encoder-decoder's attention picker -> the library's part of the heads it shows.
const PART_OF = { encoder: 'self', decoder: 'decoder', cross: 'cross' };
const PART_NAME = { self: '', decoder: 'decoder ', cross: 'cross-attention ' };
const same = (a, b) => a.layer === b.layer && a.head === b.head && a.part === b.part;
/** "layer 3 · head 2" (counted from 1, as the pickers count). */
const headName = ({ layer, head, part }) => `${PART_NAME[part] ?? ''}layer ${layer + 1} · head ${head + 1}`;

export function ablationPanel(page, ui, { update }) {
  /** The head the pickers chose, as an entry of the off list (null for "all heads"). */
  function chosen() {
    const sel = page.last.sel;
    if (!sel || sel.head === 'all' || page.isSeed) return null;
    return { layer: sel.layer, head: sel.head, part: page.info?.type === 'bart' ? PART_OF[page.state.attend] : 'self' };
  }

  const isOff = (entry) => page.state.off.some((o) => same(o, entry));

  /** Switches the chosen head off, or back on. */
  function toggle() {
    const entry = chosen();
    if (!entry) return;
    update({ off: isOff(entry) ? page.state.off.filter((o) => !same(o, entry)) : [...page.state.off, entry] });
  }

  /** A button that switches the chosen head off or on (the pickers' row, the head test's result). */
  function toggleLabel(entry) {
    return isOff(entry) ? `Switch ${headName(entry)} back on` : `Switch ${headName(entry)} off`;
  }

  /** Draws the button, the chips of the heads that are off, and the comparison. */
  function show() {
    const { run, state } = page, entry = chosen();
    ui.ablatePanel.hidden = page.isSeed;
    ui.switchHead.hidden = !entry;
    if (entry) ui.switchHead.textContent = toggleLabel(entry);
    if (page.isSeed) return;
    const chips = state.off.map((o) => el('button', { type: 'button', 'data-off': `${o.part}:${o.layer}.${o.head}`, title: 'Switch it back on',
      'aria-label': `Switch ${headName(o)} back on`, text: `${headName(o)} ×`, onclick: () => update({ off: state.off.filter((x) => !same(x, o)) }) }));
    if (state.off.length > 1) chips.push(el('button', { type: 'button', class: 'all-on', text: 'All back on', onclick: () => update({ off: [] }) }));
    ui.ablateHeads.replaceChildren(...(chips.length ? [el('span', { text: 'Off:' }), ...chips] : [el('span', { class: 'help', text: 'Every head is on.' })]));
    const current = run?.ablated && JSON.stringify(run.ablated.heads) === JSON.stringify(state.off);
    if (!state.off.length) ui.ablate.replaceChildren();
    else if (current) renderAblationView(ui.ablate, run);
    else ui.ablate.replaceChildren(el('p', { class: 'help', text: 'Computing without those heads…' }));
  }

  /** The head test's result offers the causal test too: a button after its summary. */
  function offerIn(node) {
    const entry = chosen();
    if (!entry || node.hidden) return;
    node.append(' ', el('button', { type: 'button', class: 'test-switch', text: `${toggleLabel(entry)}: does the prediction need it?`, onclick: toggle }));
  }

  return { show, toggle, offerIn };
}
