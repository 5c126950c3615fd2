// Grouped-query attention in the views: which query heads share one key/value head. A Llama-style
// model's view data carries kvHeadOf (query head -> its K/V head, from the library's kvHeadOf);
// other models' do not, and these draw nothing.
import { svg } from './dom.js';
import { headColor } from './colors.js';

/** " (K/V 2)" after a head's number in pickers and legends; '' for a model without groups. */
export const kvSuffix = (data, h) => (data.kvHeadOf ? ` (K/V ${data.kvHeadOf[h] + 1})` : '');

/** The groups: [{ kv, first, last }] of consecutive query heads reading the same K/V head. */
export function kvGroups(kvHeadOf) {
  const groups = [];
  kvHeadOf.forEach((kv, h) => {
    const last = groups[groups.length - 1];
    if (last && last.kv === kv) last.last = h;
    else groups.push({ kv, first: h, last: h });
  });
  return groups;
}

/** Brackets over the model view's head columns, one per K/V head: "K/V head 1 · heads 1–4".
 * x(h): the left edge of head h's column; size: its width; y: the bracket's line. */
export function kvBrackets(kvHeadOf, { x, size, y }) {
  return kvGroups(kvHeadOf).map(({ kv, first, last }) => {
    const x0 = x(first) + 2, x1 = x(last) + size - 2;
    const heads = first === last ? `head ${first + 1}` : `heads ${first + 1}–${last + 1}`;
    return svg('g', { class: 'kv-group', 'data-kv': kv, 'data-heads': `${first},${last}` },
      svg('title', { text: `Query ${heads} read the same keys and values (K/V head ${kv + 1}); their patterns differ because each has its own queries.` }),
      svg('path', { d: `M${x0},${y + 5}V${y}H${x1}V${y + 5}`, fill: 'none', stroke: '#8250df', 'stroke-width': 1.5 }),
      svg('text', { x: (x0 + x1) / 2, y: y - 4, 'text-anchor': 'middle', 'font-size': 11, fill: '#8250df',
        text: x1 - x0 > 120 ? `K/V head ${kv + 1} · ${heads}` : `K/V ${kv + 1}` }));
  });
}

/** One hue per K/V head (the palette's colour of that K/V head), its query heads in shades from
 * dark to light: in the head view's "all heads", lines of one group share a hue. */
export function groupColors(kvHeadOf) {
  const groups = kvGroups(kvHeadOf);
  return (h) => {
    const g = groups.find((x) => h >= x.first && h <= x.last);
    if (!g || g.first === g.last) return headColor(g ? g.kv : h);
    const t = (h - g.first) / (g.last - g.first); // 0 (first head) .. 1 (last)
    return shade(headColor(g.kv), 0.35 - 0.75 * t);
  };
}

/** #rrggbb darkened (amount > 0, towards black) or lightened (< 0, towards white). */
function shade(hex, amount) {
  const rgb = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  const to = amount > 0 ? 0 : 255, k = Math.abs(amount);
  return `#${rgb.map((c) => Math.round(c + (to - c) * k).toString(16).padStart(2, '0')).join('')}`;
}
