// CSS for the views, as a string: the page puts it in a <style>, each <attention-view> in its
// shadow root (where the page's own styles cannot reach).
export const VIEW_CSS = `
.attn-svg { display: block; max-width: 100%; height: auto; }
.attn-svg .tok { cursor: pointer; }
.attn-svg .tok:focus { outline: none; }
.attn-svg .tok:focus-visible { text-decoration: underline; text-decoration-thickness: 2px; }
.attn-svg .thumb { cursor: pointer; }
.attn-svg .thumb:focus { outline: none; }
.attn-svg:focus-visible { outline: 2px solid #0969da; outline-offset: 2px; }
.heat-wrap { position: relative; overflow-x: auto; }
.heat-tip { position: absolute; pointer-events: none; background: #1b1f24; color: #fff; font: 12px/1.3 system-ui, sans-serif;
  padding: 3px 6px; border-radius: 4px; white-space: nowrap; z-index: 2; }
.heat-readout { font: 13px/1.4 system-ui, sans-serif; color: #1b1f24; margin: 6px 0 0; min-height: 1.4em; }

.step { border-top: 1px solid #d0d7de; padding: 10px 0 14px; scroll-margin-top: 48px; }
/* The step bar: every step one click away, in sight while the steps scroll by. */
.steps-bar { position: sticky; top: 0; z-index: 5; display: flex; flex-wrap: wrap; gap: 4px; padding: 6px 0; background: #fff; border-bottom: 1px solid #d0d7de; }
.steps-bar button { font: 12px/1.2 system-ui, sans-serif; border: 1px solid #d0d7de; background: #f6f8fa; border-radius: 12px; padding: 2px 8px 2px 2px; cursor: pointer; white-space: nowrap; }
.steps-bar button:hover { background: #eaeef2; }
.steps-bar .step-num { font-size: 11px; margin-right: 2px; }
.whole-wrap { margin: 4px 0 8px; }
.whole-wrap .attn-svg { width: auto; max-width: 100%; }
.mx-fold > summary { cursor: pointer; font: 600 13px/1.3 system-ui, sans-serif; color: #0969da; padding: 6px 8px; border: 1px dashed #8c959f; border-radius: 4px; background: #f6f8fa; list-style-position: inside; }
.mx-fold[open] > summary { margin-bottom: 4px; }
.mx-fold { max-width: 100%; }
.step h3 { font: 600 15px/1.3 system-ui, sans-serif; margin: 0 0 4px; color: #1b1f24; }
.step-num { display: inline-block; min-width: 1.5em; height: 1.5em; line-height: 1.5em; text-align: center; border-radius: 50%;
  background: #0969da; color: #fff; font-size: 12px; margin-right: 4px; }
.step-explain { font: 13px/1.45 system-ui, sans-serif; color: #424a53; margin: 0 0 8px; max-width: 62em; }
.eq { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 10px; margin: 6px 0; }
.eq .op { font: 18px/1 system-ui, sans-serif; color: #1b1f24; white-space: nowrap; }
.mx { margin: 0; max-width: 100%; }
.mx figcaption { font: 600 13px/1.3 system-ui, sans-serif; color: #1b1f24; margin-bottom: 2px; }
.mx .mx-shape { font-weight: 400; color: #57606a; font-size: 12px; }
.mx-scroll { overflow-x: auto; max-width: 100%; }
/* Fixed row heights (in em, so they follow the font) spare the browser measuring every cell for its row. */
.mx-grid { display: grid; width: max-content; grid-template-rows: auto; grid-auto-rows: 1.8em; position: relative; font: 12.5px/1 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; align-items: center; }
.mx-col { font: 11px/1.2 system-ui, sans-serif; color: #57606a; text-align: center; padding: 0 3px 3px; white-space: nowrap; }
/* Row labels stay in sight while a wide matrix scrolls sideways. */
.mx-row { font: 12px/1 system-ui, sans-serif; color: #1b1f24; text-align: right; padding: 4px 8px 4px 2px; white-space: nowrap;
  position: sticky; left: 0; z-index: 2; background: #fff; align-self: stretch; display: flex; align-items: center; justify-content: flex-end;
  box-shadow: 1px 0 0 #d0d7de; }
/* The corner over the row labels stays too, opaque: column labels scroll under it, never over the labels. */
.mx-corner { position: sticky; left: 0; z-index: 3; background: #fff; align-self: stretch; }
.mx-row-pick { cursor: pointer; }
.mx-row-pick:hover { text-decoration: underline; }
.mx-row.mx-hl { font-weight: 700; }
.mx-c { padding: 4px 6px; text-align: right; white-space: nowrap; }
.mx-c.mx-hl { box-shadow: inset 0 0 0 2px #bf8700; }
.mx-c.mx-hc:not(.mx-hl) { box-shadow: inset 0 -3px 0 #bf8700; }
.mx-sum { color: #57606a; padding-left: 12px; }
.mx-bracket { position: absolute; inset: -2px -3px; pointer-events: none; } /* absolute: spans its grid area without taking cells from auto-placement */
.mx-bracket::before, .mx-bracket::after { content: ''; position: absolute; top: 0; bottom: 0; width: 5px; border: 1.5px solid #1b1f24; }
.mx-bracket::before { left: 0; border-right: none; }
.mx-bracket::after { right: 0; border-left: none; }
.mx-compact .mx-grid { font-size: 11px; grid-auto-rows: 1.6em; }
.mx-compact .mx-c { padding: 2px 4px; }
.mx-compact .mx-row { padding-top: 2px; padding-bottom: 2px; }
.mx-c.mx-masked { font-style: italic; }
.mx-more { font: 12px/1.3 system-ui, sans-serif; margin-top: 4px; border: 1px solid #8c959f; background: #f6f8fa; color: #0969da; border-radius: 4px; padding: 2px 8px; cursor: pointer; }
.mx-more:hover { background: #eaeef2; }
.mx-gap { text-align: center; color: #57606a; }
button.mx-gap-open { font: 600 11px/1.2 system-ui, sans-serif; color: #0969da; background: #f6f8fa; border: 1px solid #8c959f; border-radius: 4px;
  padding: 1px 2px; margin: 0 2px 3px; cursor: pointer; }
.steps-rows { font: 13px/1.45 system-ui, sans-serif; color: #424a53; margin: 0 0 6px; }
.steps-rows-toggle { font-weight: 600; color: #1b1f24; white-space: nowrap; cursor: pointer; }
.mx-in { width: 5.2em; font: 12.5px/1.2 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; text-align: right; padding: 2px 4px;
  border: 1px solid #8c959f; border-radius: 3px; background: #fffbe6; color: #1b1f24; }
.mx-in:focus { outline: 2px solid #0969da; outline-offset: 0; }
.mx-in[aria-invalid="true"] { border-color: #cf222e; background: #ffebe9; }
.mx-shape-only .mx-placeholder { width: 96px; min-height: 44px; max-height: 96px; display: flex; align-items: center; justify-content: center;
  border: 1px dashed #8c959f; background: repeating-linear-gradient(45deg, #f6f8fa, #f6f8fa 6px, #eaeef2 6px, #eaeef2 12px);
  font: 11px/1.3 system-ui, sans-serif; color: #57606a; text-align: center; padding: 4px; overflow-wrap: anywhere; }
.step-detail { font: 13px/1.5 system-ui, sans-serif; color: #1b1f24; }
.step-detail p { margin: 4px 0; }
.dot-line { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; overflow-wrap: anywhere; }
.dot-lhs { color: #57606a; }
/* The neuron view (neuron_view.js) and the residual stream's bar strips (block_steps.js). */
.neuron { border-left: 3px solid #d0d7de; padding-left: 8px; margin: 8px 0; }
.neuron-bars { display: block; }
.neuron-key { font: 13px system-ui, sans-serif; max-width: 14em; }
.vec-strips { display: grid; gap: 2px; max-width: 640px; margin: 4px 0; }
.vec-row { display: grid; grid-template-columns: 6em 1fr; align-items: center; gap: 6px; }
.vec-name { font: 12px/1.2 system-ui, sans-serif; color: #57606a; text-align: right; }
.vec-strip { display: block; width: 100%; height: 28px; background: #f6f8fa; }
.softmax-table, .mlp-units { border-collapse: collapse; font: 12.5px/1.3 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.softmax-table th, .softmax-table td, .mlp-units th, .mlp-units td { padding: 2px 10px; text-align: right; border-bottom: 1px solid #eaeef2; }
.softmax-table thead th, .mlp-units thead th { font: 600 11.5px/1.3 system-ui, sans-serif; color: #57606a; }
.mlp-units .mlp-act { box-shadow: inset 1px 0 0 #d0d7de; }
@media (max-width: 520px) { .mlp-units { font-size: 11px; } .mlp-units th, .mlp-units td { padding: 2px 4px; } }
/* The key stays in sight if a narrow screen scrolls the table sideways; the table is made to fit a
   phone (smaller type below 520 px), so nothing is pinned over its numbers. */
.softmax-table th:first-child { position: sticky; left: 0; background: #fff; text-align: left; box-shadow: inset -1px 0 0 #d0d7de; }
.softmax-table .sm-weight { box-shadow: inset 1px 0 0 #d0d7de; }
.softmax-table tr.sm-masked td, .softmax-table tr.sm-masked th { color: #8c959f; }
.softmax-table tr.sm-masked .sm-weight { background: #eaeef2; }
@media (max-width: 520px) { .softmax-table { font-size: 11px; } .softmax-table th, .softmax-table td { padding: 2px 3px; } .softmax-table thead th { font-size: 10.5px; } }
.fill-words { display: flex; flex-wrap: wrap; gap: 4px; margin: 4px 0 8px; }
.fill-word { font: 14px/1.2 system-ui, sans-serif; border: 1px solid #8c959f; background: #fff; color: #1b1f24; border-radius: 4px; padding: 3px 7px; cursor: pointer; }
.fill-word:hover { background: #f6f8fa; }
.fill-word.fill-mask { background: #0969da; border-color: #0969da; color: #fff; font: 600 12.5px/1.2 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; padding: 4px 7px; }
.fill-title { font: 600 13px/1.3 system-ui, sans-serif; color: #1b1f24; margin: 8px 0 2px; }
.fill-note { font: 13px/1.4 system-ui, sans-serif; color: #57606a; margin: 4px 0; }
.steps-note { font: 13px/1.45 system-ui, sans-serif; background: #fff8c5; border: 1px solid #d4a72c; border-radius: 6px; padding: 8px 10px; }
/* The encoder-decoder's pronunciations: one button per word (page and widget). */
.prons { display: flex; flex-direction: column; gap: 6px; }
.pron { display: grid; grid-template-columns: minmax(5em, auto) 1fr; gap: 2px 10px; text-align: left; padding: 6px 8px;
  border: 1px solid #d0d7de; border-radius: 6px; background: #fff; font: inherit; cursor: pointer; }
.pron.chosen { border-color: #0072B2; background: #eef6fc; }
.pron-word { font-weight: 600; grid-row: span 2; align-self: center; overflow-wrap: anywhere; }
.pron-arpabet { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 13px; }
.pron-ipa { color: #57606a; }
/* The generate view (generate_view.js): its button, the step slider, a step's row as shaded text. */
.gen-bar { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 2px 0 6px; font: 13px/1.4 system-ui, sans-serif; }
.gen-bar button { font: inherit; border: 1px solid #1f883d; background: #1f883d; color: #fff; border-radius: 6px; padding: 3px 12px; cursor: pointer; }
.gen-bar button.gen-stop { border-color: #8c959f; background: #fff; color: #1b1f24; }
.gen-status { color: #57606a; }
.gen-status.error { color: #cf222e; }
.gen-slider-row { display: flex; align-items: center; gap: 8px; font: 600 13px/1.4 system-ui, sans-serif; margin: 4px 0; }
.gen-slider { flex: 1; min-width: 0; }
.gen-step-text { font-weight: 400; white-space: nowrap; min-width: 4.5em; }
.gen-caption { font: 600 14px/1.4 system-ui, sans-serif; color: #1b1f24; margin: 6px 0 4px; overflow-wrap: anywhere; }
.gen-part-title { font: 600 13px/1.3 system-ui, sans-serif; color: #1b1f24; margin: 10px 0 2px; }
.gen-row { display: flex; flex-wrap: wrap; gap: 2px; font: 14px/1.3 system-ui, sans-serif; margin: 4px 0; }
.gen-tok { padding: 1px 3px; border-radius: 3px; border: 1px solid #d0d7de; white-space: pre; max-width: 100%; overflow: hidden; text-overflow: ellipsis; }
.gen-tok.gen-query { outline: 2px solid #bf8700; outline-offset: 0; }
.gen-tok.gen-later { color: #8c959f; border-style: dashed; background: #fff; }
.gen-triangle .whole-row { cursor: pointer; }
.gen-top { font: 12.5px/1.4 system-ui, sans-serif; color: #424a53; margin: 2px 0 6px; overflow-wrap: anywhere; }
/* The token chips (token_chips.js), the page's strip and the widget's tokens="": the query token
   marked; the pieces of one word (word_groups.js) set closer together, with a bracket under the
   word, drawn inside each chip's width so no chip's box grows. (index.html's font warm-up uses
   .token's font.) */
.tokens { display: flex; flex-wrap: wrap; gap: 6px 4px; min-height: 30px; margin: 2px 0 8px; }
.token { font: 13.5px/1.2 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; border: 1px solid #8c959f; background: #fff;
  color: #1b1f24; border-radius: 4px; padding: 3px 6px; cursor: pointer; white-space: pre; }
.token[aria-selected="true"] { background: #fff3bf; border-color: #bf8700; font-weight: 700; }
.token.type-1 { border-style: dashed; background: #f3f0ff; }
.token.pad { color: #6e7781; background: #eaeef2; border-color: #afb8c1; }
.token .type { font: 10px/1 system-ui, sans-serif; color: #57606a; margin-left: 2px; }
.token.piece { position: relative; }
.token.piece-first, .token.piece-middle { margin-right: -3px; }
.token.piece::after { content: ''; position: absolute; left: 0; right: 0; bottom: -5px; border-bottom: 2px solid #8250df; }
.token.piece-first::after { border-left: 2px solid #8250df; height: 4px; }
.token.piece-last::after { border-right: 2px solid #8250df; height: 4px; }
`;
