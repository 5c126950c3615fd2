// Text width for laying out SVG labels before they are in the document (canvas measureText is
// synchronous and needs no layout pass). Falls back to an average glyph width.
let ctx = null;
const widths = new Map(); // "weight size text" -> px

export function textWidth(text, fontSize = 13, weight = 400) {
  if (ctx === null) {
    try {
      ctx = (typeof OffscreenCanvas === 'function' ? new OffscreenCanvas(1, 1) : document.createElement('canvas')).getContext('2d');
    } catch {
      ctx = undefined;
    }
  }
  if (!ctx) return text.length * fontSize * 0.6;
  // Views redraw the same tokens many times (every token while text streams): measure each once.
  const key = `${weight} ${fontSize} ${text}`;
  let w = widths.get(key);
  if (w === undefined) {
    if (widths.size > 20000) widths.clear();
    ctx.font = `${weight} ${fontSize}px system-ui, -apple-system, Segoe UI, sans-serif`;
    w = ctx.measureText(text).width;
    widths.set(key, w);
  }
  return w;
}
