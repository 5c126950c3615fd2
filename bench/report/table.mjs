// Plain-text tables and number formatting shared by the bench's reports. Browser-safe.

/** A number with 2 (or `digits`) decimals below 100, 1 below 1000, none above; '-' when missing. */
export const fmt = (x, digits = 2) => (x == null || !Number.isFinite(x) ? '-' : x >= 1000 ? x.toFixed(0) : x >= 100 ? x.toFixed(1) : x.toFixed(digits));

/** Aligned columns under a header and a rule; columns listed in rightAlign are right-aligned. */
export function table(header, rows, rightAlign = []) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (r) => r.map((c, i) => (rightAlign.includes(i) ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
