// Models from the Hugging Face Hub: `loadModel('hf:owner/name@revision')` downloads a model's files
// from {hubUrl}/{owner/name}/resolve/{revision}/{file} (the Hub answers with a redirect to its file
// host; fetch follows it), with per-file progress, a cache (the Platform's: a folder in Node, the
// Cache API in browsers) and a named error for each way a download fails.
//
// Why not npm's @huggingface/hub (2.17.5, checked 2026-11): its tarball is 730 kB (3.25 MB
// unpacked, 623 files; its browser bundle alone is 296 kB) and it pulls in @huggingface/tasks
// (3.27 MB unpacked) and @huggingface/xetchunk-wasm (135 kB). Its downloadFile() has a custom
// hubUrl but no byte progress (it returns a Blob), and its cache (downloadFileToCacheDir) exists in
// Node only. What this library needs is a few GETs with redirects, a streamed body, a Range resume
// and a cache: this file, a few kB, in both Node and browsers with no configuration.
import { AttentionError } from '../errors.js';
import { ByteSink, closedBeforeAnswer, fetchFailure, stopReason, Watch } from './hub_fetch.js';
import type { StopReason } from './hub_fetch.js';
import { checkModelFile, checkRepoPath } from '../loading/model_file_check.js';
import type { HubCache, HubCacheEntry, HubCacheKey, HubPlatform } from '../runtime/platform.js';
import { announcedSize, readChunks } from '../runtime/platform.js';
// The platform's side of the Hub (its cache and environment) is declared with the Platform.
export type { HubCache, HubCacheEntry, HubCacheKey, HubEnvironment, HubPlatform } from '../runtime/platform.js';
import { is, show } from '../validate.js';
import type { Rules } from '../validate.js';

/** Why a Hub download failed. */
export type HubErrorCode =
  | 'bad-id' // the id is not "owner/name" (or "name") with an optional "@revision"
  | 'not-found' // HTTP 404: no such model, revision or file
  | 'unauthorized' // HTTP 401/403: a gated or private model (accept its license, pass accessToken)
  | 'network' // the request failed before any answer (offline, DNS, refused, CORS)
  | 'http' // any other HTTP error status
  | 'truncated' // fewer bytes arrived than Content-Length announced
  | 'timeout' // no byte for idleTimeout ms, or the signal's AbortSignal.timeout() fired
  | 'aborted' // the signal passed to loadModel aborted
  | 'too-large' // the download would exceed maxBytes
  | 'invalid-file' // a file arrived whole but is not what its name says (an HTML page, JSON cut short, a corrupt safetensors)
  | 'unsupported-model'; // config.json's model_type is not one this library runs

/** A failed Hub download: an AttentionError with `code` (and the URL and HTTP status when known). */
export class HubError extends AttentionError {
  constructor(message: string, readonly code: HubErrorCode, readonly url?: string, readonly status?: number) {
    super(message);
    this.name = 'HubError';
  }
}

/** One progress report: `loaded` of `total` bytes of `file` (total is undefined when the server
 * does not say, e.g. a compressed answer); `done` once the file is complete; `cached` when it came
 * from the cache without a download. */
export interface HubProgress {
  file: string;
  loaded: number;
  total: number | undefined;
  done: boolean;
  cached?: boolean;
}

