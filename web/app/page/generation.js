// "Continue the text": the worker generates through the model's KV cache and streams each token;
// the sentence grows and every token's run redraws the views with the newest token as the query.
import { showError, setStatusText } from './status.js';

export function textContinuation(page, ui, { client, busy, update, draw }) {
  let generationSeed = 1;

  function start() {
    if (page.generation || page.isSeed || !page.info?.features.generate) return;
    let text = page.state.sentence;
    ui.continueButton.hidden = true;
    ui.stopButton.hidden = false;
    busy(+1);
    page.generation = client.generate({ modelUrl: page.modelUrl, text, maxNewTokens: 30, seed: generationSeed++,
      temperature: page.state.temperature, topK: page.state.topK }, (token) => {
      text += token.text;
      update({ sentence: text, query: 'last' }); // (the newest token, however many the text has)
    });
    page.generation.done.then((r) => {
      if (r && r.finishReason === 'eos') setStatusText('The model ended the text (it predicted <|endoftext|>).');
    }, showError).finally(() => {
      page.generation = null;
      ui.continueButton.hidden = false;
      ui.stopButton.hidden = true;
      draw(); // every line again
      busy(-1);
    });
  }

  ui.continueButton.addEventListener('click', start);
  ui.stopButton.addEventListener('click', () => page.generation?.stop());
}
