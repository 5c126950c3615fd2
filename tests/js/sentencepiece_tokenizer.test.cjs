// HfTokenizer against SentencePiece itself: a small BPE model with byte fallback is trained here
// (as Llama 2's was), its tokenizer.json written as transformers' LlamaConverter writes one
// (tools/tokenizers/sentencepiece_reference.py, with Debian's python3-sentencepiece), and on the
// hard texts the ids and decodings must be SentencePiece's own: its algorithm, not another
// emulation of it, is the reference.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { api } = require('./helpers.cjs');
const { HARD } = require('./hard_texts.cjs');

// SentencePiece has no added tokens inside text: texts with "<s>" are left to llama_tokenizer.test.cjs.
const TEXTS = HARD.filter((t) => !/<\/?s>|<unk>/.test(t));
let out, refs, tok;

beforeAll(() => {
  out = fs.mkdtempSync(path.join(os.tmpdir(), 'sentencepiece-'));
  fs.writeFileSync(path.join(out, 'texts.json'), JSON.stringify(TEXTS));
  const script = path.join(__dirname, '../../tools/tokenizers/sentencepiece_reference.py');
  const run = spawnSync('/usr/bin/python3', [script, out, path.join(out, 'texts.json')], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`sentencepiece_reference.py failed (is python3-sentencepiece installed?):\n${run.stderr}`);
  refs = JSON.parse(fs.readFileSync(path.join(out, 'references.json'), 'utf8'));
  tok = api.HfTokenizer.fromText({ tokenizer: fs.readFileSync(path.join(out, 'tokenizer.json'), 'utf8') });
}, 120_000);
afterAll(() => { if (out) fs.rmSync(out, { recursive: true, force: true }); });

test('every hard text: the ids SentencePiece gives, byte fallback included', () => {
  expect(refs).toHaveLength(TEXTS.length);
  let fellBack = 0;
  for (const r of refs) {
    const ids = tok.encode(r.text, { addSpecialTokens: false });
    expect({ text: r.text, ids }).toEqual({ text: r.text, ids: r.ids });
    fellBack += ids.filter((id) => /^<0x[0-9A-F]{2}>$/.test(tok.idToToken(id))).length;
  }
  expect(fellBack).toBeGreaterThan(20);  // the small vocabulary leaves emoji, CJK and more to bytes
});

test("every hard text: SentencePiece's decoding of its ids", () => {
  for (const r of refs) expect({ text: r.text, decoded: tok.decode(r.ids) }).toEqual({ text: r.text, decoded: r.decoded });
});

test('the BOS of the template, and the ids SentencePiece would add it to', () => {
  const r = refs.find((x) => x.text === 'Hello world');
  expect(tok.encode('Hello world')).toEqual([1, ...r.ids]);
});