export interface HubOptions {
  /** A branch, tag or commit hash (default "main"); "hf:owner/name@revision" says the same. */
  revision?: string;
  /** The Hub's address (default https://huggingface.co; in Node, $HF_ENDPOINT when set): a mirror,
   * or a local stand-in in tests. */
  hubUrl?: string;
  /** A Hugging Face access token, sent as Authorization: Bearer (gated and private models). In Node,
   * $HF_TOKEN when not given. */
  accessToken?: string;
  /** Called as each file's bytes arrive, and once more with done: true. */
  onProgress?: (progress: HubProgress) => void;
  /** false: always download, store nothing; a name: a cache of one's own (browsers: a Cache API
   * name; Node: the folder caches/<name> of cacheDir). Default true for Hub models, false for
   * folders and URLs (true caches their http(s) files alike). */
  cache?: boolean | string;
  /** Node: the cache folder (default $XDG_CACHE_HOME/attention-wasm or ~/.cache/attention-wasm). */
  cacheDir?: string;
  /** The most bytes one model may download, all files together, counted as they arrive (after
   * decompression). Default 2 GiB (a larger checkpoint needs { maxBytes }, and fits the 4 GiB WebAssembly memory only
   * quantized); at most 4 GiB (MAX_DOWNLOAD_BYTES, the largest typed array). */
  maxBytes?: number;
  /** A GGUF repository ("hf:owner/name" holding .gguf files): the quantization to load, as its
   * file names say it (e.g. 'Q4_K_M' picks model-Q4_K_M.gguf, all shards when split). */
  quant?: string;
  /** Aborts the downloads (HubError code 'aborted'; 'timeout' for AbortSignal.timeout()). */
  signal?: AbortSignal;
  /** Milliseconds without a byte (of an answer's headers or body) after which a download fails
   * with HubError code 'timeout'. Default 30000. */
  idleTimeout?: number;
}

export const DEFAULT_HUB_URL = 'https://huggingface.co';
/** The most maxBytes may say: Node's largest typed array (buffer.constants.MAX_LENGTH), and all a
 * 32-bit WebAssembly program could address. */
export const MAX_DOWNLOAD_BYTES = 2 ** 32;
/** The most a model may download unless maxBytes says more: half the WebAssembly memory's limit
 * (WASM_MEMORY_LIMIT), since a download is held whole while its tensors are copied into the memory. */
export const DEFAULT_MAX_BYTES = 2 ** 31;
/** The WebAssembly memory's limit (MAXIMUM_MEMORY=4GB in CMakeLists.txt, the wasm32 maximum). */
export const WASM_MEMORY_LIMIT = 2 ** 32;
/** The most bytes a JSON or text file (config, tokenizer, vocabulary) may have, unpacked. */
export const TEXT_FILE_MAX_BYTES = 64 * 1024 ** 2;
export const DEFAULT_IDLE_TIMEOUT = 30_000;

/** The rules loadModel and hubFile check their options with (validate.ts's checkOptions): a
 * misspelt key (`onprogress`, `hub_url`) is refused with the nearest known one. Exported so that
 * loadModel's own options can add theirs: `{ ...HUB_OPTION_RULES, dtype: ... }`. */
export const HUB_OPTION_RULES: Rules<HubOptions> = {
  revision: is.string,
  hubUrl: is.string,
  accessToken: is.string,
  onProgress: is.function,
  cache(v, name) {
    if (typeof v === 'boolean') return;
    if (typeof v !== 'string' || !CACHE_NAME.test(v) || v === '.' || v === '..')
      throw new AttentionError(`${name} must be true, false or a cache's name (1 to 100 letters, digits, '_', '-' or '.'), got ${show(v)}`);
  },
  cacheDir: is.string,
  maxBytes(v, name) {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_DOWNLOAD_BYTES)
      throw new AttentionError(`${name} must be an integer from 1 to ${MAX_DOWNLOAD_BYTES} (4 GiB, the largest typed array), got ${show(v)}`);
  },
  signal: is.signal,
  quant: is.string,
  // setTimeout's longest delay.
  idleTimeout: is.int(1, 2 ** 31 - 1),
};
/** What a named cache may be called: a Cache API name, and a folder's in Node. */
const CACHE_NAME = /^[\w.-]{1,100}$/;
// A cut connection is resumed with a Range request this many times before the file counts as truncated.
const MAX_RESUMES = 2;

