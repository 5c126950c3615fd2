// The rest of the layer, after its attention, as steps for the followed token (the library's
// trace.block, bindings/ts/attention/block_trace.ts): the attention's output added to the residual
// stream, the norm before the MLP (mean and variance, or RMS, the normalised row, gain and bias),
// the MLP (up and gate projections, the activation, its most active hidden units, the down
// projection), and the MLP's output added to the stream: what leaves the layer. Every number is
// the core's; the norm is also worked out here from its input, and the difference kept as the
// step's self-check (data-check) for tests.
import { el, fmt, svg, tokenLabel } from './dom.js';
import { COL_PREVIEW } from './steps_model.js';

// Hidden units listed in the MLP step, by the size of their activation.
const TOP_UNITS = 8;

/** A family's names for the block's parts (checkpoint names, so a reader can find them). */
function familyNames(type, config) {
  if (type === 'gpt2') return { norm: ['ln_1', 'ln_2'], up: 'mlp.c_fc', down: 'mlp.c_proj', act: config.activation_function ?? 'gelu_new' };
  if (type === 'bert') return { norm: ['attention.output.LayerNorm', 'output.LayerNorm'], up: 'intermediate.dense', down: 'output.dense', act: config.hidden_act ?? 'gelu' };
  if (type === 'bart') return { norm: ['self_attn_layer_norm', 'encoder_attn_layer_norm', 'final_layer_norm'], up: 'fc1', down: 'fc2', act: config.activation_function ?? 'gelu' };
  const gemma = /^gemma/.test(config.model_type ?? '');
  return { norm: ['input_layernorm', gemma ? 'pre_feedforward_layernorm' : 'post_attention_layernorm'], up: 'mlp.up_proj', gate: 'mlp.gate_proj', down: 'mlp.down_proj',
    act: config.hidden_activation ?? config.hidden_act ?? 'silu', sandwich: gemma };
}

const TANH_GELU = ['GELU (tanh form)', 'GELU(u) = ½ u (1 + tanh(√(2/π) (u + 0.044715 u³)))', (u) => 0.5 * u * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (u + 0.044715 * u ** 3)))];
// [name, formula, the function (the gated table's act(gate) column, worked out here)]
const ACTIVATIONS = {
  gelu: ['GELU', 'GELU(u) = u · Φ(u), Φ the standard normal’s distribution function', null],
  gelu_new: TANH_GELU,
  gelu_pytorch_tanh: TANH_GELU,
  silu: ['SiLU', 'SiLU(u) = u · σ(u) = u / (1 + e^(−u))', (u) => u / (1 + Math.exp(-u))],
};

const rowOf = (t, i, cols) => t.subarray(i * cols, (i + 1) * cols);
const length = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const maxDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

/**
 * Steps 'residual', 'blockNorm', 'mlp', 'blockOut' for query token qi. info: the model's (type, config).
 */
export function blockSteps(block, { tokens, qi, info }) {
  if (!block || qi >= block.n) return [];
  const D = block.dModel, F = block.ffnDim, who = `“${tokenLabel(tokens[qi])}”`;
  const names = familyNames(info.type, info.config ?? {});
  const pre = block.layout === 'pre-norm';
  const row = (key, name, values, cols, extra = {}) => ({
    kind: 'matrix', key, name, rows: 1, cols, values, rowLabels: [tokens[qi]], rowIndex: [qi],
    colLabels: Array.from({ length: cols }, (_, c) => String(c + 1)), signed: true, maxCols: COL_PREVIEW, ...extra,
  });
  const op = (text) => ({ kind: 'op', text });
  const r = (t) => rowOf(t, qi, D);
  const ctx = { D, F, who, names, pre, row, op, r, qi };
  return [residualStep(block, ctx), normStep(block, ctx), mlpStep(block, ctx), outputStep(block, ctx)];
}

