# Trains a small SentencePiece BPE model with byte fallback (as Llama 2's was trained), writes its
# tokenizer.json as transformers' LlamaConverter does (merges made from the vocabulary, ordered by
# score), and SentencePiece's own encodings and decodings of the texts given: the reference of
# tests/js/sentencepiece_tokenizer.test.cjs; also the pieces, scores and types llama.cpp's converter
# writes to a GGUF file (gguf_vocab.json, for tests/js/gguf_tokenizer.test.cjs). Needs Debian's python3-sentencepiece.
#   /usr/bin/python3 tools/tokenizers/sentencepiece_reference.py <out dir> <texts.json>
import glob, json, os, sys
import sentencepiece as spm

out, texts_file = sys.argv[1], sys.argv[2]
os.chdir(out)
corpus = ''
for f in sorted(glob.glob('/usr/share/common-licenses/*')):
    if os.path.isfile(f): corpus += open(f, encoding='utf-8', errors='replace').read()
corpus += '東京は日本の首都です。中文测试：你好，世界！ Café naïve façade — Ångström, Zürich, résumé\n' * 20
open('corpus.txt', 'w', encoding='utf-8').write(corpus)
spm.SentencePieceTrainer.train(input='corpus.txt', model_prefix='m', vocab_size=2000, model_type='bpe', byte_fallback=True,
    character_coverage=0.9995, split_digits=True, allow_whitespace_only_pieces=True, remove_extra_whitespaces=False,
    normalization_rule_name='identity', unk_id=0, bos_id=1, eos_id=2, pad_id=-1, max_sentence_length=100000,
    num_threads=1, minloglevel=2)
sp = spm.SentencePieceProcessor(model_file='m.model')
vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
scores = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
merges = []
for piece, score in scores:
    local = [(piece[:k], piece[k:], score) for k in range(1, len(piece)) if piece[:k] in vocab and piece[k:] in vocab]
    local.sort(key=lambda x: (vocab[x[0]], vocab[x[1]]))
    merges.extend(local)
merges.sort(key=lambda v: v[2], reverse=True)
tok = {
  'version': '1.0', 'truncation': None, 'padding': None,
  'added_tokens': [{'id': i, 'content': c, 'single_word': False, 'lstrip': False, 'rstrip': False, 'normalized': False, 'special': True} for i, c in [(0, '<unk>'), (1, '<s>'), (2, '</s>')]],
  'normalizer': {'type': 'Sequence', 'normalizers': [{'type': 'Prepend', 'prepend': '▁'}, {'type': 'Replace', 'pattern': {'String': ' '}, 'content': '▁'}]},
  'pre_tokenizer': None,
  'post_processor': {'type': 'TemplateProcessing', 'single': [{'SpecialToken': {'id': '<s>', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}], 'special_tokens': {'<s>': {'id': '<s>', 'ids': [1], 'tokens': ['<s>']}}},
  'decoder': {'type': 'Sequence', 'decoders': [{'type': 'Replace', 'pattern': {'String': '▁'}, 'content': ' '}, {'type': 'ByteFallback'}, {'type': 'Fuse'}, {'type': 'Strip', 'content': ' ', 'start': 1, 'stop': 0}]},
  'model': {'type': 'BPE', 'dropout': None, 'unk_token': '<unk>', 'continuing_subword_prefix': None, 'end_of_word_suffix': None, 'fuse_unk': True, 'byte_fallback': True, 'vocab': vocab, 'merges': [f'{a} {b}' for a, b, _ in merges]},
}
json.dump(tok, open('tokenizer.json', 'w', encoding='utf-8'), ensure_ascii=False)
json.dump({'add_bos_token': True, 'add_eos_token': False, 'bos_token': '<s>', 'eos_token': '</s>', 'unk_token': '<unk>', 'clean_up_tokenization_spaces': False},
          open('tokenizer_config.json', 'w', encoding='utf-8'))
# The pieces, scores and token types as llama.cpp's converter (_create_vocab_sentencepiece) reads
# them from the model: 1 normal, 2 unknown, 3 control, 5 unused, 6 byte (gguf_tokenizer.test.cjs).
def piece_type(i):
    if sp.is_unknown(i): return 2
    if sp.is_control(i): return 3
    if sp.is_unused(i): return 5
    if sp.is_byte(i): return 6
    return 1
n = sp.get_piece_size()
json.dump({'tokens': [sp.id_to_piece(i) for i in range(n)], 'scores': [sp.get_score(i) for i in range(n)], 'types': [piece_type(i) for i in range(n)]},
          open('gguf_vocab.json', 'w', encoding='utf-8'), ensure_ascii=False)
texts = json.load(open(texts_file, encoding='utf-8'))
json.dump([{'text': t, 'ids': sp.encode(t), 'decoded': sp.decode(sp.encode(t))} for t in texts], open('references.json', 'w', encoding='utf-8'), ensure_ascii=False)
