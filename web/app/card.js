// model-card.html?card=<url of a MODEL_CARD.md on this site>: the card rendered as a page (text
// only, through markdown.js), with a way back to the demo page that linked it.
import { renderMarkdown } from './markdown.js';
import { el } from './views/dom.js';

const main = document.getElementById('card');
const params = new URLSearchParams(location.search);

async function show() {
  const url = new URL(params.get('card') ?? '', location.href);
  // Only this site's files: the page is not a viewer for anything on the web.
  if (url.origin !== location.origin || !url.pathname.endsWith('.md')) throw new Error('no model card named (card=models/<name>/MODEL_CARD.md)');
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url.pathname} answers HTTP ${response.status}`);
  const text = await response.text();
  main.replaceChildren(renderMarkdown(text, url.href));
  const title = main.querySelector('h1')?.textContent;
  if (title) document.title = `${title} · attention-wasm`;
}

const back = params.get('back');
if (back && new URL(back, location.href).origin === location.origin) document.getElementById('back').href = back;
show().catch((e) => main.replaceChildren(el('p', { class: 'help error', text: `Could not show the model card: ${e.message}` })))
  .finally(() => { main.dataset.ready = '1'; });
