// Chat templates (bindings/ts/models/chat.ts) and model.chat (decoder_model.ts):
// - the real templates of SmolLM2-Instruct, SmolLM3, Qwen2.5-Instruct, Qwen3, Llama 3.2-Instruct,
//   Gemma 3 (it) and Phi-3 / Phi-3.5 (tests/fixtures/chat_templates/, origins in its README)
//   rendered by applyChatTemplate equal what Debian's python3-jinja2 renders in transformers'
//   environment (tools/chat/jinja_reference.py) on the same conversations, with and without
//   add_generation_prompt, tools and template variables; a template's raise_exception is an
//   AttentionError on our side exactly when Python raises;
// - where a model's template comes from: tokenizer_config.json's chat_template (a string, or a
//   list of { name, template }), chat_template.jinja (which wins), a GGUF file's
//   tokenizer.chat_template; none: a named error pointing to the chatTemplate option;
// - model.chat on the shipped brown-llama with a simple template: the prompt ids are the rendered
//   text's tokens, generation stops at the end-of-turn token (eos, or another id of
//   generation_config.json's eos_token_id list), onToken streams the reply, signal aborts it.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawnSync } = require('node:child_process');
const { api, root, load } = require('./helpers.cjs');

const BROWN = path.join(root, 'web/models/brown-llama');
const FIXTURES = path.join(root, 'tests/fixtures/chat_templates');
const REFERENCE = path.join(root, 'tools/chat/jinja_reference.py');
const EOT = 14335;  // brown-llama's <|endoftext|>: bos, eos and the only special token

/** Each fixture with the special tokens its checkpoint's tokenizer_config.json names. */
const TEMPLATES = {
  'smollm2-instruct.jinja': { bos_token: '<|im_start|>', eos_token: '<|im_end|>' },
  'smollm3.jinja': { bos_token: null, eos_token: '<|im_end|>' },
  'qwen2.5-instruct.jinja': { bos_token: null, eos_token: '<|im_end|>' },
  'qwen3.jinja': { bos_token: null, eos_token: '<|im_end|>' },
  'llama-3.2-instruct.jinja': { bos_token: '<|begin_of_text|>', eos_token: '<|eot_id|>' },
  'gemma-3-it.jinja': { bos_token: '<bos>', eos_token: '<eos>' },
  'phi-3-mini-instruct.jinja': { bos_token: '<s>', eos_token: '<|endoftext|>' },
  'phi-3.5-mini-instruct.jinja': { bos_token: '<s>', eos_token: '<|endoftext|>' },
};

const SYSTEM = { role: 'system', content: 'You are a terse assistant. Answer in one sentence.' };
const CONVERSATIONS = {
  'one user turn': [{ role: 'user', content: 'What is attention?' }],
  'system + user': [SYSTEM, { role: 'user', content: 'Name a small language model.' }],
  'system + user + assistant + user': [SYSTEM, { role: 'user', content: 'Hi!' }, { role: 'assistant', content: 'Hello. How can I help?' },
    { role: 'user', content: 'Spell "café" with “quotes”,\n\ttabs and <tags> & a trailing space ' }],
  'user + assistant (ends with the reply)': [{ role: 'user', content: '2 + 2?' }, { role: 'assistant', content: '4' }],
  'an assistant turn with reasoning': [{ role: 'user', content: 'Why?' },
    { role: 'assistant', content: '<think>\nThe user asks why.\n</think>\n\nBecause.' }, { role: 'user', content: 'Thanks' }],
  'non-alternating turns': [{ role: 'user', content: 'One' }, { role: 'user', content: 'Two' }],
};
const TOOLS = [{
  type: 'function',
  function: {
    name: 'get_weather', description: 'The weather in a city.',
    parameters: { type: 'object', properties: { city: { type: 'string', description: 'The city, e.g. Paris' } }, required: ['city'] },
  },
}];
/** Extra cases: tools where the template reads them, and each thinking switch. */
const EXTRA = [
  ...['qwen2.5-instruct.jinja', 'qwen3.jinja', 'llama-3.2-instruct.jinja'].map((t) => ({ template: t, conversation: 'system + user', tools: TOOLS })),
  { template: 'qwen2.5-instruct.jinja', conversation: 'one user turn', tools: TOOLS },
  { template: 'qwen3.jinja', conversation: 'system + user', variables: { enable_thinking: false } },
  { template: 'smollm3.jinja', conversation: 'system + user', variables: { enable_thinking: false } },
  { template: 'smollm3.jinja', conversation: 'system + user + assistant + user', variables: { enable_thinking: false } },
  { template: 'llama-3.2-instruct.jinja', conversation: 'one user turn', variables: { date_string: '26 Jul 2024' } },
];

