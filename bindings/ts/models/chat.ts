// Chat templates for the decoder-only models: a checkpoint's Jinja template (tokenizer_config.json's
// chat_template, a chat_template.jinja file, or a GGUF file's tokenizer.chat_template) rendered with
// @huggingface/jinja, the Jinja implementation transformers.js uses, given the variables
// transformers' apply_chat_template gives it: messages, tools, documents, add_generation_prompt,
// bos_token / eos_token, raise_exception and strftime_now. DecoderModel.chat and applyChatTemplate
// (decoder_model.ts) call renderChatTemplate.
import { Environment, Interpreter, Template } from '@huggingface/jinja';
import { AttentionError } from '../errors.js';
import { checkObject, checkOptions, is, show } from '../validate.js';
import type { Rule, Rules } from '../validate.js';

/** One turn of a conversation: `role` ('system', 'user', 'assistant', 'tool', ...) and `content`
 * (a string, or the list of parts some templates read); any other field (tool_calls,
 * reasoning_content, ...) reaches the template as it is. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  [field: string]: unknown;
}

export interface ChatTemplateOptions {
  /** End with the start of an assistant turn (what chat() generates from); default false here,
   * always true in chat(). The template's `add_generation_prompt`. */
  addGenerationPrompt?: boolean;
  /** Tool (function) descriptions, JSON schemas as transformers takes them: the template's `tools`. */
  tools?: object[];
  /** Documents for retrieval-augmented templates: the template's `documents`. */
  documents?: object[];
  /** A Jinja template to use instead of the model's, or the name of one of the model's named
   * templates (tokenizer_config.json's list form, e.g. 'tool_use'). Needed for a model without one. */
  chatTemplate?: string;
  /** More variables for the template, as transformers' extra keyword arguments: e.g.
   * `{ enable_thinking: false }` for Qwen3 and SmolLM3, `{ date_string: '26 Jul 2024' }` for Llama 3. */
  variables?: Record<string, unknown>;
}

/** A model's templates and the special tokens' texts the templates read. */
export interface ChatTemplateSource {
  /** By name: one template is 'default'; tokenizer_config.json's list form may add e.g. 'tool_use'. */
  templates?: ReadonlyMap<string, string>;
  /** The template's `bos_token` and `eos_token` (tokenizer_config.json's, else the tokenizer's). */
  bosToken?: string;
  eosToken?: string;
}

const MESSAGE_LIST: Rule = (v, name) => {
  if (!Array.isArray(v)) throw new AttentionError(`${name} must be an array of objects, got ${show(v)}`);
};

export const CHAT_TEMPLATE_RULES: Rules<ChatTemplateOptions> = {
  addGenerationPrompt: is.boolean, tools: MESSAGE_LIST, documents: MESSAGE_LIST, chatTemplate: is.string, variables: is.any,
};

/**
 * A chat_template value as tokenizer_config.json holds it: a string (the 'default' template), or a
 * list of { name, template } (transformers' named templates). `file` names it in errors.
 */
export function readChatTemplates(value: unknown, file: string): Map<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return new Map([['default', value]]);
  if (!Array.isArray(value))
    throw new AttentionError(`${file}: chat_template must be a string or a list of { name, template }, got ${show(value)}`);
  const out = new Map<string, string>();
  value.forEach((entry: unknown, i) => {
    const e = entry as { name?: unknown; template?: unknown } | null;
    if (typeof e !== 'object' || e === null || typeof e.name !== 'string' || typeof e.template !== 'string')
      throw new AttentionError(`${file}: chat_template[${i}] must be { name: string, template: string }, got ${show(entry)}`);
    out.set(e.name, e.template);
  });
  return out;
}

/** The template text to render: the option's (a name of the model's, or a template), else the
 * model's 'tool_use' one when tools are given and it has one, else its 'default' (or its only one). */
function pickTemplate(where: string, source: ChatTemplateSource, options: ChatTemplateOptions): string {
  const templates = source.templates ?? new Map<string, string>();
  const asked = options.chatTemplate;
  if (asked !== undefined) return templates.get(asked) ?? asked;
  if (templates.size === 0)
    throw new AttentionError(`${where}: this model has no chat template (no chat_template in tokenizer_config.json, no chat_template.jinja, no tokenizer.chat_template in its GGUF file); pass one as the chatTemplate option`, 'no-chat-template');
  if (options.tools && templates.has('tool_use')) return templates.get('tool_use')!;
  const fallback = templates.get('default') ?? (templates.size === 1 ? [...templates.values()][0] : undefined);
  if (fallback === undefined)
    throw new AttentionError(`${where}: the model's chat templates are named ${[...templates.keys()].map((k) => show(k)).join(', ')} and none is 'default': name one with the chatTemplate option`, 'no-chat-template');
  return fallback;
}

/** Parsed templates by their text: a model renders one template per turn of a chat. */
const compiled = new Map<string, Template>();
const MAX_COMPILED = 16;

