// model.safetensors.index.json against the shards it names: its weight_map says which shard holds
// each tensor, and a loader that trusts it (as transformers does, opening only the shard named)
// would read another tensor, or none, where the map is wrong. So every tensor the map names must
// be in the shard it names: a tensor in another shard, or in none, is refused by name.
import { AttentionError } from '../errors.js';
import { parseSafetensors } from './safetensors.js';

/** A tensor's name as messages quote it (a hostile index's huge name cut short). */
const quoted = (name: string) => JSON.stringify(name.length > 200 ? `${name.slice(0, 200)}...` : name);

/** Checks `map` (tensor name -> shard file) against the shards read (`names[i]`'s bytes in `shards[i]`). */
export function checkWeightMap(map: Record<string, string>, names: readonly string[], shards: readonly Uint8Array[]): void {
  const holder = new Map<string, string>();
  names.forEach((name, i) => {
    for (const tensor of parseSafetensors(shards[i]).tensors.keys()) holder.set(tensor, name);
  });
  for (const [tensor, named] of Object.entries(map)) {
    const actual = holder.get(tensor);
    if (actual === named) continue;
    throw new AttentionError(actual === undefined
      ? `model.safetensors.index.json: weight_map puts tensor ${quoted(tensor)} in ${named}, but no shard holds it`
      : `model.safetensors.index.json: weight_map puts tensor ${quoted(tensor)} in ${named}, but it is in ${actual}`);
  }
}
