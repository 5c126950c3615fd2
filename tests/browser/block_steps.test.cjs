// Issue 37, the rest of the block in the step view: the residual stream, the norm before the MLP and
// the MLP as steps after the attention's, and the neuron view in the QKᵀ step. For a brown-gpt2 and
// a brown-llama sentence, the numbers the page shows are the library's (trace.block, computed here
// in Node on the same text and layer), the norm worked out on the page matches the core's, and the
// neuron view's products add up to the score the QKᵀ step prints. The view still opens on its mask
// step. Screenshots (1280x800 and 390x844): tests/browser/screenshots/block-steps-<model>-<width>.png
// (the norm and MLP steps), neuron-view-<model>-<width>.png.
const path = require('node:path');
const { demoSite, root, shots, expectClose } = require('./demo_site.cjs');

const site = demoSite('web-test-block-steps');
const { demo } = site;
const api = require(path.join(root, 'dist/index.cjs'));
let attn;
const models = {};
beforeAll(async () => {
  attn = await api.loadAttention({ threads: 1 });
  for (const name of ['brown-gpt2', 'brown-llama']) models[name] = await attn.loadModel(path.join(root, 'web/models', name));
});
afterAll(() => Object.values(models).forEach((m) => m.dispose()));

const frame = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

/** The page's sentence, layer (from 0), head (from 0) and followed query. */
const selection = (page) => page.evaluate(() => ({
  text: document.getElementById('sentence').value, layer: Number(document.getElementById('layer').value),
  head: Number(document.getElementById('head').value), query: Number(document.getElementById('query').value),
}));

/** A matrix row's numbers as the page holds them (data-values: the whole row). */
const shownRow = (page, key) => page.$eval(`#steps-body [data-step="${key}"] .mx-row`, (e) => e.dataset.values.split(',').map(Number));

const rowOf = (t, i, cols) => Array.from(t.subarray(i * cols, (i + 1) * cols));

async function checkModel(page, name, run) {
  const sel = await selection(page);
  const r = run(models[name], sel);
  const b = r.trace.block, D = b.dModel, F = b.ffnDim, i = sel.query;
  // The stream, the MLP's input, its hidden units and output, and what leaves the layer: the library's.
  expectClose(await shownRow(page, 'bInput'), rowOf(b.input, i, D), 1e-5, `${name} input`);
  expectClose(await shownRow(page, 'bAfterAttn'), rowOf(b.afterAttention, i, D), 1e-5, `${name} after attention`);
  expectClose(await shownRow(page, 'nY'), rowOf(b.mlpInput, i, D), 1e-5, `${name} MLP input`);
  expectClose(await shownRow(page, 'mAct'), rowOf(b.activated, i, F), 1e-5, `${name} hidden units`);
  expectClose(await shownRow(page, 'mOut'), rowOf(b.mlp, i, D), 1e-5, `${name} MLP output`);
  expectClose(await shownRow(page, 'blockOutput'), rowOf(b.output, i, D), 1e-5, `${name} output`);
  expectClose(await shownRow(page, 'nGain'), Array.from(b.norms[1].gain), 1e-6, `${name} gain`);
  // The norm worked out on the page (float64, from its input row) against the core's output, and the sums.
  const checks = await page.$$eval('#steps-body [data-step-id]', (s) => Object.fromEntries(s.filter((e) => e.dataset.check).map((e) => [e.dataset.stepId, Number(e.dataset.check)])));
  expect(checks.blockNorm).toBeLessThan(1e-4);
  expect(checks.residual).toBeLessThan(1e-5);
  expect(checks.blockOut).toBeLessThan(1e-5);
  // The top hidden unit listed is the largest |value| of the row.
  const top = await page.$eval('#steps-body .mlp-units tbody tr', (tr) => Number(tr.dataset.unit));
  const act = rowOf(b.activated, i, F);
  expect(Math.abs(act[top])).toBe(Math.max(...act.map(Math.abs)));
  return { r, sel };
}