// strftime_now (SmolLM3, Llama 3.2) reads the clock: both sides read this one (local time).
const NOW_MS = new Date(2026, 1, 3, 9, 5, 7).getTime();

function cases() {
  const out = [];
  for (const template of Object.keys(TEMPLATES))
    for (const conversation of Object.keys(CONVERSATIONS))
      for (const addGenerationPrompt of [false, true]) out.push({ template, conversation, addGenerationPrompt });
  for (const e of EXTRA) for (const addGenerationPrompt of [false, true]) out.push({ ...e, addGenerationPrompt });
  return out;
}

/** Python's renderings of every case, in one run of the reference. */
function pythonRenderings(all) {
  const input = all.map((c) => {
    const tokens = Object.fromEntries(Object.entries(TEMPLATES[c.template]).filter(([, v]) => v !== null));
    return {
      template: fs.readFileSync(path.join(FIXTURES, c.template), 'utf8'), messages: CONVERSATIONS[c.conversation],
      add_generation_prompt: c.addGenerationPrompt, ...tokens, ...(c.tools ? { tools: c.tools } : {}),
      ...(c.variables ? { variables: c.variables } : {}), now: NOW_MS / 1000,
    };
  });
  const run = spawnSync('/usr/bin/python3', [REFERENCE], { input: JSON.stringify(input), encoding: 'utf8', maxBuffer: 1 << 26 });
  if (run.status !== 0) throw new Error(`jinja_reference.py failed (is python3-jinja2 installed? scripts/bootstrap.sh installs it):\n${run.stderr}`);
  return JSON.parse(run.stdout);
}

