// The tokenizer inside a GGUF file (ggufTokenizer, bindings/ts/tokenizers/gguf_tokenizer.ts):
// tokenizers are written to GGUF files as llama.cpp's converter writes them
// (tools/gguf/tokenizer_metadata.mjs + tools/gguf/gguf_writer.mjs, in a child process: ES modules),
// read back with parseGguf, and must tokenize as the model's own tokenizer does:
//   - brown-llama's byte-level BPE (gpt2): ids and decodings of HfTokenizer on its tokenizer.json,
//     text by text, special tokens included; llama.cpp's 'default' pre-tokenizer on the same vocabulary;
//   - a SentencePiece BPE model trained here (llama: pieces, scores and types as the converter
//     reads them, tools/tokenizers/sentencepiece_reference.py with Debian's python3-sentencepiece):
//     SentencePiece's own ids and decodings;
//   - Llama 3's vocabulary under Llama 3's, Qwen2's and GPT-2's pipelines (llama-bpe, qwen2, gpt-2,
//     from llama_reference.mjs) and SmolLM's (smollm): the ids and decodings of
//     @huggingface/tokenizers / HfTokenizer on the tokenizer.json;
// then hostile metadata, each refused with an AttentionError naming the key.
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { api } = require('./helpers.cjs');
const { HARD } = require('./hard_texts.cjs');
const { llamaReferences } = require('./llama_references.cjs');
const { HOSTILE, fuzz, expectNamed } = require('./fuzz.cjs');

const root = path.resolve(__dirname, '../..');
const brown = path.join(root, 'web/models/brown-llama');
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));

// The child: for each job, the GGUF key-values of a tokenizer (gpt2 from tokenizer.json, llama
// from the dumped SentencePiece vocabulary) written as a GGUF file with no tensors.
const WRITER = `
import { readFileSync } from 'node:fs';
import { gpt2TokenizerMetadata, sentencePieceMetadata } from ${JSON.stringify(path.join(root, 'tools/gguf/tokenizer_metadata.mjs'))};
import { writeGguf } from ${JSON.stringify(path.join(root, 'tools/gguf/gguf_writer.mjs'))};
const read = (f) => (f ? JSON.parse(readFileSync(f, 'utf8')) : undefined);
for (const job of JSON.parse(readFileSync(0, 'utf8'))) {
  const tokenizer = read(job.tokenizer), config = job.config === null ? undefined : { ...read(job.config), ...job.extraConfig };
  const metadata = job.kind === 'gpt2'
    ? gpt2TokenizerMetadata(tokenizer, { config, pre: job.pre })
    : sentencePieceMetadata(read(job.vocab), { tokenizer, config, addSpacePrefix: job.addSpacePrefix });
  writeGguf(job.file, { 'general.architecture': { type: 'string', value: 'llama' }, ...metadata }, []);
}`;

function writeGgufFiles(jobs) {
  execFileSync(process.execPath, ['--input-type=module', '-e', WRITER], { input: JSON.stringify(jobs), encoding: 'utf8', cwd: root, maxBuffer: 1 << 24 });
  return jobs.map((j) => api.parseGguf(new Uint8Array(fs.readFileSync(j.file))));
}

const sameIds = (a, b) => a.length === b.length && a.every((id, i) => id === b[i]);
/** The texts whose ids (or decodings) differ, for a readable failure. */
function differences(texts, encodeA, encodeB) {
  const out = [];
  for (const text of texts) {
    const a = encodeA(text), b = encodeB(text);
    if (!sameIds(a, b)) out.push({ text: text.slice(0, 80), got: a.slice(0, 24), expected: b.slice(0, 24) });
  }
  return out;
}

