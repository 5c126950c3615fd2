// The GGUF files of a Hub repository, one entry per model file (a split file's shards as one), each
// with the quantization its name says: what a page offers as a quantization picker before it
// loads one (`loadModel('hf:owner/repo/' + entry.file)`). The list comes from the Hub's tree API
// (HubRepo.listFiles: GET {hubUrl}/api/models/{id}/tree/{revision}?recursive=true, not cached).
import { HubRepo, HUB_OPTION_RULES } from './hub.js';
import type { HubOptions, HubPlatform } from './hub.js';
import { ggufShardNames, isGgufName } from '../loading/gguf_files.js';
import { checkOptions, checkString } from '../validate.js';

/** One GGUF model file of a Hub repository. */
export interface HubGgufFile {
  /** Its path in the repository (a split file: its first shard's), for `hf:owner/repo/${file}`. */
  file: string;
  /** The quantization its name says, upper case ('Q4_K_M', 'Q8_0', 'F16', 'IQ4_XS'), or null when it names none. */
  quant: string | null;
  /** Every shard's path, in order ([file] when not split). */
  shards: string[];
  /** false when the quantization names weight types this library does not read (the i-quants
   * IQ*, the ternary TQ*, MXFP4, the repacked Q4_0_4_4 ...); true otherwise (also when unknown). */
  readable: boolean;
}

// A quantization in a file name: a part between '-', '.' or '_' separators (and the ends) such as
// Q4_K_M, q8_0, IQ4_XS, TQ1_0, F16, BF16, MXFP4.
const QUANT = /(?:^|[-._])((?:I|T)?Q\d(?:_[A-Z\d]+)*|B?F16|F32|MXFP4(?:_MOE)?)(?=$|[-._])/gi;
// Quantizations whose files hold weight types the core does not hold (ggml's i-quants, ternary,
// MXFP4, and the ARM-repacked Q4_0 variants).
const UNREADABLE = /^(IQ|TQ|MXFP)|^Q4_0_\d_\d$/;

/**
 * The quantization a GGUF file's name says, upper case, or null: "SmolLM2-135M-Q4_K_M.gguf" ->
 * "Q4_K_M", "qwen2.5-0.5b-instruct-q8_0-00001-of-00002.gguf" -> "Q8_0", "ggml-model-f16.gguf" ->
 * "F16", "model.gguf" -> null. The last such part of the name counts (a folder is ignored).
 */
export function ggufQuantization(file: string): string | null {
  checkString('ggufQuantization', 'file', file);
  const base = file.slice(file.lastIndexOf('/') + 1).replace(/\.gguf$/i, '').replace(/-\d{5}-of-\d{5}$/, '');
  const found = [...base.matchAll(QUANT)];
  return found.length ? found[found.length - 1][1].toUpperCase() : null;
}

/** The entries for a repository's file paths: its .gguf files, shards grouped, vision projectors
 * (mmproj-*.gguf, not a language model of their own) left out, sorted by path. */
export function ggufFilesOf(paths: readonly string[]): HubGgufFile[] {
  const out: HubGgufFile[] = [];
  const seen = new Set<string>();
  for (const path of [...paths].filter(isGgufName).sort()) {
    const base = path.slice(path.lastIndexOf('/') + 1);
    if (/^mmproj/i.test(base) || seen.has(path)) continue;
    const folder = path.slice(0, path.length - base.length);
    let shards: string[];
    try {
      shards = ggufShardNames(base).map((n) => folder + n);
    } catch {
      shards = [path]; // a name that only looks like a shard's
    }
    shards.forEach((s) => seen.add(s));
    const quant = ggufQuantization(path);
    out.push({ file: shards[0], quant, shards, readable: quant === null || !UNREADABLE.test(quant) });
  }
  return out;
}

/** A platform for the listing alone: no cache (the tree API is not cached), no environment defaults. */
const LISTING_PLATFORM: HubPlatform = { environment: () => ({}), openCache: () => null };

/**
 * The GGUF model files of a Hub repository ("owner/name", "owner/name@revision" or "hf:owner/name"),
 * each with the quantization its name says, from the Hub's tree API; [] when it holds none.
 * Options: `hubUrl` (default https://huggingface.co; environment variables are not read here),
 * `accessToken` (gated or private repositories), `revision`, `signal`, `idleTimeout`. Failures are
 * HubErrors, as loadModel's ('not-found' for an unknown repository, 'network', ...).
 *
 * ```ts
 * const files = await listHubGgufFiles('Qwen/Qwen2.5-0.5B-Instruct-GGUF');
 * const pick = files.find((f) => f.quant === 'Q4_K_M') ?? files.find((f) => f.readable);
 * const model = await attn.loadModel(`hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/${pick.file}`);
 * ```
 */
export async function listHubGgufFiles(source: string, options: HubOptions = {}): Promise<HubGgufFile[]> {
  options = checkOptions('listHubGgufFiles', options, HUB_OPTION_RULES);
  checkString('listHubGgufFiles', 'source', source);
  const repo = new HubRepo(source.replace(/^hf:/, ''), { ...options, cache: false }, LISTING_PLATFORM);
  return ggufFilesOf(await repo.listFiles());
}
