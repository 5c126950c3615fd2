// What a visitor does in the demo, as steps both the tests (tests/browser/demo*.test.cjs) and the
// timing checks (tests/browser/*.perf.cjs, `npm run check:perf`) drive: the same actions, measured
// for responsiveness in one and for milliseconds in the other.

/** Types `sentence` into the demo key by key (25 ms apart) and waits until its tokens are shown. */
async function typeSentence(page, sentence) {
  await page.fill('#sentence', '');
  await page.locator('#sentence').pressSequentially(sentence, { delay: 25 });
  await page.waitForFunction((s) => {
    const tokens = [...document.querySelectorAll('#tokens .token')].map((b) => b.dataset.token);
    return tokens[0] === '<|endoftext|>' && tokens.slice(1).join('') === s;
  }, sentence, { timeout: 90000 });
}

/** Clicks "Continue the text" and waits until the generation has streamed in and the page is idle. */
async function continueText(page) {
  await page.click('#continue');
  await page.waitForFunction(() => !document.getElementById('continue').hidden && document.getElementById('app').dataset.busy === '0', null, { timeout: 60000 });
}

// A text longer than the model's context: the page cuts it to the context's first tokens.
const LONG = 'The jury said the election was conducted well and thanked the city for the way it ran. '
  + 'The cat sat on the mat because it was tired, and the dog ran across the field after the ball. '
  + 'Prices of stocks fell sharply on Monday as investors sold their shares and the market dropped. '
  + 'A small dog was playing in the yard while the children read their books in the house. '
  + 'The old man walked to the store in the morning and bought bread, milk and a paper for his wife. '
  + 'She said that the new school would open next year, and that the teachers were ready for it. '
  + 'In the evening the family sat down to dinner and talked about the long day at work and at school.';

/**
 * A sentence the demo (`demo` from demo_site.cjs) shows as at most n tokens: the long text, with
 * words cut from its end while the page shows more (for GPT-2's 128-token context, none are).
 */
async function sentenceOfTokens(demo, n) {
  let words = `${LONG} ${LONG}`.split(' ');
  for (;;) {
    const { page } = await demo(`?view=heatmap&s=${encodeURIComponent(words.join(' '))}`);
    const count = await page.$$eval('#tokens .token', (b) => b.length);
    await page.close();
    if (count <= n) return words.join(' ');
    words = words.slice(0, words.length - Math.max(1, Math.floor((count - n) / 2)));
  }
}

/** Clicks `selector` and returns the ms until the frame after it is drawn (DOM, style, layout, paint). */
const msToDrawnFrame = (page, selector) => page.evaluate((selector) => new Promise((resolve) => {
  const t0 = performance.now();
  document.querySelector(selector).click();
  requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - t0), 0));
}), selector);

module.exports = { typeSentence, continueText, sentenceOfTokens, msToDrawnFrame };