let dir;
beforeAll(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gguf-tokenizer-')); });
afterAll(() => { if (dir) fs.rmSync(dir, { recursive: true, force: true }); });

describe("brown-llama's tokenizer.json written as a gpt2 GGUF tokenizer", () => {
  const CHAT = "{% for m in messages %}<|endoftext|>{{ m['content'] }}{% endfor %}";
  // The hard texts, and texts with brown-llama's one special token inside.
  const TEXTS = [...HARD, '<|endoftext|>', 'one<|endoftext|>two', ' <|endoftext|> x <|endoftext|><|endoftext|>\n', '<|endoftext |>'];
  let file, defaultPre, gguf, hf;
  beforeAll(() => {
    [file, defaultPre] = writeGgufFiles([
      { kind: 'gpt2', file: path.join(dir, 'brown.gguf'), tokenizer: path.join(brown, 'tokenizer.json'), config: path.join(brown, 'tokenizer_config.json'), extraConfig: { chat_template: CHAT } },
      { kind: 'gpt2', file: path.join(dir, 'brown-default.gguf'), tokenizer: path.join(brown, 'tokenizer.json'), config: path.join(brown, 'tokenizer_config.json'), pre: 'default' },
    ]);
    gguf = api.ggufTokenizer(file.metadata);
    hf = new api.HfTokenizer({ tokenizer: readJson(path.join(brown, 'tokenizer.json')), config: readJson(path.join(brown, 'tokenizer_config.json')) });
  }, 60_000);

  test("the key-values are the converter's: model, pre, tokens with their types, merges, BOS and add_bos, chat template", () => {
    const m = file.metadata, t = file.metadataTypes, json = readJson(path.join(brown, 'tokenizer.json'));
    expect([m.get('tokenizer.ggml.model'), m.get('tokenizer.ggml.pre')]).toEqual(['gpt2', 'gpt-2']);
    expect([t.get('tokenizer.ggml.tokens'), t.get('tokenizer.ggml.token_type'), t.get('tokenizer.ggml.merges')]).toEqual(['array<string>', 'array<i32>', 'array<string>']);
    const tokens = m.get('tokenizer.ggml.tokens'), types = m.get('tokenizer.ggml.token_type');
    expect(tokens).toHaveLength(Object.keys(json.model.vocab).length);
    for (const [token, id] of Object.entries(json.model.vocab)) if (tokens[id] !== token) throw new Error(`token ${id}: ${tokens[id]} vs ${token}`);
    expect(types[14335]).toBe(3);  // <|endoftext|>: control
    expect(Array.from(types).filter((x) => x === 1)).toHaveLength(tokens.length - 1);
    expect(m.get('tokenizer.ggml.merges')).toEqual(json.model.merges.map((x) => (Array.isArray(x) ? x.join(' ') : x)));
    expect([m.get('tokenizer.ggml.bos_token_id'), m.get('tokenizer.ggml.eos_token_id'), m.get('tokenizer.ggml.add_bos_token')]).toEqual([14335, 14335, true]);
    expect(t.get('tokenizer.ggml.bos_token_id')).toBe('u32');
    expect(api.ggufTokenizerInfo(m)).toEqual({
      model: 'gpt2', pre: 'gpt-2', vocabSize: 14336, bosId: 14335, eosId: 14335, eosIds: [14335], unknownId: undefined, paddingId: undefined,
      addBos: true, addEos: false, addSpacePrefix: false, chatTemplate: CHAT,
    });
  });

  test('every text: the ids of HfTokenizer on tokenizer.json, with and without the special tokens', () => {
    expect(differences(TEXTS, (s) => gguf.encode(s), (s) => hf.encode(s))).toEqual([]);
    expect(differences(TEXTS, (s) => gguf.encode(s, { addSpecialTokens: false }), (s) => hf.encode(s, { addSpecialTokens: false }))).toEqual([]);
    expect(gguf.encode('one<|endoftext|>two', { addSpecialTokens: false })).toContain(14335);
    expect(gguf.encode('x')[0]).toBe(14335);
  });

  test('every text: the decodings of HfTokenizer, skipping special tokens or not; the same token strings and BOS / EOS', () => {
    for (const text of TEXTS) {
      const ids = hf.encode(text);
      expect({ text, decoded: gguf.decode(ids) }).toEqual({ text, decoded: hf.decode(ids) });
      expect({ text, decoded: gguf.decode(ids, { skipSpecialTokens: true }) }).toEqual({ text, decoded: hf.decode(ids, { skipSpecialTokens: true }) });
    }
    expect(gguf.vocabSize).toBe(hf.vocabSize);
    for (let id = 0; id < hf.vocabSize; id++) if (gguf.idToToken(id) !== hf.idToToken(id) || gguf.tokenText(id) !== hf.tokenText(id)) throw new Error(`token ${id} differs`);
    expect([gguf.bosId, gguf.eosIds]).toEqual([hf.bosId, hf.eosIds]);
  });

  test("llama.cpp's 'default' pre-tokenizer: punctuation runs, GPT-2's pattern, digit runs, then threes of ASCII digits", () => {
    const tok = api.ggufTokenizer(defaultPre.metadata);
    expect(api.ggufTokenizerInfo(defaultPre.metadata).pre).toBe('default');
    const pieces = (list) => list.flatMap((p) => gguf.encode(p, { addSpecialTokens: false }));
    const cases = [
      ['Hello, world!!! 12345', ['Hello', ',', ' world', '!!!', ' ', '123', '45']],
      // (the apostrophe is punctuation: split off before GPT-2's "'s" could take it)
      ["it's $5+3=8 (ok)", ['it', "'", 's', ' ', '$', '5', '+', '3', '=', '8', ' ', '(', 'ok', ')']],
      ['year 2024.', ['year', ' ', '202', '4', '.']],
    ];
    for (const [text, split] of cases) expect({ text, ids: tok.encode(text, { addSpecialTokens: false }) }).toEqual({ text, ids: pieces(split) });
    // It splits apart what GPT-2's pattern keeps together: the ids differ from the 'gpt-2' file's.
    expect(tok.encode('Hello, world!!! 12345')).not.toEqual(gguf.encode('Hello, world!!! 12345'));
  });
});

describe('a SentencePiece BPE model written as a llama GGUF tokenizer', () => {
  // SentencePiece has no added tokens inside text (see sentencepiece_tokenizer.test.cjs).
  const TEXTS = HARD.filter((t) => !/<\/?s>|<unk>/.test(t));
  let out, refs, vocab, file, noPrefix, tok;
  beforeAll(() => {
    out = path.join(dir, 'spm');
    fs.mkdirSync(out);
    fs.writeFileSync(path.join(out, 'texts.json'), JSON.stringify(TEXTS));
    const run = spawnSync('/usr/bin/python3', [path.join(root, 'tools/tokenizers/sentencepiece_reference.py'), out, path.join(out, 'texts.json')], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`sentencepiece_reference.py failed (is python3-sentencepiece installed?):\n${run.stderr}`);
    refs = readJson(path.join(out, 'references.json'));
    vocab = readJson(path.join(out, 'gguf_vocab.json'));
    const job = { kind: 'llama', tokenizer: path.join(out, 'tokenizer.json'), config: path.join(out, 'tokenizer_config.json'), vocab: path.join(out, 'gguf_vocab.json') };
    [file, noPrefix] = writeGgufFiles([{ ...job, file: path.join(dir, 'spm.gguf') }, { ...job, file: path.join(dir, 'spm-no-prefix.gguf'), addSpacePrefix: false }]);
    tok = api.ggufTokenizer(file.metadata);
  }, 120_000);

  test("the key-values: pieces, scores (f32) and types as the converter reads them, the special ids", () => {
    const m = file.metadata;
    expect([m.get('tokenizer.ggml.model'), m.get('tokenizer.ggml.pre'), file.metadataTypes.get('tokenizer.ggml.scores')]).toEqual(['llama', 'default', 'array<f32>']);
    expect(m.get('tokenizer.ggml.tokens')).toEqual(vocab.tokens);
    expect(Array.from(m.get('tokenizer.ggml.scores'))).toEqual(vocab.scores.map(Math.fround));
    const types = Array.from(m.get('tokenizer.ggml.token_type'));
    expect(types.slice(0, 3)).toEqual([2, 3, 3]);  // <unk> unknown, <s> </s> control
    expect(types.filter((t) => t === 6)).toHaveLength(256);
    const info = api.ggufTokenizerInfo(m);
    expect([info.bosId, info.eosId, info.unknownId, info.addBos, info.addEos, info.addSpacePrefix]).toEqual([1, 2, 0, true, false, true]);
  });

  test('every hard text: the ids SentencePiece gives, byte fallback included, and BOS before them', () => {
    expect(refs).toHaveLength(TEXTS.length);
    const got = refs.map((r) => ({ text: r.text.slice(0, 80), ids: tok.encode(r.text, { addSpecialTokens: false }) }));
    expect(got).toEqual(refs.map((r) => ({ text: r.text.slice(0, 80), ids: r.ids })));
    let fellBack = 0;
    for (const { ids } of got) fellBack += ids.filter((id) => vocab.types[id] === 6).length;
    expect(fellBack).toBeGreaterThan(20);
    for (const r of refs) if (!sameIds(tok.encode(r.text), [1, ...r.ids])) throw new Error(`BOS: ${JSON.stringify(r.text.slice(0, 40))}`);
  });

  test("every hard text: SentencePiece's decoding of its ids", () => {
    for (const r of refs) expect({ text: r.text.slice(0, 80), decoded: tok.decode(r.ids) }).toEqual({ text: r.text.slice(0, 80), decoded: r.decoded });
  });

  test('special tokens inside text, and the same ids as HfTokenizer on the converted tokenizer.json', () => {
    const hf = new api.HfTokenizer({ tokenizer: readJson(path.join(out, 'tokenizer.json')) });
    const texts = [...HARD.filter((t) => t.length < 5000), '<s>Hello</s> world<unk> and <s> again', '</s></s>x'];
    expect(differences(texts, (s) => tok.encode(s), (s) => hf.encode(s))).toEqual([]);
    const ids = tok.encode('<s>Hello</s> world', { addSpecialTokens: false });
    expect([ids[0], ids.includes(2)]).toEqual([1, true]);
    expect(tok.decode(ids, { skipSpecialTokens: true })).toBe(hf.decode(ids, { skipSpecialTokens: true }));
  });

  test('add_space_prefix false: no "▁" put before the text, none taken off by decode', () => {
    const bare = api.ggufTokenizer(noPrefix.metadata);
    expect(api.ggufTokenizerInfo(noPrefix.metadata).addSpacePrefix).toBe(false);
    const json = readJson(path.join(out, 'tokenizer.json'));
    json.normalizer = { type: 'Replace', pattern: { String: ' ' }, content: '▁' };
    json.decoder.decoders = json.decoder.decoders.filter((d) => d.type !== 'Strip');
    const hf = new api.HfTokenizer({ tokenizer: json });
    const texts = TEXTS.filter((t) => t.length < 5000);
    expect(differences(texts, (s) => bare.encode(s), (s) => hf.encode(s))).toEqual([]);
    expect(bare.encode('Hello world', { addSpecialTokens: false })).not.toEqual(tok.encode('Hello world', { addSpecialTokens: false }));
    for (const text of texts) expect(bare.decode(bare.encode(text, { addSpecialTokens: false }))).toBe(hf.decode(hf.encode(text, { addSpecialTokens: false })));
  });
});

describe("Llama 3's vocabulary under Llama 3's, Qwen2's, GPT-2's and SmolLM's pre-tokenizers", () => {
  let out, refs;
  const files = {};
  // Each file's tokenizer, read once (a 128k vocabulary and its merges: seconds each) for the tests that use it.
  const tokenizers = {};
  const tokenizerOf = (name) => (tokenizers[name] ??= api.ggufTokenizer(files[name].metadata));
  beforeAll(() => {
    const shared = llamaReferences();  // read only: the files made here go to `out`
    out = path.join(dir, 'llama');
    fs.mkdirSync(out);
    refs = readJson(path.join(shared, 'references.json'));
    // SmolLM2's own pre-tokenizer: each digit apart, then GPT-2's pattern (llama.cpp's 'smollm').
    const smollm = readJson(path.join(shared, 'smollm2style/tokenizer.json'));
    smollm.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, smollm.pre_tokenizer] };
    fs.mkdirSync(path.join(out, 'smollm'));
    fs.writeFileSync(path.join(out, 'smollm/tokenizer.json'), JSON.stringify(smollm));
    fs.copyFileSync(path.join(shared, 'smollm2style/tokenizer_config.json'), path.join(out, 'smollm/tokenizer_config.json'));
    const names = ['llama3', 'qwen2style', 'smollm2style', 'smollm'];
    const from = (name) => path.join(name === 'smollm' ? out : shared, name);
    const parsed = writeGgufFiles(names.map((name) => ({
      kind: 'gpt2', file: path.join(dir, `${name}.gguf`), tokenizer: path.join(from(name), 'tokenizer.json'), config: path.join(from(name), 'tokenizer_config.json'),
    })));
    names.forEach((name, i) => { files[name] = parsed[i]; });
  }, 180_000);

  test.each([['llama3', 'llama-bpe'], ['qwen2style', 'qwen2'], ['smollm2style', 'gpt-2']])('%s (%s): the ids and decodings of @huggingface/tokenizers on every hard text', (name, pre) => {
    expect(files[name].metadata.get('tokenizer.ggml.pre')).toBe(pre);
    const tok = tokenizerOf(name);
    const got = refs[name].map((r) => ({ text: r.text.slice(0, 80), ids: tok.encode(r.text) }));
    expect(got).toEqual(refs[name].map((r) => ({ text: r.text.slice(0, 80), ids: r.hf })));
    for (const r of refs[name]) expect({ text: r.text.slice(0, 80), decoded: tok.decode(r.hf) }).toEqual({ text: r.text.slice(0, 80), decoded: r.hfDecoded });
  }, 60_000);

  test("smollm: HfTokenizer's ids on the tokenizer.json, digits apart (not GPT-2's runs)", () => {
    expect(files.smollm.metadata.get('tokenizer.ggml.pre')).toBe('smollm');
    const tok = api.ggufTokenizer(files.smollm.metadata);
    const hf = new api.HfTokenizer({ tokenizer: readJson(path.join(out, 'smollm/tokenizer.json')), config: readJson(path.join(out, 'smollm/tokenizer_config.json')) });
    expect(differences(HARD, (s) => tok.encode(s), (s) => hf.encode(s))).toEqual([]);
    const gpt2 = tokenizerOf('smollm2style');
    expect(tok.encode('12345', { addSpecialTokens: false })).toHaveLength(5);
    expect(gpt2.encode('12345', { addSpecialTokens: false }).length).toBeLessThan(5);
  }, 60_000);

  test('Llama 3: BOS from the template (add_bos_token), and ignore_merges as llama.cpp sets it for llama-bpe', () => {
    const info = api.ggufTokenizerInfo(files.llama3.metadata);
    expect([info.bosId, info.eosId, info.addBos]).toEqual([128000, 128001, true]);
    expect(tokenizerOf('llama3').encode('hello')[0]).toBe(128000);
  });
});

