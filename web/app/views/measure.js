// Text width for laying out SVG labels before they are in the document (canvas measureText is
// synchronous and needs no layout pass). Falls back to an average glyph width.
let ctx = null;

export function textWidth(text, fontSize = 13, weight = 400) {
  if (ctx === null) {
    try {
      ctx = (typeof OffscreenCanvas === 'function' ? new OffscreenCanvas(1, 1) : document.createElement('canvas')).getContext('2d');
    } catch {
      ctx = undefined;
    }
  }
  if (!ctx) return text.length * fontSize * 0.6;
  ctx.font = `${weight} ${fontSize}px system-ui, -apple-system, Segoe UI, sans-serif`;
  return ctx.measureText(text).width;
}
