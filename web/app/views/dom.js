// DOM helpers that can only set text and attributes. Every view builds its elements through these,
// so user text (sentences, tokens) can never become markup: there is no innerHTML anywhere.

export const SVG_NS = 'http://www.w3.org/2000/svg';

function apply(node, attrs, children) {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'text') node.textContent = String(value);
    else if (name.startsWith('on') && typeof value === 'function') node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

/** An HTML element: el('div', { class: 'x', text: userText }, ...children). */
export function el(tag, attrs, ...children) {
  return apply(document.createElement(tag), attrs, children);
}

/** An SVG element, same contract as el(). */
export function svg(tag, attrs, ...children) {
  return apply(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** A number as a short string for data attributes (enough digits to check sums to 1e-6). */
export const num = (x) => (Number.isFinite(x) ? Number(x.toPrecision(7)).toString() : String(x));

/** Comma-separated numbers for data-* attributes that tests and scripts read back. */
export const numList = (values) => Array.from(values, num).join(',');

/** Display a token so that spaces and empty tokens are visible ("␣the" rather than " the"). */
export function tokenLabel(text) {
  if (text === '') return '∅';
  return text.replace(/^ /, '␣').replace(/\n/g, '⏎').replace(/\t/g, '⇥');
}

/** Fixed-point with a real minus sign; -Infinity as −∞ (the seeds write -inf). */
export function fmt(x, decimals) {
  if (x === -Infinity) return '−∞';
  if (x === Infinity) return '∞';
  if (Number.isNaN(x)) return 'NaN';
  const s = x.toFixed(decimals);
  // "-0.0000" reads as a sign error; show the zero plainly.
  if (/^-0\.?0*$/.test(s)) return s.slice(1);
  return s.replace('-', '−');
}

// Container widths, measured once and then kept current by a ResizeObserver: reading the layout
// on every draw forces the browser to lay the page out again (tens of ms a draw while text streams).
const widths = new WeakMap();
const resizes = typeof ResizeObserver === 'function'
  ? new ResizeObserver((entries) => { for (const e of entries) widths.set(e.target, e.borderBoxSize?.[0]?.inlineSize ?? e.contentRect.width); })
  : null;

/** Width available to a view: its container's, with a floor so tiny containers still render. */
export function widthOf(container, fallback = 640) {
  let w = widths.get(container);
  if (w === undefined || !resizes) {
    w = container.getBoundingClientRect().width || container.clientWidth;
    if (resizes && w) {
      widths.set(container, w);
      resizes.observe(container);
    }
  }
  return Math.max(260, Math.floor(w || fallback));
}