function compile(where: string, text: string): Template {
  let t = compiled.get(text);
  if (t) return t;
  try {
    t = new Template(text);
  } catch (e) {
    throw new AttentionError(`${where}: the chat template could not be parsed (${(e as Error)?.message ?? show(e)})`);
  }
  if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
  compiled.set(text, t);
  return t;
}

/** What the template's raise_exception throws: its message becomes the AttentionError's. */
class TemplateRaised extends Error {}

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** Python's datetime.now().strftime(format) in the C locale (English names, as transformers renders
 * on a server): %Y %y %m %d %e %H %I %M %S %p %a %A %b %B %j %%; other directives stay as written. */
export function strftimeNow(format: string, date = new Date()): string {
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const start = new Date(date.getFullYear(), 0, 1);
  return String(format).replace(/%[YymdeHIMSpaAbBj%]/g, (d) => {
    switch (d) {
      case '%Y': return String(date.getFullYear());
      case '%y': return pad(date.getFullYear() % 100);
      case '%m': return pad(date.getMonth() + 1);
      case '%d': return pad(date.getDate());
      case '%e': return String(date.getDate()).padStart(2, ' ');
      case '%H': return pad(date.getHours());
      case '%I': return pad(date.getHours() % 12 || 12);
      case '%M': return pad(date.getMinutes());
      case '%S': return pad(date.getSeconds());
      case '%p': return date.getHours() < 12 ? 'AM' : 'PM';
      case '%a': return DAYS[date.getDay()].slice(0, 3);
      case '%A': return DAYS[date.getDay()];
      case '%b': return MONTHS[date.getMonth()].slice(0, 3);
      case '%B': return MONTHS[date.getMonth()];
      case '%j': return pad(Math.round((new Date(date.getFullYear(), date.getMonth(), date.getDate()).getTime() - start.getTime()) / 86400000) + 1, 3);
      default: return '%';
    }
  });
}

/** Python's range() as @huggingface/jinja's own global (its Template.render sets the same). */
function range(start: number, stop?: number, step = 1): number[] {
  if (stop === undefined) { stop = start; start = 0; }
  if (step === 0) throw new Error('range() step must not be zero');
  const out: number[] = [];
  for (let i = start; step > 0 ? i < stop : i > stop; i += step) out.push(i);
  return out;
}

/**
 * Template.render with our raise_exception and strftime_now (render() declares its own, which a
 * variable cannot replace): the same globals otherwise, then the variables.
 */
function renderWith(template: Template, values: Record<string, unknown>): string {
  const env = new Environment();
  const globals: Record<string, unknown> = { false: false, true: true, none: null, False: false, True: true, None: null, range };
  for (const [k, v] of Object.entries({ ...globals, ...values })) env.set(k, v);
  return new Interpreter(env).run(template.parsed).value as string;
}

/**
 * Renders a conversation with the model's chat template (or the option's): the text the model was
 * trained to continue. Variables as transformers' apply_chat_template passes them: messages, tools
 * and documents (null when not given), add_generation_prompt, bos_token, eos_token, the options'
 * variables, and the functions raise_exception and strftime_now. A template that raises, or that
 * cannot be parsed or rendered, throws an AttentionError saying so.
 */
export function renderChatTemplate(where: string, source: ChatTemplateSource, messages: ChatMessage[], opts?: ChatTemplateOptions): string {
  const options = checkOptions(where, opts, CHAT_TEMPLATE_RULES);
  if (!Array.isArray(messages)) throw new AttentionError(`${where}: messages must be an array of { role, content }, got ${show(messages)}`);
  messages.forEach((m, i) => {
    checkObject(where, `messages[${i}]`, m, '{ role, content }');
    if (typeof m.role !== 'string') throw new AttentionError(`${where}: messages[${i}].role must be a string, got ${show(m.role)}`);
  });
  const variables = options.variables === undefined ? {} : checkObject(where, 'options.variables', options.variables, '{ name: value, ... }');
  const template = compile(where, pickTemplate(where, source, options));
  const values: Record<string, unknown> = {
    ...(source.bosToken !== undefined ? { bos_token: source.bosToken } : {}),
    ...(source.eosToken !== undefined ? { eos_token: source.eosToken } : {}),
    ...variables,
    messages, tools: options.tools ?? null, documents: options.documents ?? null,
    add_generation_prompt: options.addGenerationPrompt === true,
    raise_exception: (message: unknown) => { throw new TemplateRaised(String(message)); },
    strftime_now: (format: unknown) => strftimeNow(String(format)),
  };
  try {
    return renderWith(template, values);
  } catch (e) {
    if (e instanceof TemplateRaised) throw new AttentionError(`${where}: the chat template raised: ${e.message}`);
    throw new AttentionError(`${where}: the chat template could not be rendered (${(e as Error)?.message ?? show(e)})`);
  }
}