/** The attention's output joins the stream (a BART decoder: and the cross-attention's, after LN₁). */
function residualStep(block, { D, who, names, pre, row, op, r, first }) {
  const input = r(block.input), attn = r(block.attention), after = r(block.afterAttention);
  const groups = [[row('bInput', pre ? 'h (the stream)' : 'x (the stream)', input, D), op('+'), row('bAttn', 'attention output', attn, D), op('='), row('bAfterAttn', pre ? 'h + attention' : 'x + attention', after, D)]];
  const lengths = [`‖${pre ? 'h' : 'x'}‖ = ${length(input).toFixed(3)}`, `‖attention‖ = ${length(attn).toFixed(3)}`, `‖sum‖ = ${length(after).toFixed(3)}`];
  if (block.cross) {
    // The stream after LN₁ is what the cross-attention read: the sum after it minus its output.
    const cross = r(block.cross), afterCross = r(block.afterCross);
    groups.push([row('bLn1', 'LN₁(sum)', afterCross.map((v, i) => v - cross[i]), D), op('+'), row('bCross', 'cross-attention output', cross, D), op('='),
      row('bAfterCross', 'after cross-attention', afterCross, D)]);
    lengths.push(`‖cross-attention‖ = ${length(cross).toFixed(3)}`);
  }
  return {
    id: 'residual', title: 'Add the attention’s output to the residual stream',
    explain: `The residual stream is the vector of ${who} that every layer reads from and adds to: a layer does not replace it. `
      + (pre ? `This layer read h through its first norm (${names.norm[0]}: X in step 1 is that norm of h); the attention’s output (every head, mixed by W^O) is now added to h itself.`
        : `This model adds the attention’s output to x, the vector the layer read (X in step 1), then normalises the sum (${names.norm[0]}, the next step).`)
      + (block.cross ? ` A decoder layer then adds a second attention, over the encoder’s letters (the cross-attention), and normalises again (${names.norm[1]}).` : '')
      + (names.sandwich ? ' (This model also normalises the attention’s output before adding it: post_attention_layernorm.)' : ''),
    check: maxDiff(after, input.map((x, i) => x + attn[i])),
    groups,
    detail: [{ kind: 'note', text: lengths.join(' · ') + ` (the length of each ${D}-number vector)` },
      strips([[pre ? 'h' : 'x', input], ['attention', attn], ['sum', after]])],
  };
}

/** The norm the MLP's input goes through: worked out from its input row, against the core's output. */
function normStep(block, { D, who, names, pre, row, op, r }) {
  // pre-norm: norms[1] of afterAttention; post-norm: the last norm before the MLP.
  const index = pre ? 1 : block.cross ? 1 : 0;
  const params = block.norms[index];
  const x = Array.from(r(block.cross ? block.afterCross : block.afterAttention));
  const target = r(block.mlpInput);
  const rms = !params.bias;
  const mean = x.reduce((s, v) => s + v, 0) / D;
  const meanSquare = rms ? x.reduce((s, v) => s + v * v, 0) / D : x.reduce((s, v) => s + (v - mean) ** 2, 0) / D;
  const root = Math.sqrt(meanSquare + params.eps);
  const hat = Float32Array.from(x, (v) => (rms ? v : v - mean) / root);
  const y = hat.map((v, i) => v * params.gain[i] + (rms ? 0 : params.bias[i]));
  const name = names.norm[pre ? 1 : block.cross ? 1 : 0];
  const formula = rms ? 'y = x / √(mean(x²) + ε) ⊙ γ' : 'y = (x − μ) / √(σ² + ε) ⊙ γ + β';
  // (ε as the checkpoint writes it: the float32 1e-5 is 0.0000099999997…)
  const eps = Number(params.eps.toPrecision(4)).toExponential();
  const stats = rms ? `mean(x²) = ${meanSquare.toPrecision(5)}, RMS √(mean(x²) + ε) = ${root.toPrecision(5)} (ε = ${eps})`
    : `μ = ${mean.toPrecision(5)}, σ² = ${meanSquare.toPrecision(5)}, √(σ² + ε) = ${root.toPrecision(5)} (ε = ${eps})`;
  const f = (v) => fmt(v, 4), p = (v) => (v < 0 ? `(${f(v)})` : f(v));
  const worked = rms ? `y[1] = ${f(x[0])} / ${root.toFixed(4)} × ${p(params.gain[0])} = ${f(y[0])}`
    : `y[1] = (${f(x[0])} − ${p(mean)}) / ${root.toFixed(4)} × ${p(params.gain[0])} + ${p(params.bias[0])} = ${f(y[0])}`;
  return {
    id: 'blockNorm', title: `${rms ? 'RMSNorm' : 'LayerNorm'} before the MLP: ${formula}`,
    explain: (rms ? `RMSNorm divides the row of ${who} by its root mean square (no mean is subtracted) and multiplies each number by its learned gain γ.`
      : `LayerNorm subtracts the row’s mean μ, divides by its standard deviation √(σ² + ε), then scales each number by its learned gain γ and adds its bias β.`)
      + ` It keeps the MLP’s input at one scale however large the stream has grown (${name}; ε keeps the division safe).`,
    check: maxDiff(y, target),
    terms: [row('nX', pre ? 'x (the stream)' : block.cross ? 'x: after cross-attention' : 'x: x + attention', Float32Array.from(x), D), op(rms ? '÷ RMS =' : '− μ, ÷ √(σ² + ε) ='), row('nHat', 'x̂', hat, D),
      op('⊙'), row('nGain', 'γ (gain)', params.gain, D, { rowLabels: ['γ'] }),
      ...(rms ? [] : [op('+'), row('nBias', 'β (bias)', params.bias, D, { rowLabels: ['β'] })]), op('='), row('nY', 'y: the MLP’s input', target, D)],
    detail: [{ kind: 'note', text: `${stats}. One number worked out: ${worked}; the core’s y[1] is ${f(target[0])}.` }],
  };
}

