// "Load a model from the Hugging Face Hub": an id (owner/name, optionally @revision, or the model's
// Hub page URL), a progress bar over the files being downloaded, and the model types the demo runs.
// The worker does the download (the library's Hub client: its cache makes the second visit
// instant); once the model is loaded, main.js shows it in place of the shipped model of its type.
// ?hub=<address> (or the "Hub address" field) points the panel at a mirror or a local stand-in.
//
// GGUF (llama.cpp's files): "owner/name/file.gguf" loads that file; a repository without
// config.json (or without model.safetensors) is asked for its .gguf files (the Hub's tree API,
// through the library's listHubGgufFiles in the worker), which fill the Quantization picker
// (Q4_K_M chosen when there is one) and the chosen file loads; choosing another loads that one. A
// .gguf file from the learner's disk loads through "Or a GGUF file from your disk" (File ->
// loadModel in the worker). Every name shown (ids, file names from the Hub's list) is set as text.

const DEFAULT_HUB = 'https://huggingface.co';
const DEFAULT_QUANT = 'Q4_K_M';

/**
 * What the learner wrote, as what follows "hf:": "owner/name[@rev]" for a repository, or
 * "owner/name[@rev]/path/file.gguf" for one GGUF file; null when it is neither. Takes "hf:…" and
 * the Hub's page addresses too: https://huggingface.co/owner/name[/tree/rev] and
 * …/owner/name/blob/rev/file.gguf (or /resolve/rev/file.gguf).
 */