/** "owner/name@revision" (or "name") -> id and revision, checked so neither can leave the path. */
export function parseHubId(source: string, revisionOption?: string): { id: string; revision: string } {
  const at = source.indexOf('@');
  const id = at < 0 ? source : source.slice(0, at);
  const fromId = at < 0 ? undefined : source.slice(at + 1);
  if (!/^([\w.-]+\/)?[\w.-]+$/.test(id) || id.split('/').some((p) => p === '.' || p === '..'))
    throw new HubError(`"hf:${source}" is not a Hub model id: write hf:owner/name (e.g. hf:openai-community/gpt2), optionally @revision`, 'bad-id');
  if (fromId !== undefined && revisionOption !== undefined && fromId !== revisionOption)
    throw new HubError(`"hf:${source}" names revision "${fromId}" but the revision option says "${revisionOption}"`, 'bad-id');
  const revision = fromId ?? revisionOption ?? 'main';
  if (!revision || /[\s?#]/.test(revision) || revision.split('/').some((p) => p === '.' || p === '..' || p === ''))
    throw new HubError(`"${revision}" is not a revision (a branch, tag or commit hash)`, 'bad-id');
  return { id, revision };
}


/** {hubUrl}/{id}/resolve/{revision}/{file}, the Hub's download address. */
export function hubFileUrl(hubUrl: string, id: string, revision: string, file: string): string {
  return `${hubUrl.replace(/\/+$/, '')}/${id}/resolve/${encodeURIComponent(revision)}/${checkRepoPath(file)}`;
}


/** A whole file as it arrived, with what its answer said about it. */
interface Download {
  bytes: Uint8Array;
  etag?: string;
  contentType: string | null;
  status: number;
}

/** What one file's download knows so far, across the requests that resume it. */
interface Transfer {
  url: string;
  file: string;
  /** The most bytes this file may have. */
  limit: number;
  /** The bytes received (null: none yet, or starting over). */
  sink: ByteSink | null;
  /** The size the server announced (undefined: none, or a compressed answer). */
  total?: number;
  etag?: string;
  contentType: string | null;
  status: number;
  /** Bytes of this file counted against maxBytes. */
  charged: number;
}

const isValid = (file: string, bytes: Uint8Array, url: string): boolean => {
  try {
    checkModelFile(file, bytes, url);
    return true;
  } catch {
    return false;
  }
};

/** One model's downloads: they share the options, the cache and the byte budget. */
export class HubRepo {
  readonly id: string;
  readonly revision: string;
  readonly hubUrl: string;
  private readonly token: string | undefined;
  private readonly cache: HubCache | null;
  private readonly maxBytes: number;
  private readonly idleTimeout: number;
  private budgetUsed = 0;
  private cacheWarned = false;

  constructor(source: string, private readonly options: HubOptions, platform: HubPlatform) {
    ({ id: this.id, revision: this.revision } = parseHubId(source, options.revision));
    const env = platform.environment();
    this.hubUrl = (options.hubUrl ?? env.hubUrl ?? DEFAULT_HUB_URL).replace(/\/+$/, '');
    if (!/^https?:\/\//i.test(this.hubUrl)) throw new HubError(`hubUrl must be an http(s) address, got "${this.hubUrl}"`, 'bad-id');
    this.token = options.accessToken ?? env.accessToken;
    // Checked by HUB_OPTION_RULES at the entry point (loadModel, hubFile).
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.idleTimeout = options.idleTimeout ?? DEFAULT_IDLE_TIMEOUT;
    this.cache = options.cache === false ? null : platform.openCache({ cacheDir: options.cacheDir, name: typeof options.cache === 'string' ? options.cache : undefined });
  }

  /** "hf:owner/name@revision", as messages name the model. */
  get name(): string {
    return `hf:${this.id}@${this.revision}`;
  }

  url(file: string): string {
    return hubFileUrl(this.hubUrl, this.id, this.revision, file);
  }

  /** A file's bytes: from the cache, else downloaded (and then cached). */
  async file(file: string): Promise<Uint8Array> {
    const key: HubCacheKey = { hubUrl: this.hubUrl, id: this.id, revision: this.revision, file };
    const url = this.url(file);
    // An aborted signal stops the load also where the cache would answer without a request.
    if (this.options.signal?.aborted) throw this.stoppedError(url, stopReason(this.options.signal), 0, undefined);
    const hit = await this.cache?.get(key).catch(() => undefined);
    // A cached file is checked again: one a version without these checks kept is downloaded anew.
    if (hit && ('missing' in hit || isValid(file, hit.bytes, url))) {
      if ('missing' in hit) throw this.notFound(url, file, 404, 'EntryNotFound');
      this.options.onProgress?.({ file, loaded: hit.bytes.length, total: hit.bytes.length, done: true, cached: true });
      return hit.bytes;
    }
    let downloaded: Download;
    try {
      downloaded = await this.download(url, file);
    } catch (e) {
      // The Hub has no such file: remember it, so a second load does not ask again. Not for
      // config.json, whose 404 may mean the model (not the file) is missing or not yet public.
      if (e instanceof HubError && e.code === 'not-found' && file !== 'config.json' && e.status === 404) await this.store(key, { missing: true });
      throw e;
    }
    // Checked before the cache keeps it: a bad answer is never stored, so once the server is
    // fixed the next load asks again.
    try {
      checkModelFile(file, downloaded.bytes, url, downloaded.contentType);
    } catch (e) {
      throw new HubError(`${this.name}: ${(e as Error).message}`, 'invalid-file', url, downloaded.status);
    }
    await this.store(key, { bytes: downloaded.bytes, etag: downloaded.etag });
    return downloaded.bytes;
  }

  /** The paths of the repository's files at this revision (the Hub's tree API; not cached). */
  async listFiles(): Promise<string[]> {
    const url = `${this.hubUrl}/api/models/${this.id}/tree/${encodeURIComponent(this.revision)}?recursive=true`;
    const { bytes } = await this.download(url, 'tree.json');
    let tree: unknown;
    try {
      tree = JSON.parse(new TextDecoder().decode(bytes));
    } catch (e) {
      throw new HubError(`${this.name}: the file list at ${url} is not JSON (${(e as Error).message})`, 'invalid-file', url);
    }
    if (!Array.isArray(tree)) throw new HubError(`${this.name}: the file list at ${url} is not a JSON array`, 'invalid-file', url);
    return tree.filter((e) => e?.type === 'file' && typeof e.path === 'string').map((e) => e.path as string);
  }

  /** Whether an error from file() means the repository has no such file (optional files are skipped). */
  static isMissing(e: unknown): boolean {
    return e instanceof HubError && e.code === 'not-found';
  }

  private async store(key: HubCacheKey, entry: HubCacheEntry): Promise<void> {
    if (!this.cache) return;
    try {
      await this.cache.put(key, entry);
    } catch (e) {
      // A full disk or a quota must not fail a load that has its bytes: say so once, go on.
      if (!this.cacheWarned) console.warn(`attention-wasm: could not write the Hub cache (${this.cache.location}): ${(e as Error).message}`);
      this.cacheWarned = true;
    }
  }

  /** A 404 (or the Hub's 401 for a repository it will not say exists), naming what is missing. */
  private notFound(url: string, file: string, status: number, hubCode?: string | null): HubError {
    const what = hubCode === 'RepoNotFound'
      ? `model ${this.name} not found at ${url}: check the id, or if it is private pass { accessToken }`
      : hubCode === 'RevisionNotFound' ? `revision "${this.revision}" of ${this.name} not found (${url})`
        : file === 'config.json' ? `model ${this.name} not found (no config.json at ${url}): check the id and revision`
          : `${file} not found in ${this.name} (${url})`;
    return new HubError(`${what}: HTTP ${status}`, 'not-found', url, status);
  }

  /** One GET, with the Hub's error statuses named. A connection closed before any answer (a
   * kept-alive connection the server had dropped) is tried once more on a new one. */
  private async request(url: string, file: string, headers: Record<string, string>, watch: Watch): Promise<Response> {
    let response: Response;
    for (let retried = false; ; retried = true) {
      try {
        response = await fetch(url, { headers, redirect: 'follow', signal: watch.signal });
        break;
      } catch (e) {
        const stopped = watch.stopped();
        if (stopped) throw this.stoppedError(url, stopped, 0, undefined);
        if (!retried && closedBeforeAnswer(e)) continue;
        const again = retried ? ', also when tried again' : '';
        throw new HubError(`could not reach ${url} (${fetchFailure(e)}${again}): network error, or the server does not allow this origin (CORS)`, 'network', url);
      }
    }
    // The Hub names the error in X-Error-Code; it answers 401 for a repository that does not exist.
    const hubCode = response.headers.get('x-error-code');
    if (response.status === 404 || hubCode === 'RepoNotFound') throw this.notFound(url, file, response.status, hubCode);
    if (response.status === 401 || response.status === 403) {
      const how = this.token
        ? 'the access token was refused: check that it has read access and that its account accepted the model\'s license on its Hub page'
        : 'the model is gated or private: accept its license on its Hub page and pass { accessToken } (in Node, or set HF_TOKEN)';
      throw new HubError(`${this.name}: ${url} answered HTTP ${response.status}: ${how}`, 'unauthorized', url, response.status);
    }
    if (!response.ok && response.status !== 206)
      throw new HubError(`${url} answered HTTP ${response.status} ${response.statusText}`.trim(), 'http', url, response.status);
    return response;
  }

  /** The error for a download the caller's signal or the idle timer stopped. */
  private stoppedError(url: string, why: StopReason, received: number, total: number | undefined): HubError {
    const got = received > 0 ? ` after ${received} of ${total ?? 'an unknown number of'} bytes` : '';
    if (why === 'aborted') return new HubError(`download of ${url} aborted${got} (the signal passed to loadModel)`, 'aborted', url);
    if (this.options.signal?.aborted)
      return new HubError(`download of ${url} stopped${got}: the signal passed to loadModel timed out (AbortSignal.timeout)`, 'timeout', url);
    return new HubError(`download of ${url} stalled: no byte for ${this.idleTimeout} ms${got} (idleTimeout)`, 'timeout', url);
  }

  /** GETs a file into a buffer that grows with the bytes received, resuming a cut connection with a
   * Range request; fails with 'truncated', 'too-large', 'timeout' or 'aborted'. */
  private async download(url: string, file: string): Promise<Download> {
    const watch = new Watch(this.options.signal, this.idleTimeout);
    try {
      return await this.transfer(url, file, watch);
    } finally {
      watch.stop();
    }
  }

  private async transfer(url: string, file: string, watch: Watch): Promise<Download> {
    // JSON and text files are small: a larger one (e.g. a gzip bomb) stops early.
    const limit = /\.(json|txt)$/.test(file) ? Math.min(this.maxBytes, TEXT_FILE_MAX_BYTES) : this.maxBytes;
    const t: Transfer = { url, file, limit, sink: null, contentType: null, status: 0, charged: 0 };
    for (let attempt = 0; ; attempt++) {
      const response = await this.request(url, file, this.headersFor(t), watch);
      // The server sent the whole file again (or another version): start over.
      if (t.sink && (response.status !== 206 || !response.headers.get('content-range')?.startsWith(`bytes ${t.sink.length}-`))) t.sink = null;
      const sink = t.sink ?? await this.begin(t, response);
      const cut = await this.readBody(t, sink, response, watch);
      if (cut === null && (t.total === undefined || sink.length === t.total)) {
        this.options.onProgress?.({ file, loaded: sink.length, total: sink.length, done: true });
        return { bytes: sink.bytes(), etag: t.etag, contentType: t.contentType, status: t.status };
      }
      // Cut short: try again (from where it stopped when the size and version are known), at most
      // MAX_RESUMES times, else fail; nothing partial is cached.
      const why = cut ? ` (${fetchFailure(cut)})` : '';
      if (t.total === undefined || attempt >= MAX_RESUMES)
        throw new HubError(`download of ${url} was cut off: ${sink.length} of ${t.total ?? 'an unknown number of'} bytes arrived${why}${t.total !== undefined ? `, ${MAX_RESUMES} resumes tried` : ''}`, 'truncated', url);
    }
  }

  /** The request's headers: a Range from where a cut transfer stopped, if it can resume. */
  private headersFor(t: Transfer): Record<string, string> {
    const headers: Record<string, string> = { 'Accept-Encoding': 'identity' };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    // Resume only a file whose version the server named (If-Range: its ETag), so a file changed
    // meanwhile is sent whole instead of being spliced from two versions; else start over.
    if (t.sink && (t.sink.length === 0 || !t.etag)) t.sink = null;
    if (t.sink) {
      headers.Range = `bytes=${t.sink.length}-`;
      headers['If-Range'] = t.etag!;
    }
    return headers;
  }

  /** A fresh start (first answer, or one that sent the whole file again): its size checked against
   * the limits before any byte is read, and an empty buffer. */
  private async begin(t: Transfer, response: Response): Promise<ByteSink> {
    this.budgetUsed -= t.charged;
    t.charged = 0;
    t.etag = response.headers.get('etag') ?? undefined;
    t.contentType = response.headers.get('content-type');
    t.status = response.status;
    t.total = announcedSize(response);
    if (t.total !== undefined) {
      try {
        this.limitFile(t, t.total);
        this.charge(t.url, t.file, t.total);
      } catch (e) {
        await response.body?.cancel().catch(() => {}); // close the connection, read nothing
        throw e;
      }
      t.charged = t.total;
    }
    // Grows with the bytes received, at most to the announced size: no allocation from a
    // Content-Length before the bytes are here.
    t.sink = new ByteSink(t.total);
    this.options.onProgress?.({ file: t.file, loaded: 0, total: t.total, done: false });
    return t.sink;
  }

  /** Reads the answer's body into `sink`. Returns the error that cut the connection (to resume),
   * or null at the body's end; throws (after stopping the transfer) for anything else. */
  private async readBody(t: Transfer, sink: ByteSink, response: Response, watch: Watch): Promise<unknown> {
    if (!response.body) throw new HubError(`${t.url} answered with no body`, 'http', t.url, response.status);
    const cut = await readChunks(response.body, (chunk) => {
      watch.touch();
      this.take(t, sink, chunk);
      this.options.onProgress?.({ file: t.file, loaded: sink.length, total: t.total, done: false });
    });
    const stopped = cut === null ? null : watch.stopped();
    if (stopped) throw this.stoppedError(t.url, stopped, sink.length, t.total);
    return cut;
  }

  /** Counts one chunk against the limits and keeps it. */
  private take(t: Transfer, sink: ByteSink, value: Uint8Array): void {
    const after = sink.length + value.length;
    if (t.total !== undefined && after > t.total)
      throw new HubError(`${t.url} sent more than the ${t.total} bytes its Content-Length announced`, 'truncated', t.url);
    if (t.total === undefined) {
      // No announced size (a compressed answer): counted as it unpacks.
      this.limitFile(t, after, true);
      this.charge(t.url, t.file, value.length, sink.length);
      t.charged += value.length;
    }
    try {
      sink.append(value);
    } catch (e) {
      // The engine could not grow the buffer (a device short of memory, a browser's limit).
      throw new HubError(`${t.file} of ${this.name} (${t.url}): no memory for ${after} bytes (${(e as Error).message})`, 'too-large', t.url);
    }
  }

  /** A JSON or text file larger than TEXT_FILE_MAX_BYTES is refused (before or while reading it). */
  private limitFile(t: Transfer, bytes: number, unpacked = false): void {
    if (bytes <= t.limit || t.limit === this.maxBytes) return;
    throw new HubError(`${t.file} of ${this.name} (${t.url}) ${unpacked ? 'unpacks to over' : 'is'} ${unpacked ? t.limit : bytes} bytes: more than a model's ${t.file.slice(t.file.lastIndexOf('.'))} file may have (${t.limit} bytes)`, 'too-large', t.url);
  }

  /** Counts `bytes` against maxBytes (all files of the model together). */
  private charge(url: string, file: string, bytes: number, alreadyCounted = 0): void {
    const after = this.budgetUsed + bytes;
    if (after > this.maxBytes)
      throw new HubError(`${file} of ${this.name} (${url}) is ${alreadyCounted ? 'over ' : ''}${alreadyCounted + bytes} bytes: with the model's other files that is over maxBytes (${this.maxBytes} bytes); pass a larger { maxBytes } to load it`, 'too-large', url);
    this.budgetUsed = after;
  }
}
