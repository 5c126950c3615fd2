// A GGUF model's files: one file, or the shards llama.cpp's gguf-split writes
// (name-00001-of-00003.gguf ...: each a GGUF of its own with some of the tensors; the first holds
// the model's metadata, and every shard says split.no, split.count and split.tensors.count). Read
// from a path, URL, Hub repository, Blob or bytes by the caller's `read`; merged here into one file.
import { AttentionError } from '../errors.js';
import { show } from '../validate.js';
import { parseGguf } from './gguf.js';
import type { GgufFile, GgufTensor } from './gguf.js';
import type { LoadTasks } from './load_tasks.js';

const SPLIT = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/i;

/** Whether a file name or URL path names a GGUF file (a query or fragment aside). */
export function isGgufName(name: string): boolean {
  return /\.gguf$/i.test(name.replace(/[?#].*$/, ''));
}

/** The names of every shard of a split GGUF, in order, from any one's name; [name] when not split. */
export function ggufShardNames(name: string): string[] {
  const m = SPLIT.exec(name);
  if (!m) return [name];
  const count = Number(m[3]);
  if (count < 1 || Number(m[2]) < 1 || Number(m[2]) > count) throw new AttentionError(`GGUF: ${show(name)} is not a shard name (shard ${m[2]} of ${m[3]})`);
  return Array.from({ length: count }, (_, i) => `${m[1]}-${String(i + 1).padStart(5, '0')}-of-${m[3]}.gguf`);
}

/** The shards' files as one: the first's metadata, every shard's tensors (each once). */
export function mergeGgufShards(shards: GgufFile[]): GgufFile {
  if (shards.length === 1 && !shards[0].metadata.has('split.count')) return shards[0];
  const tensors = new Map<string, GgufTensor>();
  shards.forEach((shard, i) => {
    const no = shard.metadata.get('split.no'), count = shard.metadata.get('split.count');
    if (no !== i || count !== shards.length)
      throw new AttentionError(`GGUF: shard ${i + 1} of ${shards.length} says split.no ${show(no)} of split.count ${show(count)} (expected ${i} of ${shards.length})`);
    for (const [name, t] of shard.tensors) {
      if (tensors.has(name)) throw new AttentionError(`GGUF: tensor ${show(name)} is in more than one shard (again in shard ${i + 1})`);
      tensors.set(name, t);
    }
  });
  const total = shards[0].metadata.get('split.tensors.count');
  if (total !== undefined && total !== tensors.size)
    throw new AttentionError(`GGUF: split.tensors.count says ${show(total)} tensors but the ${shards.length} shards hold ${tensors.size}`);
  return { ...shards[0], tensors };
}

/** A GGUF model read by name (every shard, when `name` is one), parsed and merged; each shard's
 * read is one of the load's tasks. */
export async function readGgufFiles(name: string, read: (file: string) => Promise<Uint8Array>, tasks: LoadTasks): Promise<GgufFile> {
  const names = ggufShardNames(name);
  const shards = await Promise.all(names.map((n, i) => tasks.run(async () => {
    const bytes = await read(n);
    try {
      return parseGguf(bytes);
    } catch (e) {
      throw names.length > 1 ? new AttentionError(`${n} (shard ${i + 1} of ${names.length}): ${(e as Error).message}`) : e;
    }
  })));
  return mergeGgufShards(shards);
}

/** Whether bytes begin with GGUF's magic. */
export function isGgufBytes(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x47 && bytes[1] === 0x47 && bytes[2] === 0x55 && bytes[3] === 0x46;
}
