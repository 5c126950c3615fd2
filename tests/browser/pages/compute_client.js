// The demo's compute client alone, without the views that draw (demo.test.cjs bundles this into
// the built demo site, beside its worker.js and models/): the plumbing the demo and the widget
// share, on the package's worker protocol. window.phase() loads brown-gpt2, types a sentence one
// keystroke per request in one channel, generates greedily with every token streamed, and stops a
// second generation after its third token; the page's main thread only sends and receives.
import { computeClient } from '../../../web/app/compute_client.js';

const client = computeClient(new URL('worker.js', location.href).href);
const modelUrl = new URL('models/brown-gpt2/', location.href).href;

window.phase = async (text, prompt) => {
  const progress = [];
  const info = await client.request('model', { modelUrl }, null, (p) => progress.push(p));
  const typed = [];
  for (let i = 1; i <= text.length; i++) typed.push(client.request('run', { modelUrl, text: text.slice(0, i), layer: 2, topK: 5 }, 'keys'));
  const runs = await Promise.all(typed);
  const streamed = [];
  const generated = await client.generate({ modelUrl, text: prompt, maxNewTokens: 8, temperature: 0 }, (e) => streamed.push(e.token)).done;
  let heard = 0;
  const second = client.generate({ modelUrl, text: prompt, maxNewTokens: 200, temperature: 0 }, () => { if (++heard === 3) second.stop(); });
  const stopped = await second.done.then((r) => ({ tokens: r.tokens.length }), (e) => ({ error: e.message }));
  const last = runs[runs.length - 1];
  return {
    type: info.type, ran: runs.filter(Boolean).length, requests: runs.length, lastIds: last?.ids, lastLayer: last?.layer,
    lastAttention: last && Array.from(last.attention), generated: generated.tokens, streamed, heard, stopped,
    failure: await client.request('run', { modelUrl: new URL('models/none/', location.href).href, text }).then(() => null, (e) => e.message),
  };
};
window.ready = true;
