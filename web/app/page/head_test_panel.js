// "Test this head": the button under the pickers and the result over the heatmap. The learner
// re-checks the chosen head's label on the text in front of them (head_test.js).
import { testFor, repeatedWords, runHeadTest, testSummary } from '../head_test.js';
import { viewNamed } from '../views/registry.js';

export function headTestPanel(page, ui, { update }) {
  let testing = null; // the test the learner started ({ kind, model, layer, head })
  let draws = 0;      // induction's draws of random words

  /** Shows the button where the chosen head can be tested, and the running test's result; returns
   * the test (its rows outline the heatmap's cells), or null. */
  function show(data, sel, view) {
    const { run, state } = page, seedMode = page.isSeed, entry = viewNamed(view);
    // Self-attention of a run with ids and no padding (not cross-attention, not a batch row).
    const testable = !seedMode && sel.head !== 'all' && Array.isArray(run.ids) && !data.keyTokens && !run.padding?.some((p) => p)
      && !!testFor(data.headLabel(sel.layer, sel.head));
    ui.testHead.hidden = !testable || !entry.heads;
    const on = testable && testing && testing.model === state.model && testing.layer === sel.layer && testing.head === sel.head;
    if (!on) testing = null;
    const test = on ? runHeadTest(testing.kind, run, data.nHead, sel.layer, sel.head, !!(run.causal ?? page.info.causal)) : null;
    ui.headTest.hidden = !test || !entry.showsTest;
    if (test) {
      ui.headTest.textContent = testSummary(test, data.headLabel(sel.layer, sel.head));
      Object.assign(ui.headTest.dataset, { kind: test.kind, mean: String(test.mean), top: String(test.top),
        rows: JSON.stringify(test.rows.map((r) => [r.query, r.target, r.weight])) });
    }
    return test;
  }

  /** The button: induction gets new random words written twice; both open the heatmap. */
  function start() {
    const { data, sel } = page.last, kind = testFor(data?.headLabel(sel.layer, sel.head));
    if (!kind || page.isSeed) return;
    testing = { kind, model: page.state.model, layer: sel.layer, head: sel.head };
    const change = { view: 'heatmap', query: null };
    if (kind === 'induction') {
      change[page.textKey] = repeatedWords(page.info?.probeWords, ++draws);
      page.blanks.sync(change[page.textKey]);
    }
    update(change);
  }

  return { show, start };
}