export function parseHubInput(text, hubUrl = DEFAULT_HUB) {
  let s = text.trim().replace(/^hf:/, '');
  for (const prefix of [hubUrl.replace(/\/+$/, '') + '/', DEFAULT_HUB + '/']) {
    if (s.startsWith(prefix)) {
      const [owner, name, kind, ...rest] = s.slice(prefix.length).split(/[?#]/)[0].split('/');
      if ((kind === 'blob' || kind === 'resolve') && rest.length > 1 && /\.gguf$/i.test(rest.at(-1))) {
        s = `${owner}/${name}${rest[0] === 'main' ? '' : `@${rest[0]}`}/${rest.slice(1).join('/')}`;
      } else {
        s = `${owner}/${name}${kind === 'tree' && rest.length ? `@${rest.join('/')}` : ''}`;
      }
      break;
    }
  }
  if (/^[\w.-]+\/[\w.-]+(@[^\s@/]+)?\/[^\s]+\.gguf$/i.test(s) && !s.split('/').some((p) => p === '..' || p === '.')) return s;
  if (!/^([\w.-]+\/)?[\w.-]+(@[^\s@]+)?$/.test(s)) return null;
  return s;
}

const mb = (bytes) => (bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0);
const KINDS = { gpt2: 'decoder', bert: 'encoder', bart: 'encoder-decoder', llama: 'Llama-style decoder' };
const HELD = { auto: 'weights as stored', f16: '16-bit weights', q8: '8-bit weights', q4: '4-bit weights' };

/** The picker's entry to choose first: Q4_K_M when there is one, else the first the library reads. */
export function defaultGgufFile(files) {
  return files.find((f) => f.quant === DEFAULT_QUANT && f.readable) ?? files.find((f) => f.readable) ?? null;
}

/**
 * Wires the panel (#hub-panel in index.html). client: the compute client; onLoaded(type, modelUrl,
 * hubUrl): called once the worker has the model (type: 'gpt2' | 'bert' | 'bart' | 'llama').
 */
export function initHubPanel({ client, onLoaded }) {
  const $ = (id) => document.getElementById(id);
  const form = $('hub-form'), input = $('hub-id'), hubField = $('hub-url'), bar = $('hub-progress'), status = $('hub-status'), button = $('hub-load');
  const dtypeField = $('hub-dtype'), quantRow = $('hub-quant-row'), quantField = $('hub-quant'), fileField = $('hub-file');
  if (!form) return;
  const fromQuery = new URLSearchParams(location.search).get('hub');
  if (fromQuery) {
    hubField.value = fromQuery;
    $('hub-panel').open = true;
  }
  let listed = null; // the last repository whose GGUF files fill the picker: { repo, hubUrl, files }
  let localFiles = 0;

  const hubAddress = () => (hubField.value.trim() || DEFAULT_HUB).replace(/\/+$/, '');
  const say = (state, text) => {
    status.dataset.state = state;
    status.textContent = text;
  };

  /** Loads modelUrl in the worker with the bar following its downloads; label: what the status names. */
  async function load(modelUrl, label, extra = {}) {
    const files = new Map(); // bytes per file; the bar shows all files together (the weights dominate)
    bar.value = 0;
    bar.hidden = false;
    delete bar.dataset.loaded;
    delete bar.dataset.total;
    button.disabled = true;
    fileField && (fileField.disabled = true);
    say('loading', `Looking for ${label}…`);
    const onProgress = ({ file, loaded, total, cached }) => {
      files.set(file, { loaded, total: total ?? loaded });
      const all = [...files.values()];
      const sumLoaded = all.reduce((a, f) => a + f.loaded, 0), sumTotal = all.reduce((a, f) => a + f.total, 0);
      bar.value = sumTotal ? sumLoaded / sumTotal : 0;
      bar.dataset.loaded = String(sumLoaded);
      bar.dataset.total = String(sumTotal);
      status.textContent = cached ? `${file}: from the cache` : `${file}: ${mb(loaded)}${total ? ` of ${mb(total)}` : ''} MB`;
    };
    try {
      const dtype = dtypeField?.value ?? 'auto';
      const info = await client.request('model', { modelUrl, dtype, ...extra }, null, onProgress);
      bar.value = 1;
      const held = info.gguf && info.dtype === 'auto'
        ? `GGUF${info.gguf.quant ? ` ${info.gguf.quant}` : ''}, weights as stored` : HELD[info.dtype] ?? HELD.auto;
      say('done', `Loaded ${label} (${info.type}, ${held}): shown as the ${KINDS[info.type] ?? info.type} model.`);
      onLoaded(info.type, modelUrl, extra.hubUrl);
      return info;
    } finally {
      button.disabled = false;
      fileField && (fileField.disabled = false);
    }
  }

  /** Fills the Quantization picker with a repository's GGUF files (each by the quantization its name says). */
  function showQuantizations(repo, hubUrl, files) {
    listed = { repo, hubUrl, files };
    const counts = new Map();
    for (const f of files) counts.set(f.quant, (counts.get(f.quant) ?? 0) + 1);
    const chosen = defaultGgufFile(files);
    quantField.replaceChildren(...files.map((f) => {
      const option = document.createElement('option');
      option.value = f.file;
      // The quantization, with the file's name where it alone does not tell the files apart.
      const name = f.quant && counts.get(f.quant) === 1 ? f.quant : `${f.quant ?? 'unnamed'} (${f.file})`;
      option.textContent = `${name}${f.shards.length > 1 ? `, ${f.shards.length} parts` : ''}${f.readable ? '' : ': not read by this library'}`;
      option.disabled = !f.readable;
      option.dataset.quant = f.quant ?? '';
      option.selected = f === chosen;
      return option;
    }));
    quantRow.hidden = false;
    return chosen;
  }

  function hideQuantizations() {
    listed = null;
    quantRow.hidden = true;
    quantField.replaceChildren();
  }

  /** The repository's GGUF files through the worker (the Hub's tree API); [] when it cannot say. */
  async function ggufFilesOf(repo, hubUrl) {
    try {
      return await client.request('ggufFiles', { repo, hubUrl }) ?? [];
    } catch {
      return [];
    }
  }

  const loadGguf = (repo, file, hubUrl) => load(`hf:${repo}/${file}`, `${repo}/${file}`, { hubUrl });

  async function submit() {
    const hubUrl = hubAddress();
    const id = parseHubInput(input.value, hubUrl);
    if (!id) {
      say('error', 'Write a model id such as openai-community/gpt2 (or owner/name@revision, or owner/name/file.gguf).');
      return;
    }
    const gguf = /^([\w.-]+\/[\w.-]+(?:@[^/]+)?)\/(.+\.gguf)$/i.exec(id);
    try {
      if (gguf) {
        // One named file: the picker (when it lists that repository) shows it chosen, else hides.
        if (listed?.repo === gguf[1] && listed.hubUrl === hubUrl && listed.files.some((f) => f.file === gguf[2])) quantField.value = gguf[2];
        else hideQuantizations();
        await loadGguf(gguf[1], gguf[2], hubUrl);
        return;
      }
      if (listed?.repo === id && listed.hubUrl === hubUrl && quantField.value) {
        await loadGguf(id, quantField.value, hubUrl);
        return;
      }
      hideQuantizations();
      try {
        await load(`hf:${id}`, id, { hubUrl });
      } catch (e) {
        // No config.json (or no model.safetensors): perhaps a repository of GGUF files.
        if (!/not found/i.test(String(e?.message ?? e))) throw e;
        say('loading', `${id} has no Hugging Face checkpoint: looking for GGUF files…`);
        const files = await ggufFilesOf(id, hubUrl);
        if (!files.length) throw e;
        const chosen = showQuantizations(id, hubUrl, files);
        if (!chosen) {
          say('error', `${id} holds GGUF files, but none of a quantization this library reads (${files.map((f) => f.quant ?? f.file).join(', ')}).`);
          return;
        }
        await loadGguf(id, chosen.file, hubUrl);
      }
    } catch (e) {
      say('error', String(e?.message ?? e));
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    submit();
  });

  // Another quantization: load it at once.
  quantField?.addEventListener('change', () => {
    if (!listed || !quantField.value) return;
    loadGguf(listed.repo, quantField.value, listed.hubUrl).catch((e) => say('error', String(e?.message ?? e)));
  });

  // A GGUF file from the learner's disk: handed to the worker, which reads it with loadModel(file).
  fileField?.addEventListener('change', () => {
    const file = fileField.files?.[0];
    if (!file) return;
    if (!/\.gguf$/i.test(file.name)) {
      say('error', `${file.name} is not a .gguf file.`);
      return;
    }
    load(`gguf-file:${++localFiles}:${file.name}`, file.name, { file }).catch((e) => say('error', String(e?.message ?? e)));
  });
}
