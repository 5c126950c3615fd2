// "Load a model from the Hugging Face Hub": an id (owner/name, optionally @revision, or the model's
// Hub page URL), a progress bar over the files being downloaded, and the model types the demo runs.
// The worker does the download (the library's Hub client: its cache makes the second visit
// instant); once the model is loaded, main.js shows it in place of the shipped model of its type.
// ?hub=<address> (or the "Hub address" field) points the panel at a mirror or a local stand-in.

const DEFAULT_HUB = 'https://huggingface.co';

/** "owner/name", "owner/name@rev", "hf:owner/name" or https://huggingface.co/owner/name[/tree/rev] -> "owner/name[@rev]". */
export function parseHubInput(text, hubUrl = DEFAULT_HUB) {
  let s = text.trim().replace(/^hf:/, '');
  for (const prefix of [hubUrl.replace(/\/+$/, '') + '/', DEFAULT_HUB + '/']) {
    if (s.startsWith(prefix)) {
      const [owner, name, tree, ...rev] = s.slice(prefix.length).split('/');
      s = `${owner}/${name}${tree === 'tree' && rev.length ? `@${rev.join('/')}` : ''}`;
      break;
    }
  }
  if (!/^([\w.-]+\/)?[\w.-]+(@[^\s@]+)?$/.test(s)) return null;
  return s;
}

const mb = (bytes) => (bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0);

/**
 * Wires the panel (#hub-panel in index.html). client: the compute client; onLoaded(type, modelUrl,
 * hubUrl): called once the worker has the model (type: 'gpt2' | 'bert' | 'bart').
 */
export function initHubPanel({ client, onLoaded }) {
  const $ = (id) => document.getElementById(id);
  const form = $('hub-form'), input = $('hub-id'), hubField = $('hub-url'), bar = $('hub-progress'), status = $('hub-status'), button = $('hub-load');
  const dtypeField = $('hub-dtype');
  if (!form) return;
  const fromQuery = new URLSearchParams(location.search).get('hub');
  if (fromQuery) {
    hubField.value = fromQuery;
    $('hub-panel').open = true;
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const hubUrl = (hubField.value.trim() || DEFAULT_HUB).replace(/\/+$/, '');
    const id = parseHubInput(input.value, hubUrl);
    if (!id) {
      status.textContent = 'Write a model id such as openai-community/gpt2 (or owner/name@revision).';
      status.dataset.state = 'error';
      return;
    }
    const modelUrl = `hf:${id}`;
    // Bytes per file; the bar shows all files together (the weights dominate).
    const files = new Map();
    bar.value = 0;
    bar.hidden = false;
    button.disabled = true;
    status.dataset.state = 'loading';
    status.textContent = `Looking for ${id}…`;
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
      const info = await client.request('model', { modelUrl, hubUrl, dtype }, null, onProgress);
      bar.value = 1;
      status.dataset.state = 'done';
      const held = { auto: 'weights as stored', f16: '16-bit weights', q8: '8-bit weights', q4: '4-bit weights' }[info.dtype] ?? 'weights as stored';
      status.textContent = `Loaded ${id} (${info.type}, ${held}): shown as the ${{ gpt2: 'decoder', bert: 'encoder', bart: 'encoder-decoder', llama: 'Llama-style decoder' }[info.type] ?? info.type} model.`;
      onLoaded(info.type, modelUrl, hubUrl);
    } catch (e) {
      status.dataset.state = 'error';
      status.textContent = String(e?.message ?? e);
    } finally {
      button.disabled = false;
    }
  });
}