/** The MLP for the followed token: up (and gate), the activation, its largest hidden units, down. */
function mlpStep(block, { D, F, who, names, row, op, r, qi }) {
  const up = rowOf(block.up, qi, F), act = rowOf(block.activated, qi, F), out = r(block.mlp);
  const gate = block.gate ? rowOf(block.gate, qi, F) : null;
  const [actName, actFormula, actFn] = ACTIVATIONS[names.act] ?? [names.act, '', null];
  const gated = Boolean(gate);
  const kind = gated ? (names.act === 'silu' ? 'SwiGLU' : 'GeGLU') : actName;
  const units = Array.from(act, (v, i) => i).sort((a, b) => Math.abs(act[b]) - Math.abs(act[a])).slice(0, TOP_UNITS);
  const active = act.reduce((c, v) => c + (Math.abs(v) > 1e-3 * Math.abs(act[units[0]]) ? 1 : 0), 0);
  const f = (v) => fmt(v, 4);
  const table = el('div', { class: 'mx-scroll' }, el('table', { class: 'mlp-units' },
    el('thead', {}, el('tr', {}, el('th', { text: 'unit' }), ...(gated ? [el('th', { text: 'gate' }), el('th', { text: `${actName}(gate)` }), el('th', { text: 'up' })] : [el('th', { text: 'up' })]),
      el('th', { class: 'mlp-act', text: gated ? `${actName}(gate) × up` : `${actName}(up)` }))),
    el('tbody', {}, units.map((u) => el('tr', { 'data-unit': u },
      el('th', { scope: 'row', text: String(u + 1) }),
      ...(gated ? [el('td', { text: f(gate[u]) }), el('td', { text: actFn ? f(actFn(gate[u])) : '' }), el('td', { text: f(up[u]) })] : [el('td', { text: f(up[u]) })]),
      el('td', { class: 'mlp-act' }, el('strong', { text: f(act[u]) })))))));
  return {
    id: 'mlp', title: `The MLP: ${gated ? `${names.gate} and ${names.up}, ${kind}, ${names.down}` : `${names.up}, ${actName}, ${names.down}`} (${D} → ${F} → ${D})`,
    explain: (gated ? `Two projections of the normalised row of ${who} to ${F} hidden units: the gate (${names.gate}) goes through ${actName}, then multiplies the up projection (${names.up}) unit by unit; ${names.down} maps the ${F} products back to ${D}. `
      : `The normalised row of ${who} is projected up to ${F} hidden units (${names.up}, with its bias), each goes through ${actName}, and ${names.down} maps them back to ${D}. `)
      + `${actFormula ? `${actFormula}. ` : ''}Each hidden unit adds its value times its row of ${names.down} to the output: the units listed below, the largest for this token, add the most.`,
    groups: [
      gated ? [row('mGate', `gate = y W_gate`, gate, F), row('mUp', 'up = y W_up', up, F)] : [row('mUp', 'up = y W_up + b', up, F)],
      [op(gated ? `${actName}(gate) ⊙ up =` : `${actName}(up) =`), row('mAct', 'hidden units', act, F)],
      [op(`× W_down${gated ? '' : ' + b'} =`), row('mOut', 'MLP output', out, D)],
    ],
    detail: [{ kind: 'note', text: `The ${TOP_UNITS} hidden units with the largest |value| for ${who} (of ${F}; ${active} are above a thousandth of the largest):` },
      { kind: 'node', render: () => table, text: `largest hidden units: ${units.map((u) => `${u + 1}: ${f(act[u])}`).join(', ')}` }],
  };
}