let mod, brown, dir;
beforeAll(async () => {
  mod = await load('simd');
  brown = await mod.loadModel(BROWN);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-template-'));
});
afterAll(() => {
  brown?.dispose();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('real chat templates: applyChatTemplate equals python3-jinja2 in transformers\' environment', () => {
  const all = cases();
  let expected;
  beforeAll(() => { expected = pythonRenderings(all); });

  test.each(Object.keys(TEMPLATES))('%s', (name) => {
    const template = fs.readFileSync(path.join(FIXTURES, name), 'utf8');
    const tokens = TEMPLATES[name];
    let compared = 0, raised = 0;
    jest.useFakeTimers({ now: NOW_MS, doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'setTimeout', 'clearTimeout',
      'setInterval', 'clearInterval', 'queueMicrotask', 'hrtime', 'performance'] });
    try {
      all.forEach((c, i) => {
        if (c.template !== name) return;
        // The special tokens as the checkpoint's (a null one is not passed, as transformers leaves it out).
        const variables = { ...Object.fromEntries(Object.entries(tokens).filter(([, v]) => v !== null)), ...c.variables };
        const render = () => brown.applyChatTemplate(CONVERSATIONS[c.conversation],
          { chatTemplate: template, addGenerationPrompt: c.addGenerationPrompt, tools: c.tools, variables });
        const label = `${c.conversation}${c.tools ? ' + tools' : ''}${c.variables ? ` ${JSON.stringify(c.variables)}` : ''}, add_generation_prompt=${c.addGenerationPrompt}`;
        if (expected[i].error !== undefined) {
          // Python raised (raise_exception): ours raises too, with the template's message.
          expect(expected[i].error).toMatch(/^TemplateError: /);
          let error;
          try { render(); } catch (e) { error = e; }
          expect({ label, error: error?.name }).toEqual({ label, error: 'AttentionError' });
          expect(error.message).toBe(`applyChatTemplate: the chat template raised: ${expected[i].error.slice('TemplateError: '.length)}`);
          raised++;
        } else {
          expect({ label, text: render() }).toEqual({ label, text: expected[i].text });
          compared++;
        }
      });
    } finally {
      jest.useRealTimers();
    }
    expect(compared).toBeGreaterThanOrEqual(2 * 5);
    // Only Gemma 3's template refuses turns that do not alternate.
    expect(raised).toBe(name === 'gemma-3-it.jinja' ? 2 : 0);
  });

  test('the renderings hold what each format is known by (the comparison is not of empty texts)', () => {
    const text = (template, conversation, addGenerationPrompt) => expected[all.findIndex((c) =>
      c.template === template && c.conversation === conversation && c.addGenerationPrompt === addGenerationPrompt && !c.tools && !c.variables)].text;
    expect(text('smollm2-instruct.jinja', 'one user turn', true)).toBe(
      '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nWhat is attention?<|im_end|>\n<|im_start|>assistant\n');
    expect(text('llama-3.2-instruct.jinja', 'system + user', true)).toContain('Today Date: 03 Feb 2026\n\n');
    expect(text('smollm3.jinja', 'system + user', false)).toContain('Today Date: 03 February 2026\n');
    expect(text('gemma-3-it.jinja', 'system + user', true)).toBe(
      '<bos><start_of_turn>user\nYou are a terse assistant. Answer in one sentence.\n\nName a small language model.<end_of_turn>\n<start_of_turn>model\n');
    expect(text('phi-3-mini-instruct.jinja', 'user + assistant (ends with the reply)', false)).toBe('<|user|>\n2 + 2?<|end|>\n<|assistant|>\n4<|end|>\n<|endoftext|>');
    expect(text('qwen3.jinja', 'an assistant turn with reasoning', true)).toContain('<|im_start|>assistant\nBecause.<|im_end|>');
  });
});

/** brown-llama's folder copied with some files replaced or added. */
function brownWith(name, files) {
  const folder = path.join(dir, name);
  fs.mkdirSync(folder);
  for (const f of fs.readdirSync(BROWN)) fs.copyFileSync(path.join(BROWN, f), path.join(folder, f));
  for (const [f, content] of Object.entries(files)) fs.writeFileSync(path.join(folder, f), typeof content === 'string' ? content : JSON.stringify(content));
  return folder;
}
const tokenizerConfig = () => JSON.parse(fs.readFileSync(path.join(BROWN, 'tokenizer_config.json'), 'utf8'));

const SIMPLE = "{%- for m in messages %}{{ bos_token + m['role'] + ': ' + m['content'] }}{% endfor %}{% if add_generation_prompt %}{{ bos_token }}{% endif %}";
const CONVERSATION = [{ role: 'user', content: 'The jury said it did not know.' }];

describe('where the template comes from', () => {
  test('a model without one: chat and applyChatTemplate throw a named error pointing to the chatTemplate option', async () => {
    for (const call of [() => brown.applyChatTemplate(CONVERSATION), () => brown.chat(CONVERSATION)]) {
      let error;
      try { await call(); } catch (e) { error = e; }
      expect(error).toBeInstanceOf(api.AttentionError);
      expect(error.code).toBe('no-chat-template');
      expect(error.message).toMatch(/has no chat template .*pass one as the chatTemplate option/);
    }
    // With one, the same calls work; a template's own mistakes are named.
    expect(brown.applyChatTemplate(CONVERSATION, { chatTemplate: SIMPLE })).toBe('<|endoftext|>user: The jury said it did not know.');
    expect(() => brown.applyChatTemplate(CONVERSATION, { chatTemplate: '{% for m in messages %}' })).toThrow(/applyChatTemplate: the chat template could not be parsed/);
    expect(() => brown.applyChatTemplate([{ content: 'no role' }], { chatTemplate: SIMPLE })).toThrow(/messages\[0\]\.role must be a string/);
    expect(() => brown.applyChatTemplate(CONVERSATION, { chatTemplate: SIMPLE, addGenerationPrompt: 1 })).toThrow(/addGenerationPrompt/);
  });

  test("tokenizer_config.json's chat_template: a string, or named templates ('default', and 'tool_use' when tools are given)", async () => {
    const one = await mod.loadModel(brownWith('config-string', { 'tokenizer_config.json': { ...tokenizerConfig(), chat_template: SIMPLE } }));
    const named = await mod.loadModel(brownWith('config-list', { 'tokenizer_config.json': { ...tokenizerConfig(), chat_template: [
      { name: 'default', template: "{{ 'D:' + messages[0]['content'] }}" }, { name: 'tool_use', template: "{{ 'T:' + tools[0]['name'] }}" }] } }));
    try {
      expect(one.applyChatTemplate(CONVERSATION, { addGenerationPrompt: true })).toBe('<|endoftext|>user: The jury said it did not know.<|endoftext|>');
      expect(named.applyChatTemplate(CONVERSATION)).toBe('D:The jury said it did not know.');
      expect(named.applyChatTemplate(CONVERSATION, { tools: [{ name: 'search' }] })).toBe('T:search');
      expect(named.applyChatTemplate(CONVERSATION, { chatTemplate: 'tool_use', tools: [{ name: 'x' }] })).toBe('T:x');
      expect(named.applyChatTemplate(CONVERSATION, { chatTemplate: '{{ messages | length }}' })).toBe('1');
    } finally {
      one.dispose();
      named.dispose();
    }
  });

  test("chat_template.jinja beside the files wins over tokenizer_config.json's, as in transformers", async () => {
    const model = await mod.loadModel(brownWith('jinja-file', {
      'tokenizer_config.json': { ...tokenizerConfig(), chat_template: "{{ 'from the config' }}" }, 'chat_template.jinja': `${SIMPLE}\n`,
    }));
    try {
      expect(model.applyChatTemplate(CONVERSATION)).toBe('<|endoftext|>user: The jury said it did not know.');
    } finally {
      model.dispose();
    }
  });

  test("a GGUF file's tokenizer.chat_template", async () => {
    const folder = brownWith('gguf-source', { 'tokenizer_config.json': { ...tokenizerConfig(), chat_template: SIMPLE } });
    const file = path.join(dir, 'brown-chat.gguf');
    writeBrownGguf(file, folder);
    const model = await mod.loadModel(file);
    try {
      expect(model.applyChatTemplate(CONVERSATION, { addGenerationPrompt: true })).toBe('<|endoftext|>user: The jury said it did not know.<|endoftext|>');
      const [a, b] = await Promise.all([model.chat(CONVERSATION, { maxNewTokens: 8 }), brown.chat(CONVERSATION, { maxNewTokens: 8, chatTemplate: SIMPLE })]);
      expect(a.promptTokens).toEqual(b.promptTokens);
    } finally {
      model.dispose();
    }
  });
});

describe('model.chat on brown-llama with a simple template', () => {
  test('the prompt ids are the rendered text tokenized as it is (no BOS added), and the reply ends at the end-of-turn token', async () => {
    const prompt = brown.applyChatTemplate(CONVERSATION, { chatTemplate: SIMPLE, addGenerationPrompt: true });
    const out = await brown.chat(CONVERSATION, { chatTemplate: SIMPLE, maxNewTokens: 100 });
    expect(out.prompt).toBe(prompt);
    expect(out.promptTokens).toEqual(brown.tokenizer.encode(prompt, { addSpecialTokens: false }));
    expect(out.promptTokens[0]).toBe(EOT);
    expect(out.promptTokens.at(-1)).toBe(EOT);
    expect(out.promptTokens.filter((t) => t === EOT)).toHaveLength(2);  // the template's two, none added
    // Greedy: it ended at <|endoftext|> (kept out of tokens and text), which is the argmax after the reply.
    expect(out.finishReason).toBe('eos');
    expect(out.finished).toBe(true);
    expect(out.tokens.length).toBeGreaterThan(0);
    expect(out.tokens).not.toContain(EOT);
    expect(out.text).toBe(brown.tokenizer.decode(out.tokens));
    const run = brown.run([...out.promptTokens, ...out.tokens]);
    const V = brown.config.vocab_size, last = run.logits.subarray(run.logits.length - V);
    expect(last.indexOf(Math.max(...last))).toBe(EOT);
    expect(brown.chatEndIds()).toEqual([EOT]);
  });

  test("another id of generation_config.json's eos_token_id list ends the turn too, greedy and beam search (and generate(), as in transformers)", async () => {
    const first = await brown.chat(CONVERSATION, { chatTemplate: SIMPLE, maxNewTokens: 100 });
    expect(first.tokens.length).toBeGreaterThanOrEqual(3);
    const stopAt = first.tokens[2];  // a token greedy decoding writes third: now an end-of-turn id
    const at = first.tokens.indexOf(stopAt);
    // And one that beam search writes (greedy does not, up to stopAt).
    const beamFirst = await brown.chat(CONVERSATION, { chatTemplate: SIMPLE, maxNewTokens: 30, beams: 3 });
    const beamStop = beamFirst.hypotheses.flatMap((h) => h.tokens).find((t) => !first.tokens.slice(0, at + 1).includes(t));
    expect(beamStop).toBeDefined();
    const model = await mod.loadModel(brownWith('more-ends', { 'generation_config.json': { bos_token_id: EOT, eos_token_id: [EOT, stopAt, beamStop] } }));
    try {
      expect(model.chatEndIds()).toEqual([EOT, stopAt, beamStop]);
      const out = await model.chat(CONVERSATION, { chatTemplate: SIMPLE, maxNewTokens: 100 });
      expect(out.finishReason).toBe('eos');
      expect(out.tokens).toEqual(first.tokens.slice(0, at));
      const plain = await model.generate(first.promptTokens, { maxNewTokens: first.tokens.length });
      expect(plain.finishReason).toBe('eos');
      expect(plain.tokens).toEqual(first.tokens.slice(0, at));
      // Beam search: any of the ids ends a hypothesis, and none is inside one.
      const beam = await model.chat(CONVERSATION, { chatTemplate: SIMPLE, maxNewTokens: 30, beams: 3 });
      expect(beam.finishReason).toBe('eos');
      expect(beam.hypotheses).toHaveLength(3);
      for (const h of beam.hypotheses) expect(h.tokens.filter((t) => [EOT, stopAt, beamStop].includes(t))).toEqual([]);
    } finally {
      model.dispose();
    }
  });

  test('onToken streams the reply: the events are its tokens in order and their texts join to it', async () => {
    const events = [];
    const out = await brown.chat([...CONVERSATION, { role: 'assistant', content: 'He said so.' }, { role: 'user', content: 'Who?' }],
      { chatTemplate: SIMPLE, maxNewTokens: 40, temperature: 0.8, seed: 7, onToken: (e) => events.push(e) });
    expect(out.tokens.length).toBeGreaterThan(0);
    expect(events.map((e) => e.token)).toEqual(out.tokens);
    expect(events.map((e) => e.index)).toEqual(out.tokens.map((_, i) => i));
    expect(events.map((e) => e.text).join('')).toBe(out.text);
    // The same seed, the same reply.
    const again = await brown.chat([...CONVERSATION, { role: 'assistant', content: 'He said so.' }, { role: 'user', content: 'Who?' }],
      { chatTemplate: SIMPLE, maxNewTokens: 40, temperature: 0.8, seed: 7 });
    expect(again.tokens).toEqual(out.tokens);
  });

  test('signal aborts: the reply so far, finishReason "abort"; maxNewTokens and stop bound it as in generate', async () => {
    const controller = new AbortController();
    const out = await brown.chat(CONVERSATION, {
      chatTemplate: SIMPLE, maxNewTokens: 100, signal: controller.signal, onToken: (e) => { if (e.index === 2) controller.abort(); },
    });
    expect(out.finishReason).toBe('abort');
    expect(out.tokens).toHaveLength(3);
    const short = await brown.chat(CONVERSATION, { chatTemplate: SIMPLE, maxNewTokens: 2 });
    expect([short.finishReason, short.tokens.length]).toEqual(['length', 2]);
    const full = await brown.chat(CONVERSATION, { chatTemplate: SIMPLE, maxNewTokens: 100 });
    const word = full.text.trim().split(' ')[1];
    const stopped = await brown.chat(CONVERSATION, { chatTemplate: SIMPLE, maxNewTokens: 100, stop: [word] });
    expect(stopped.finishReason).toBe('stop');
    expect(full.text.startsWith(stopped.text)).toBe(true);
    expect(stopped.text).not.toContain(word);
    await expect(brown.chat(CONVERSATION, { chatTemplate: SIMPLE, prependBos: true })).rejects.toThrow(/prependBos/);
  });
});

/** brown-llama as an F32 GGUF file (llama.cpp's names and Q/K row order), its tokenizer and
 * chat template from `folder` (tests/js/gguf_model_write.mjs, as gguf_load.test.cjs writes it). */
function writeBrownGguf(file, folder) {
  const config = JSON.parse(fs.readFileSync(path.join(BROWN, 'config.json'), 'utf8'));
  const layer = {
    'input_layernorm.weight': 'attn_norm.weight', 'self_attn.q_proj.weight': 'attn_q.weight', 'self_attn.k_proj.weight': 'attn_k.weight',
    'self_attn.v_proj.weight': 'attn_v.weight', 'self_attn.o_proj.weight': 'attn_output.weight', 'post_attention_layernorm.weight': 'ffn_norm.weight',
    'mlp.gate_proj.weight': 'ffn_gate.weight', 'mlp.up_proj.weight': 'ffn_up.weight', 'mlp.down_proj.weight': 'ffn_down.weight',
  };
  const top = { 'model.embed_tokens.weight': 'token_embd.weight', 'model.norm.weight': 'output_norm.weight' };
  const name = (hf) => top[hf] ?? hf.replace(/^model\.layers\.(\d+)\.(.+)$/, (_, l, part) => `blk.${l}.${layer[part]}`);
  const permute = (bytes, heads, rows) => {
    const d = rows / heads, rb = bytes.length / rows, out = new Uint8Array(bytes.length);
    for (let h = 0; h < heads; h++) for (let i = 0; i < d / 2; i++) for (let k = 0; k < 2; k++)
      out.set(bytes.subarray((h * d + k * d / 2 + i) * rb, (h * d + k * d / 2 + i + 1) * rb), (h * d + 2 * i + k) * rb);
    return out;
  };
  const st = api.parseSafetensors(fs.readFileSync(path.join(BROWN, 'model.safetensors')));
  const tensors = [...st.tensors].map(([hf, e]) => {
    let bytes = new Uint8Array(e.toFloat32().buffer.slice(0));
    if (/q_proj\.weight$/.test(hf)) bytes = permute(bytes, config.num_attention_heads, e.shape[0]);
    if (/k_proj\.weight$/.test(hf)) bytes = permute(bytes, config.num_key_value_heads, e.shape[0]);
    return { name: name(hf), dims: [...e.shape].reverse(), type: 0, data: Buffer.from(bytes).toString('base64') };
  });
  execFileSync(process.execPath, [path.join(__dirname, 'gguf_model_write.mjs')], {
    input: JSON.stringify({ file, arch: 'llama', config, folder, shards: 1, tensors }), maxBuffer: 1 << 26,
  });
}
