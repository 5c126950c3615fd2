// Colours: one sequential scale for weights and one categorical palette for heads.
//
// Weights use ColorBrewer's "Blues" ramp: lightness falls monotonically from 0 to 1, so it reads
// in greyscale and for the common colour-vision deficiencies, and "no attention" is near-white
// (the background) rather than a strong colour. Heads use Okabe-Ito hues first (distinguishable
// for deuteranopes), without its yellow, which vanishes on white.

const BLUES = ['#f7fbff', '#deebf7', '#c6dbef', '#9ecae1', '#6baed6', '#4292c6', '#2171b5', '#08519c', '#08306b'];
const STOPS = BLUES.map((hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)));

export const MASKED_FILL = '#d9d9d9';

export const MASKED_RGB = [217, 217, 217];

/** Weight in [0, 1] -> [r, g, b] on the sequential scale (values outside are clamped). */
export function weightRgb(w) {
  const t = Math.min(1, Math.max(0, Number.isFinite(w) ? w : 0)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(t));
  const f = t - i;
  return STOPS[i].map((a, k) => Math.round(a + (STOPS[i + 1][k] - a) * f));
}

/** Weight in [0, 1] -> CSS colour on the sequential scale. */
export function weightColor(w) {
  const c = weightRgb(w);
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

/** Text colour that stays readable on weightColor(w). */
export function textOn(w) {
  return w > 0.45 ? '#ffffff' : '#08203f';
}

const HEADS = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#7f3c8d', '#3c3c3c',
  '#a05d00', '#11a579', '#e73f74', '#5d69b1'];

/** Colour of head h (0-based); cycles past 12 heads. */
export function headColor(h) {
  return HEADS[h % HEADS.length];
}

/** Colours for a diverging signed matrix (Q, K, V, scores): blue negative, orange positive. */
export function signedColor(x, maxAbs) {
  if (!Number.isFinite(x)) return MASKED_FILL;
  const t = maxAbs > 0 ? Math.min(1, Math.abs(x) / maxAbs) : 0;
  const [r, g, b] = x < 0 ? [33, 113, 181] : [217, 95, 2];
  // Blend with white: a light tint keeps the numbers on top readable.
  const mix = (c) => Math.round(255 + (c - 255) * t * 0.45);
  return `rgb(${mix(r)},${mix(g)},${mix(b)})`;
}
