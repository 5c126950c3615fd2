// The widget's optional parts above its picture, as the demo shows them: about="" the "What you are
// looking at" box (orientation.js: the model, its size and data, how good it is, a link to its
// card) and tokens="" the strip of token chips (token_chips.js), the pieces of one word set
// together under one bracket (word_groups.js), byte tokens explained, a click or the arrow keys
// choosing the query token.
import { renderOrientation } from './orientation.js';
import { cardLink } from './info_panel.js';
import { renderTokenChips, listenToChips } from './token_chips.js';
import { continuesWord, byteRuns, byteNote } from './word_groups.js';
import { el } from './views/dom.js';

// The box as the demo draws it, smaller: a widget sits in running text.
export const HEADER_CSS = `
.orientation { border-left: 3px solid #0969da; background: #f3f8ff; border-radius: 0 6px 6px 0; padding: 4px 10px; margin: 0 0 6px; font-size: 13px; }
.orientation h2 { display: inline; font-size: 13px; margin: 0 0.4em 0 0; color: #57606a; font-weight: 600; }
.orientation h2::after { content: ':'; }
.orientation p { margin: 1px 0; }
.orientation p.about { display: inline; }
.orientation a { color: #0969da; }
.orientation .quality { margin-top: 2px; }
.tokens { margin-bottom: 6px; }
/* Hidden parts take no room (the shared .tokens rule's display: flex would override the attribute). */
.orientation[hidden], .tokens[hidden], .bytes-note[hidden] { display: none; }
.bytes-note { color: #57606a; font-size: 12.5px; margin: 0 0 6px; }
`;

export class WidgetHeader {
  /** host: the <attention-view>; pick(i): the token a learner chose in the strip. */
  constructor(host, pick) {
    this.host = host;
    this.about = el('section', { class: 'orientation', 'aria-label': 'What you are looking at', hidden: true });
    this.tokens = el('div', { class: 'tokens', role: 'listbox', 'aria-label': 'Tokens (choose the query token)', 'aria-orientation': 'horizontal', hidden: true });
    this.bytes = el('p', { class: 'bytes-note', hidden: true });
    listenToChips(this.tokens, pick);
  }

  get nodes() {
    return [this.about, this.tokens, this.bytes];
  }

  /**
   * seed: the tutorial's example; info: the worker's model info; modelUrl, cardPage (the demo's
   * model-card.html, or null where the widget has no demo beside it); data, sel: the drawn view's
   * tokens and selection (null for a comparison of sentences); result: the run; text: what was typed.
   */
  show({ seed, info, modelUrl, cardPage, data = null, sel = null, result = null, text = '' }) {
    this.about.hidden = !this.host.hasAttribute('about');
    if (!this.about.hidden) renderOrientation(this.about, seed ? { seed: true } : { info, ...cardLink(info, modelUrl, location.href, cardPage) });
    const strip = this.host.hasAttribute('tokens') && !!data;
    this.tokens.hidden = !strip;
    this.bytes.hidden = true;
    if (!strip) return;
    const showTypes = !seed && !!result?.tokenTypes?.some((t) => t === 1);
    renderTokenChips(this.tokens, data.tokens, { query: sel.query, tokenTypes: seed ? null : result?.tokenTypes, showTypes, padding: seed ? null : result?.padding,
      continues: seed ? null : continuesWord(data.tokens, { type: info.type, text }), byteRuns: byteRuns(data.tokens) });
    this.bytes.textContent = byteNote(data.tokens);
    this.bytes.hidden = !this.bytes.textContent;
  }
}