describe('hostile metadata: an AttentionError naming the key', () => {
  // A small valid gpt2 tokenizer: bytes "a", "b", "c", " ", merges to "ab", "abc", " abc"; <eos>.
  const BYTE = (ch) => ch === ' ' ? 'Ġ' : ch;
  const TOKENS = ['a', 'b', 'c', BYTE(' '), 'ab', 'abc', `${BYTE(' ')}abc`, '<eos>'];
  const good = () => ({
    'tokenizer.ggml.model': 'gpt2', 'tokenizer.ggml.pre': 'gpt-2', 'tokenizer.ggml.tokens': [...TOKENS],
    'tokenizer.ggml.token_type': Int32Array.from(TOKENS, (t) => (t === '<eos>' ? 3 : 1)),
    'tokenizer.ggml.merges': ['a b', 'ab c', 'Ġ abc'], 'tokenizer.ggml.eos_token_id': 7, 'tokenizer.ggml.bos_token_id': 7,
  });
  const spm = () => ({
    'tokenizer.ggml.model': 'llama', 'tokenizer.ggml.tokens': ['<unk>', '<s>', '</s>', '▁', 'a', 'b', '▁a', '▁ab'],
    'tokenizer.ggml.scores': new Float32Array([0, 0, 0, -5, -6, -7, -1, -2]), 'tokenizer.ggml.token_type': new Int32Array([2, 3, 3, 1, 1, 1, 1, 1]),
  });
  const withKey = (base, key, value) => { const m = base(); if (value === undefined) delete m[key]; else m[key] = value; return m; };

  test('the small tokenizers work, as a Map and as an object', () => {
    const tok = api.ggufTokenizer(new Map(Object.entries(good())));
    expect(tok.encode('abc abc<eos>', { addSpecialTokens: false })).toEqual([5, 6, 7]);
    expect(tok.encode('ab', { addSpecialTokens: true })).toEqual([4]);  // add_bos_token absent: false for gpt-2
    const s = api.ggufTokenizer(spm());
    expect(s.encode('ab a')).toEqual([1, 7, 6]);  // "▁ab" then "▁a"
    expect(s.decode([1, 7, 6])).toBe('<s> ab a');  // (as transformers decodes Llama 2's BOS)
    expect(s.decode([1, 7, 6], { skipSpecialTokens: true })).toBe('ab a');
  });

  test.each([
    ['not metadata', () => 'x', /metadata must be a Map/],
    ['no model', () => withKey(good, 'tokenizer.ggml.model', undefined), /tokenizer\.ggml\.model is missing/],
    ['an unknown model', () => withKey(good, 'tokenizer.ggml.model', 'bert'), /tokenizer\.ggml\.model "bert" is not supported \(supported: gpt2, llama\)/],
    ['tokens not an array', () => withKey(good, 'tokenizer.ggml.tokens', 'abc'), /tokenizer\.ggml\.tokens must be an array of strings/],
    ['a token not a string', () => withKey(good, 'tokenizer.ggml.tokens', ['a', 5]), /tokenizer\.ggml\.tokens must be an array of strings: element 1 is 5/],
    ['no tokens', () => withKey(good, 'tokenizer.ggml.tokens', []), /tokenizer\.ggml\.tokens is empty/],
    ['a token twice', () => withKey(good, 'tokenizer.ggml.tokens', [...TOKENS.slice(0, 7), 'a']), /tokenizer\.ggml\.tokens: "a" is both token 0 and token 7/],
    ['fewer types than tokens', () => withKey(good, 'tokenizer.ggml.token_type', new Int32Array(3)), /tokenizer\.ggml\.token_type has 3 entries, tokenizer\.ggml\.tokens 8/],
    ['a type out of range', () => withKey(good, 'tokenizer.ggml.token_type', new Int32Array([1, 1, 1, 1, 1, 1, 1, 9])), /tokenizer\.ggml\.token_type\[7\] is 9/],
    ['types not numbers', () => withKey(good, 'tokenizer.ggml.token_type', 'x'), /tokenizer\.ggml\.token_type must be an array of integers/],
    ['an unknown pre-tokenizer', () => withKey(good, 'tokenizer.ggml.pre', 'deepseek-llm'), /tokenizer\.ggml\.pre "deepseek-llm" is not supported \(supported: default, gpt-2, .*llama-bpe.*qwen2.*smollm/],
    ['pre not a string', () => withKey(good, 'tokenizer.ggml.pre', 3), /tokenizer\.ggml\.pre must be a string/],
    ['no merges', () => withKey(good, 'tokenizer.ggml.merges', undefined), /tokenizer\.ggml\.merges is missing/],
    ['merges not strings', () => withKey(good, 'tokenizer.ggml.merges', ['a b', 7]), /tokenizer\.ggml\.merges must be an array of strings: element 1 is 7/],
    ['a merge without a space', () => withKey(good, 'tokenizer.ggml.merges', ['ab']), /tokenizer\.ggml\.merges\[0\] "ab" is not two tokens/],
    ['a merge naming a token not in the vocabulary', () => withKey(good, 'tokenizer.ggml.merges', ['a b', 'a z']), /tokenizer\.ggml\.merges\[1\] "a z" names "z", which is not in tokenizer\.ggml\.tokens/],
    ['a merge making a token not in the vocabulary', () => withKey(good, 'tokenizer.ggml.merges', ['b c']), /tokenizer\.ggml\.merges\[0\] "b c" makes "bc", which is not in/],
    ['an id out of range', () => withKey(good, 'tokenizer.ggml.eos_token_id', 8), /tokenizer\.ggml\.eos_token_id 8 is out of range: the vocabulary \(tokenizer\.ggml\.tokens\) has 8 tokens/],
    ['an id not an integer', () => withKey(good, 'tokenizer.ggml.bos_token_id', 1.5), /tokenizer\.ggml\.bos_token_id must be a token id/],
    ['a huge id', () => withKey(good, 'tokenizer.ggml.unknown_token_id', 2n ** 60n), /tokenizer\.ggml\.unknown_token_id must be a token id/],
    ['add_bos_token not a bool', () => withKey(good, 'tokenizer.ggml.add_bos_token', 1), /tokenizer\.ggml\.add_bos_token must be a bool/],
    ['add_bos_token without a BOS', () => ({ ...withKey(good, 'tokenizer.ggml.bos_token_id', undefined), 'tokenizer.ggml.add_bos_token': true }), /add_bos_token is true but tokenizer\.ggml\.bos_token_id is not set/],
    ['a chat template not a string', () => withKey(good, 'tokenizer.chat_template', ['x']), /tokenizer\.chat_template must be a string/],
    ['llama without scores', () => withKey(spm, 'tokenizer.ggml.scores', undefined), /tokenizer\.ggml\.scores is missing/],
    ['fewer scores than tokens', () => withKey(spm, 'tokenizer.ggml.scores', new Float32Array(2)), /tokenizer\.ggml\.scores has 2 entries, tokenizer\.ggml\.tokens 8/],
    ['a score not finite', () => withKey(spm, 'tokenizer.ggml.scores', [0, 0, 0, NaN, 0, 0, 0, 0]), /tokenizer\.ggml\.scores\[3\] is NaN/],
    ['scores not numbers', () => withKey(spm, 'tokenizer.ggml.scores', ['a']), /tokenizer\.ggml\.scores must be an array of numbers/],
    ['a getter that throws', () => Object.defineProperty(good(), 'tokenizer.ggml.tokens', { get() { throw new Error('trap'); }, enumerable: true }), /tokenizer\.ggml\.tokens could not be read/],
  ])('%s', async (_, metadata, pattern) => {
    const m = metadata();
    await expectNamed(() => api.ggufTokenizer(m), pattern);
    // ggufTokenizerInfo checks every key but the merges and the scores, with the same message
    if (!/merges|scores/.test(pattern.source)) await expectNamed(() => api.ggufTokenizerInfo(m), pattern);
    else expect(api.ggufTokenizerInfo(m).vocabSize).toBe(8);
  });

  test('every key set to every hostile value: a tokenizer or an AttentionError, never another error', async () => {
    const keys = [...Object.keys(good()), 'tokenizer.ggml.add_bos_token', 'tokenizer.ggml.add_space_prefix', 'tokenizer.chat_template', 'tokenizer.ggml.padding_token_id'];
    for (const [base, extra] of [[good, []], [spm, ['tokenizer.ggml.scores']]]) {
      for (const key of [...keys, ...extra]) {
        const bad = await fuzz(HOSTILE, (v) => api.ggufTokenizer(withKey(base, key, v)));
        expect({ key, bad }).toEqual({ key, bad: [] });
      }
    }
    expect(await fuzz(HOSTILE, (v) => api.ggufTokenizer(v))).toEqual([]);
  });
});
