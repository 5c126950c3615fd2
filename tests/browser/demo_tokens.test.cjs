// What a learner reads in the token strip, and what a tutorial author sees in the console: byte
// pieces never show as "�", and a widget attribute it cannot use is named in a console.warn.
const { demoSite } = require('./demo_site.cjs');

const site = demoSite('web-test-tokens');
const { demo, shot } = site;

/** A chip's text back to its UTF-8 bytes: "<0xF0><0x9F>" pieces are bytes, the rest is text. */
function chipBytes(text) {
  if (/^(<0x[0-9A-F]{2}>)+$/.test(text)) return text.match(/[0-9A-F]{2}/g).map((h) => parseInt(h, 16));
  return [...Buffer.from(text, 'utf8')];
}

for (const [name, width, height] of [['desktop', 1280, 800], ['phone', 390, 844]]) {
  test(`accented letters and emoji never show as � in the token strip (${name})`, async () => {
    const text = 'Café au lait, naïve señor 🙂 👍🏽 über';
    const { page, errors } = await demo(`?s=${encodeURIComponent(text)}`, { width, height });
    const chips = await page.$$eval('#tokens .token', (bs) => bs.map((b) => ({ label: b.textContent, token: b.dataset.token })));
    expect(chips.length).toBeGreaterThan(5);
    for (const c of chips) expect(c.label).not.toContain('\uFFFD');
    // The chips, read back as bytes, are exactly the typed text (after the leading <|endoftext|>).
    const bytes = chips.slice(1).flatMap((c) => chipBytes(c.token));
    expect(Buffer.from(bytes).toString('utf8')).toBe(text);
    await shot(page, `tokens-accents-emoji-${name}`);
    expect(errors).toEqual([]);
    await page.close();
  });
}

// GPT-2's pre-tokenizer: the finest split a byte-level BPE keeps whole (a word with its space, a
// contraction piece, a run of punctuation). tests/js/brown_vocab.test.cjs checks the README's examples.
const PRETOKENIZE = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

for (const [name, width, height] of [['desktop', 1280, 800], ['phone', 390, 844]]) {
  test(`the default sentence reads as whole words in the token strip (${name})`, async () => {
    const { page, errors } = await demo('', { width, height });
    const sentence = await page.$eval('#sentence', (t) => t.value);
    const chips = await page.$$eval('#tokens .token', (bs) => bs.map((b) => ({
      token: b.dataset.token, label: b.textContent, clipped: b.scrollWidth > b.clientWidth + 1,
      inside: b.getBoundingClientRect().right <= document.documentElement.clientWidth + 1,
    })));
    expect(chips[0].token).toBe('<|endoftext|>');
    expect(chips.slice(1).map((c) => c.token)).toEqual(sentence.match(PRETOKENIZE));
    // Shown whole: a word's chip reads "␣word" (the space mark, then the word), none cut off or off screen.
    expect(chips.slice(1).map((c) => c.label)).toEqual(sentence.match(PRETOKENIZE).map((w) => w.replace(/^ /, '␣')));
    expect(chips.filter((c) => c.clipped || !c.inside)).toEqual([]);
    await page.locator('.tokens-head').evaluate((e) => e.scrollIntoView());
    await shot(page, `tokens-default-${name}`, { fullPage: false }); // the screen as a visitor sees it
    expect(errors).toEqual([]);
    await page.close();
  });
}

test('a widget attribute it cannot use is named in a console.warn, with the value used instead', async () => {
  const { page, errors } = await demo('', { page: 'embed-example.html', width: 900 });
  const warnings = [];
  page.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
  await page.evaluate(() => {
    const v = document.createElement('attention-view');
    v.id = 'w-warn';
    for (const [k, val] of Object.entries({ sentence: 'The cat sat', view: 'headz', layer: '9' })) v.setAttribute(k, val);
    document.body.append(v);
  });
  await page.waitForFunction(() => document.getElementById('w-warn').dataset.ready === '1', null, { timeout: 90000 });
  const warned = warnings.join('\n');
  expect(warned).toMatch(/<attention-view>: .*view="headz" is not a view .*: showing heads\./);
  expect(warned).toMatch(/layer="9": layers count from 1 to \d+ here: showing layer \d+\./);
  expect(errors).toEqual([]);
  await page.close();
});
