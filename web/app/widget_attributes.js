// The attributes <attention-view> reads, and the note for one it does not know: a misspelt
// veiw="heads" would otherwise be ignored without a word. The nearest known name comes from the
// library's own lookup (nearestName / unknownName, from dist/ like the rest of web/app's library
// imports), so the widget and the library suggest names the same way.
import { nearestName, unknownName } from '../../dist/analysis.js';
import { MODELS } from './state.js';
import { MODEL_FILES } from './model_urls.js';

/** Every attribute the widget reads (all observed: changing one recomputes or redraws). */
export const WIDGET_ATTRIBUTES = ['sentence', 'layer', 'head', 'view', 'query', 'preset', 'causal', 'cross', 'second', 'decimals',
  'model', 'pair', 'batch-with', 'sentences', 'pooling', 'word', 'attend', 'max-new', 'temperature', 'seed', 'demo', 'rows', 'test',
  'quant', 'hub', 'dtype', 'files', 'about', 'tokens'];

// Attributes any HTML element may carry (besides data-*, aria-* and the on* event handlers): an
// author styling, labelling or scripting the element is not misspelling one of the widget's.
const GLOBAL_ATTRIBUTES = new Set(['id', 'class', 'style', 'hidden', 'title', 'lang', 'dir', 'tabindex', 'slot', 'part', 'role',
  'accesskey', 'autofocus', 'contenteditable', 'draggable', 'enterkeyhint', 'exportparts', 'inert', 'inputmode', 'is', 'nonce',
  'popover', 'spellcheck', 'translate', 'itemid', 'itemprop', 'itemref', 'itemscope', 'itemtype', 'xml:lang']);
const isGlobal = (name) => GLOBAL_ATTRIBUTES.has(name) || /^(data-|aria-|on)/.test(name);

/** One note per attribute of `element` that is neither the widget's nor a global HTML attribute. */
export function unknownAttributes(element) {
  return element.getAttributeNames().filter((name) => !WIDGET_ATTRIBUTES.includes(name) && !isGlobal(name))
    .map((name) => `${unknownName('attribute', name, WIDGET_ATTRIBUTES)}: ignored.`);
}

/**
 * For a failed load: when model="..." is a bare word that names no model (model="brt"), it was
 * read as a folder URL, which is why a 404 came back; says so, with the nearest model name.
 * null when the value is a model name, a path or a URL (the error then speaks for itself).
 */
export function modelNameHint(element) {
  const value = element.getAttribute('model');
  if (value === null || MODELS.includes(value) || !/^[\w-]+$/.test(value)) return null;
  const near = nearestName(value, MODELS);
  return `model="${value}" names no model (${MODELS.join(', ')}${near ? `; did you mean '${near}'?` : ''}), so it was read as a folder URL.`;
}

// The optional files a Hugging Face folder usually has: asked for when a folder's files are not listed.
const PLAIN_FOLDER_FILES = ['generation_config.json', 'tokenizer_config.json'];

/**
 * The optional files a model folder holds (the model request's manifest; the worker asks for no
 * other): the files attribute (space-separated; files="" for none), the package's list for its own
 * models, or for any other folder the Hugging Face ones (PLAIN_FOLDER_FILES): this project's
 * quality.json and heads.json only when listed. null: no list, every optional file is asked for.
 */
export function folderFiles(element) {
  const attr = element.getAttribute('files');
  if (attr !== null) return attr.split(/\s+/).filter(Boolean);
  const model = element.getAttribute('model') ?? 'gpt2';
  if (MODELS.includes(model)) return MODEL_FILES?.[model] ?? null;
  return PLAIN_FOLDER_FILES;
}