/** The neuron view: its sum, the score it names, and the QKᵀ step's entry for that key (the library's raw score). */
async function checkNeuron(page, r, sel) {
  const n = await page.$eval('#steps-body .neuron', (e) => ({ key: Number(e.dataset.neuronKey), sum: Number(e.dataset.neuronSum), score: Number(e.dataset.neuronScore), bars: e.querySelectorAll('.neuron-bars rect').length }));
  const S = r.tokenTexts.length, H = r.trace.shapes.q[1], dK = r.trace.shapes.q[3];
  const raw = r.trace.rawScores[(sel.head * S + sel.query) * S + n.key];
  expect(n.bars).toBe(dK);
  expect(Math.abs(n.sum - raw)).toBeLessThan(1e-4 * Math.max(1, Math.abs(raw)));
  expect(Math.abs(n.score - raw)).toBeLessThan(1e-5 * Math.max(1, Math.abs(raw)));
  // The score shown in the QKᵀ step for that key is the same number.
  const shown = await page.$eval('#steps-body [data-step="rawScores"] .mx-row', (e) => e.dataset.values.split(',').map(Number));
  expect(Math.abs(shown[n.key] - n.sum)).toBeLessThan(1e-4 * Math.max(1, Math.abs(raw)));
  expect(H).toBeGreaterThan(0);
  // Another key: the view follows the picker.
  const other = n.key === 0 ? 1 : 0;
  await page.selectOption('#steps-body select.neuron-key', { value: String(other) });
  const m = await page.$eval('#steps-body .neuron', (e) => ({ key: Number(e.dataset.neuronKey), sum: Number(e.dataset.neuronSum) }));
  expect(m.key).toBe(other);
  const rawOther = r.trace.rawScores[(sel.head * S + sel.query) * S + other];
  expect(Math.abs(m.sum - rawOther)).toBeLessThan(1e-4 * Math.max(1, Math.abs(rawOther)));
}

const shotOf = async (page, stepId, file) => {
  await page.click(`.steps-bar [data-step-link="${stepId}"]`);  // as a learner jumps to it
  await frame(page);
  await page.screenshot({ path: path.join(shots, `${file}.png`) });
};

describe.each([[1280, 800], [390, 844]])('at %ix%i', (width, height) => {
  test('brown-gpt2: the stream, LayerNorm and MLP steps show the library\'s numbers; the neuron view adds up to the score', async () => {
    const { page, errors } = await demo('?view=steps', { width, height });
    await frame(page);
    // Still opening on the mask.
    expect(await page.$eval('[data-step-id="maskedScores"]', (e) => e.getBoundingClientRect().top)).toBeLessThan(140);
    const ids = await page.$$eval('#steps-body [data-step-id]', (s) => s.map((e) => e.dataset.stepId));
    expect(ids.slice(ids.indexOf('output'))).toEqual(['output', 'residual', 'blockNorm', 'mlp', 'blockOut']);
    const { r, sel } = await checkModel(page, 'brown-gpt2', (m, s) => m.run(s.text, { prependBos: true, traceLayer: s.layer, logitsToKeep: 1 }));
    expect(await page.$eval('[data-step-id="blockNorm"] h3', (e) => e.textContent)).toContain('LayerNorm');
    await shotOf(page, 'blockNorm', `block-steps-gpt2-${width}`);
    await checkNeuron(page, r, sel);
    await shotOf(page, 'rawScores', `neuron-view-gpt2-${width}`);
    expect(errors).toEqual([]);
    await page.close();
  });

  test('brown-llama: RMSNorm and the gated MLP; the neuron view multiplies the rotated query and key', async () => {
    const { page, errors } = await demo('?model=llama&view=steps', { width, height });
    await frame(page);
    const { r, sel } = await checkModel(page, 'brown-llama', (m, s) => m.run(m.tokenizer.encode(s.text), { traceLayer: s.layer, logitsToKeep: 1 }));
    expect(await page.$eval('[data-step-id="blockNorm"] h3', (e) => e.textContent)).toContain('RMSNorm');
    expect(await page.$$eval('#steps-body [data-step="mGate"]', (e) => e.length)).toBe(1);
    await shotOf(page, 'mlp', `block-steps-llama-${width}`);
    await checkNeuron(page, r, sel);
    await shotOf(page, 'rawScores', `neuron-view-llama-${width}`);
    expect(errors).toEqual([]);
    await page.close();
  });
});
