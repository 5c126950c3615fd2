// What a model file's bytes must be before anything uses or caches them: JSON files parse (and
// config.json is an object), merges.txt has two symbols a line, a safetensors file has a valid
// header whose data ends where the file ends, and no file is an HTML page (what a static server
// or a bundler's dev server answers for a file it does not have). Each error names the file's
// full URL or path, so a wrong folder URL says so instead of "Unexpected token '<'".
import { AttentionError } from '../errors.js';
import { parseSafetensors } from './safetensors.js';
import { parseGguf } from './gguf.js';
import { checkTokenizerFileSize, TOKENIZER_FILES } from '../tokenizers/tokenizer_checks.js';

// The parsed JSON of bytes already checked: readModelFiles reads what the Hub client checked
// before caching, without parsing a large tokenizer.json twice.
const parsedJson = new WeakMap<Uint8Array, unknown>();

/** A file name inside a model repository (a shard named by model.safetensors.index.json, a Hub
 * file): plain path segments, never "." or "..". */
export function checkRepoPath(file: string): string {
  if (!/^[\w.-]+(\/[\w.-]+)*$/.test(file) || file.split('/').some((p) => p === '.' || p === '..'))
    throw new AttentionError(`"${file}" is not a file name inside a model repository`);
  return file;
}

/** A file whose bytes are not what its name says. `html`: an HTML page came back in its place,
 * which from a folder means the file is missing (a server's fallback page). */
export class InvalidModelFile extends AttentionError {
  constructor(message: string, readonly html = false) {
    super(message);
  }
}

/** Whether the bytes look like an HTML page (a doctype or a leading tag, after a BOM or blanks). */
function looksLikeHtml(bytes: Uint8Array): boolean {
  const head = new TextDecoder().decode(bytes.subarray(0, 256)).replace(/^\uFEFF?\s*/, '').toLowerCase();
  return /^<(!doctype html|html|head|body|!--|meta|script|title)\b/.test(head);
}

/** "answered" for a URL, "holds" for a file on disk. */
const verb = (where: string) => (/^[a-z][a-z0-9+.-]*:/i.test(where) && !where.startsWith('file:') ? 'answered' : 'holds');

function expected(file: string): string {
  if (file.endsWith('.json')) return 'JSON';
  if (file.endsWith('.safetensors')) return 'a safetensors file';
  if (file.endsWith('.gguf')) return 'a GGUF file';
  return `the text of ${file.slice(file.lastIndexOf('/') + 1)}`;
}

function decode(bytes: Uint8Array, where: string): string {
  try {
    return new TextDecoder().decode(bytes);
  } catch (e) {
    // A text past the engine's longest string (about 512 MB in V8).
    throw new InvalidModelFile(`${where} is too large to read as text (${bytes.length} bytes): ${(e as Error).message}`);
  }
}

function checkJson(file: string, bytes: Uint8Array, where: string): unknown {
  let value: unknown;
  const text = decode(bytes, where);
  try {
    value = JSON.parse(text);
  } catch (e) {
    const message = (e as Error).message;
    // The parser stopped at the end of the text: the file was cut short (V8 says so in one of
    // several ways, or gives the position of the end).
    const at = /at position (\d+)/.exec(message);
    const cut = /end of (JSON )?input|Unterminated/i.test(message) || (at !== null && Number(at[1]) >= text.trimEnd().length)
      ? `: cut short? (${bytes.length} bytes)` : '';
    throw new InvalidModelFile(`${where} is not valid JSON (${message})${cut}`);
  }
  const name = file.slice(file.lastIndexOf('/') + 1);
  if (name === 'config.json' && (typeof value !== 'object' || value === null || Array.isArray(value)))
    throw new InvalidModelFile(`${where}: config.json must be a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
  return value;
}

/** merges.txt: an optional "#version" line, then "left right" per line (as Hugging Face's
 * tokenizers read it: any other line is an error there too). */
function checkMerges(bytes: Uint8Array, where: string): void {
  const lines = decode(bytes, where).split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, '');
    if (line === '' || (i === 0 && line.startsWith('#version'))) continue;
    if (line.split(' ').length !== 2)
      throw new InvalidModelFile(`${where}: line ${i + 1} is not "left right" (two symbols and one space): ${JSON.stringify(line.slice(0, 40))}`);
  }
}

/** The safetensors header parses, and the data ends exactly at the end of the file (a file cut
 * short, or with bytes after its tensors, is refused). */
function checkSafetensors(bytes: Uint8Array, where: string): void {
  let end: number;
  try {
    const { tensors } = parseSafetensors(bytes);
    end = 8 + new DataView(bytes.buffer, bytes.byteOffset, 8).getUint32(0, true);
    for (const entry of tensors.values()) end = Math.max(end, entry.bytes.byteOffset - bytes.byteOffset + entry.bytes.length);
  } catch (e) {
    throw new InvalidModelFile(`${where}: ${(e as Error).message}`);
  }
  if (end !== bytes.length)
    throw new InvalidModelFile(`${where}: safetensors: the header's tensors end at byte ${end} but the file has ${bytes.length} bytes`);
}

/** The GGUF file parses whole: its header, and every tensor's bytes inside the file. */
function checkGguf(bytes: Uint8Array, where: string): void {
  try {
    parseGguf(bytes);
  } catch (e) {
    throw new InvalidModelFile(`${where}: ${(e as Error).message}`);
  }
}

/**
 * Checks a model file read from `where` (its URL or path; `contentType` when the server said it).
 * Returns the parsed value of a .json file (undefined for others). Throws an AttentionError that
 * names `where` and what is wrong.
 */
export function checkModelFile(file: string, bytes: Uint8Array, where: string, contentType?: string | null): unknown {
  if (parsedJson.has(bytes)) return parsedJson.get(bytes);
  if (/^\s*text\/html\b/i.test(contentType ?? '') || looksLikeHtml(bytes))
    throw new InvalidModelFile(`${where} ${verb(where)} an HTML page (text/html), not ${expected(file)}: is the folder URL right? A bundler may serve index.html for missing files`, true);
  // A tokenizer file's size is bounded before it is decoded or parsed (a 50 MB vocab.json took 10 s).
  // An InvalidModelFile: the file is there but unusable, which no fallback to another file hides.
  if (TOKENIZER_FILES.includes(file)) {
    try {
      checkTokenizerFileSize(where, bytes.length);
    } catch (e) {
      throw new InvalidModelFile((e as Error).message);
    }
  }
  if (file.endsWith('.json')) {
    const value = checkJson(file, bytes, where);
    parsedJson.set(bytes, value);
    return value;
  }
  if (file.endsWith('.safetensors')) checkSafetensors(bytes, where);
  else if (file.endsWith('.gguf')) checkGguf(bytes, where);
  else if (file === 'merges.txt' || file.endsWith('/merges.txt')) checkMerges(bytes, where);
  return undefined;
}