/** The MLP's output joins the stream: what leaves the layer (post-norm: after one more LayerNorm). */
function outputStep(block, { D, who, names, pre, row, op, r }) {
  const base = r(pre ? block.afterAttention : block.mlpInput), mlp = r(block.mlp), after = r(block.afterMlp), out = r(block.output);
  const terms = [row('oBase', pre ? 'h + attention' : 'the stream', base, D), op('+'), row('oMlp', 'MLP output', mlp, D), op('='),
    row(pre ? 'blockOutput' : 'oAfter', pre ? 'the layer’s output' : 'sum', after, D)];
  if (!pre) terms.push(op(`→ ${names.norm[names.norm.length - 1]} →`), row('blockOutput', 'the layer’s output', out, D));
  return {
    id: 'blockOut', title: pre ? 'Add the MLP’s output: the stream leaves the layer' : 'Add the MLP’s output and normalise: the stream leaves the layer',
    explain: `What ${who} carries to the next layer${pre ? '' : ' (after one more LayerNorm, as in the norm step)'}: its vector with this layer’s attention and MLP added in. `
      + `The next layer reads this row${pre ? ' through its own first norm' : ''}; after the last layer it becomes the prediction.`
      + (names.sandwich ? ' (This model normalises the MLP’s output before adding it: post_feedforward_layernorm.)' : ''),
    check: maxDiff(after, base.map((x, i) => x + mlp[i])),
    terms,
    detail: [{ kind: 'note', text: `‖before‖ = ${length(base).toFixed(3)} · ‖MLP output‖ = ${length(mlp).toFixed(3)} · ‖the layer’s output‖ = ${length(out).toFixed(3)}` },
      strips([['before', base], ['MLP', mlp], ['output', out]])],
  };
}

/** Each vector as a strip of bars, one per number (orange up, blue down), to one scale per strip. */
function strips(vectors) {
  return { kind: 'node', render: () => el('div', { class: 'vec-strips' }, vectors.map(([name, v]) => strip(name, v))) };
}

function strip(name, v) {
  const n = v.length, h = 18, maxAbs = Math.max(...Array.from(v, Math.abs), 1e-12);
  let up = '', down = '';
  for (let i = 0; i < n; i++) {
    const bar = (Math.abs(v[i]) / maxAbs) * h;
    if (v[i] >= 0) up += `M${i},${h}v${-bar}h1v${bar}z`; else down += `M${i},${h}v${bar}h1v${-bar}z`;
  }
  const picture = svg('svg', { class: 'vec-strip', viewBox: `0 0 ${n} ${2 * h}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': `${name}: ${n} numbers` },
    svg('path', { d: up, fill: '#d95f02' }), svg('path', { d: down, fill: '#2171b5' }));
  return el('div', { class: 'vec-row' }, el('span', { class: 'vec-name', text: name }), picture);
}
