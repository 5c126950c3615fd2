// Export the current view as SVG or PNG, and the numbers behind it as JSON. The views' SVGs carry
// all their styling as attributes, so the serialized file looks the same outside the page.

/** A standalone SVG document (clone: hidden lines stay hidden, as on screen). */
export function svgText(svgElement) {
  const clone = svgElement.cloneNode(true);
  clone.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  clone.removeAttribute('class');
  clone.removeAttribute('tabindex');
  return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(clone);
}

/** Rasterizes an SVG element at `scale` x its size (less for huge ones: canvases have a size limit). */
export async function svgToPng(svgElement, wanted = 2) {
  const width = Number(svgElement.getAttribute('width')), height = Number(svgElement.getAttribute('height'));
  const scale = Math.min(wanted, 16384 / width, 16384 / height, Math.sqrt(60e6 / (width * height)));
  const image = new Image();
  image.decoding = 'sync';
  image.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(svgText(svgElement));
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = Math.ceil(width * scale);
  canvas.height = Math.ceil(height * scale);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(image, 0, 0, canvas.width, canvas.height);
  return new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('PNG encoding failed'))), 'image/png'));
}

/** Typed arrays -> plain arrays, -Infinity -> "-Infinity" (JSON has no infinities). */
export function jsonText(value) {
  return JSON.stringify(value, (_, v) => {
    if (ArrayBuffer.isView(v)) v = Array.from(v);
    if (Array.isArray(v)) return v.map((x) => (typeof x === 'number' && !Number.isFinite(x) ? String(x) : x));
    if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
    return v;
  }, 1);
}

/** Saves a Blob under `filename` through a temporary link. */
export function download(filename, blob) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** A file name from the view and sentence: attention-heads-the-animal-didn-t.svg */
export function fileName(view, sentence, ext) {
  const slug = sentence.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 40) || 'attention';
  return `attention-${view}-${slug}.${ext}`;
}
