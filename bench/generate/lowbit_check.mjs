// The generate workload's check of our f16, q8 and q4 engines against PyTorch on the same weights
// (lowbit_reference.py: weights rounded to f16, or Q8_0 / Q4_0 with activations quantized per block
// as the core does, in float64): the 64 greedy tokens equal, or where they first part our token's
// logit was, in the reference, within twice the dtype's logit error of the top; and the prompt's
// logits within that error. Node only.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { ensureExport } from '../common/pytorch_export.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const LOWBIT_DIR = `${ROOT}build/bench-generate-lowbit`;

/**
 * The largest |difference| our prompt logits may have from the reference's, per dtype checked.
 * f16: float32 rounding (measured 3.3e-5 at 1 and 2 threads; the reference itself run in float32
 * instead of float64 moves them 1.9e-5). q8: float32 rounding plus the activation codes it rounds
 * the other way near a tie (a few hundred of the prefill's 4M quantized values), which these random
 * weights amplify through 12 layers: measured 0.096 (rms 0.023), the reference in float32 0.10 (rms
 * 0.023); Q8_0 weights with float activations are 0.29 away, f16 weights 0.44. q4 likewise:
 * measured 0.080 (rms 0.019), the reference in float32 0.075 (rms 0.020); Q4_0 weights with float
 * activations 0.26 away. Where our tokens first part, our token's logit was below the reference's
 * chosen one by at most twice this (each of the two logits off by at most the bound), or the engine
 * computes something else.
 */
export const LOWBIT_LOGIT_ERROR = { f16: 2e-4, q8: 0.15, q4: 0.15 };

/** { f16, q8, q4 }: lowbit_reference.py's output per dtype (made once, cached), or { skip } and why. */
export function lowbitReferences(sourceDir, sourceKey) {
  const dtypes = Object.keys(LOWBIT_LOGIT_ERROR);
  // The quantizer's digest is an argument so that a change to it remakes the references too.
  const quantizer = createHash('sha256').update(readFileSync(`${ROOT}tests/fixtures/lowbit_quant.py`)).digest('hex').slice(0, 16);
  const made = ensureExport('generate low-bit reference', `${ROOT}bench/generate/lowbit_reference.py`, LOWBIT_DIR,
    { source: sourceDir, 'source-key': sourceKey, dtypes: dtypes.join(','), quantizer });
  if (made.skip) {
    console.log(`generate: f16, q8 and q4 are compared with float32 PyTorch only (no reference on their weights: ${made.skip})`);
    return { skip: made.skip };
  }
  return Object.fromEntries(dtypes.map((d) => [d, JSON.parse(readFileSync(`${LOWBIT_DIR}/${d}.json`, 'utf8'))]));
}

/**
 * The agreement of an engine's tokens `out` with the reference `ref` of its dtype. logits: our
 * prompt logits' distance from the reference's ({ maxAbs, rms }); float: the same engine's
 * agreement with float32 PyTorch, kept for the table.
 */
export function lowbitAgreement(wl, ref, out, { logits, float }) {
  const bound = LOWBIT_LOGIT_ERROR[ref.dtype];
  const same = leading(ref.ids, out);
  // The reference run in float32: where float32's rounding alone parts it, and how long ours follows it.
  const float32Run = ref.float32 ? { value: leading(ref.ids, ref.float32.ids), ours: leading(ref.float32.ids, out) } : null;
  const complete = out?.length === wl.newTokens;
  const parts = same < ref.ids.length && same < (out?.length ?? 0) ? divergence(ref, same, out[same]) : null;
  const logitsOk = logits != null && logits.maxAbs <= bound;
  const tokensOk = same === ref.ids.length || (parts?.gap != null && parts.gap <= 2 * bound);
  const ok = complete && logitsOk && tokensOk;
  const why = ok ? null : !complete ? `generated ${out?.length ?? 0} of ${wl.newTokens} tokens (stopped at end-of-text)`
    : !logitsOk ? `prompt logits ${logits ? `${logits.maxAbs.toExponential(2)}` : '(none)'} from PyTorch's on the same ${ref.dtype} weights (bound ${bound})`
    : `tokens part from PyTorch's on the same ${ref.dtype} weights at step ${parts.step} onto a token ${parts.gap == null ? `not among its top ${ref.top_ids[parts.step].length}` : `${parts.gap.toExponential(2)} below its top`} (bound ${2 * bound})`;
  return { kind: 'tokens', against: `pytorch-${ref.dtype}`, lowbit: ref.dtype, value: same, tolerance: `${ref.ids.length} or a flip within ${2 * bound}`,
    bound, lossy: false, complete, parts, ok, why, maxAbsDiff: ok ? 0 : Infinity, logits, float, float32Run };
}

/** Leading ids of a and b that are equal. */
function leading(a, b) {
  let n = 0;
  while (n < a.length && n < (b?.length ?? 0) && a[n] === b[n]) n++;
  return n;
}

/** Where our token `got` replaced the reference's at `step`: its rank and gap below the top there (null: below the kept ones). */
function divergence(ref, step, got) {
  const rank = ref.top_ids[step].indexOf(got);
  return { step, got, expected: ref.ids[step], second: ref.second[step], margin: ref.margin[step], rank: rank >= 0 ? rank + 1 : null,
    gap: rank >= 0 ? ref.top_logits[step][0] - ref.top_logits[step][rank] : null };
}

/** One line: '64/64 = PyTorch f16 (float32 PyTorch: 30/64)' or where and how it parts. */
export function lowbitAgreementText(a, newTokens) {
  const vsFloat = a.float ? ` (float32 PyTorch: ${a.float.value}/${newTokens})` : '';
  if (a.value === newTokens) return `${newTokens}/${newTokens} = PyTorch ${a.lowbit}${vsFloat}`;
  const p = a.parts;
  const place = p.rank == null ? 'not in its top 8' : `its #${p.rank}, ${p.gap.toFixed(3)} below`;
  const run = a.float32Run ? `; PyTorch ${a.lowbit} in float32: ${a.float32Run.value}/${newTokens}, ours = its first ${a.float32Run.ours}` : '';
  return `${a.value}/${newTokens} = PyTorch ${a.lowbit}; step ${p.step}: ${p.got} (${place}; bound ${2 * a.bound}) vs ${p.expected}, top-2 margin ${p.margin.toFixed(3)}${run}${vsFloat}`;
}
