// model-card.html?card=<url of a MODEL_CARD.md on this site>: the card rendered as a page (text
// only, through markdown.js), with a way back to the demo page that linked it. It opens with the
// model's summary (orientation.js, from quality.json beside the card); the file tables come last.
import { renderMarkdown } from './markdown.js';
import { el } from './views/dom.js';
import { renderOrientation } from './orientation.js';

const main = document.getElementById('card');
const params = new URLSearchParams(location.search);

async function show() {
  const url = new URL(params.get('card') ?? '', location.href);
  // Only this site's files: the page is not a viewer for anything on the web.
  if (url.origin !== location.origin || !url.pathname.endsWith('.md')) throw new Error('no model card named (card=models/<name>/MODEL_CARD.md)');
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url.pathname} answers HTTP ${response.status}`);
  // (summary=1: the demo knows the model has a quality.json; no request for one that is not there)
  const [text, quality] = await Promise.all([response.text(), params.get('summary') === '1' ? fetchQuality(url) : null]);
  const page = renderMarkdown(text, url.href);
  moveSectionToEnd(page, 'Files');
  // The summary opens the page, under the card's title: what the model is and how good it is.
  const summary = el('section', { id: 'card-summary', class: 'orientation', 'aria-label': 'What you are looking at' });
  if (quality) renderOrientation(summary, { info: { name: quality.model, quality } });
  const title = page.querySelector('h1');
  if (quality) title ? title.after(summary) : page.prepend(summary);
  main.replaceChildren(page);
  if (title) document.title = `${title.textContent} · attention-wasm`;
}

/** The model's measured quality (quality.json beside its card), or null. */
async function fetchQuality(cardUrl) {
  const response = await fetch(new URL('quality.json', cardUrl)).catch(() => null);
  return response?.ok ? response.json().catch(() => null) : null;
}

/** Moves the card's section titled `name` (its heading and what follows, up to the next heading
 * of that level) to the end: the file tables come after what the model is and how it was made. */
function moveSectionToEnd(root, name) {
  const heading = [...root.querySelectorAll('h2')].find((h) => h.textContent.trim() === name);
  if (!heading) return;
  const parts = [heading];
  for (let n = heading.nextElementSibling; n && n.tagName !== 'H2' && n.tagName !== 'H1'; n = n.nextElementSibling) parts.push(n);
  root.append(...parts);
}

const back = params.get('back');
if (back && new URL(back, location.href).origin === location.origin) document.getElementById('back').href = back;
show().catch((e) => main.replaceChildren(el('p', { class: 'help error', text: `Could not show the model card: ${e.message}` })))
  .finally(() => { main.dataset.ready = '1'; });
