// The model families this library runs, in one table: config.json's model_type(s) -> the files the
// family reads (and its tokenizer), its config reader and its class. loadModel, the folder, shipped
// and Hub loaders and the demo's worker all read it. Adding a family: its core in src/models/ with
// its embind handle, its model file here in bindings/ts/models/ (class, Files type, readFiles,
// readConfig), and one entry below; a family that GGUF files hold also names its architectures
// (general.architecture) and the reader of such a file.
import { AttentionError } from '../errors.js';
import type { GgufFile, GgufHeader } from '../loading/gguf.js';
import type { GgufStream } from '../loading/gguf_stream.js';
import type { CheckpointFiles, FilesReader } from '../loading/model_files.js';
import type { ModelLoadOptions } from '../loading/weight_dtype.js';
import type { WasmModule } from '../runtime/wasm_module.js';
import { show } from '../validate.js';
import { BartModel, readBartConfig, readBartFiles } from './bart_model.js';
import type { BartFiles } from './bart_model.js';
import { BertModel, readBertConfig, readBertFiles } from './bert_model.js';
import type { BertFiles } from './bert_model.js';
import { Gpt2Model, readGpt2Config, readGpt2Files } from './gpt2_model.js';
import type { Gpt2Files } from './gpt2_model.js';
import { LLAMA_GGUF_ARCHITECTURES, readLlamaGguf, readLlamaGgufStream } from './llama_gguf.js';
import { LlamaModel, readLlamaConfig, readLlamaFiles } from './llama_model.js';
import type { LlamaFiles } from './llama_model.js';

/** One model family. */
export interface ModelFamily<Name extends string = string, Types extends string = string> {
  /** Its class's `type` (and a shipped model's). */
  readonly name: Name;
  /** The config.json model_types it runs. */
  readonly modelTypes: readonly Types[];
  /** How a config.json without model_type is recognized as this family's (GPT-2's older ones). */
  readonly recognize?: (config: Record<string, unknown>) => boolean;
  /** Its tokenizer and the files it comes from. */
  readonly tokenizer: string;
  /** Reads the files it needs beside config.json and the weights. */
  readonly readFiles: FilesReader;
  /** config.json checked, defaults filled in (a named error for what the core does not run). */
  readonly readConfig: (config: Record<string, unknown>) => unknown;
  /** The model, from its files in memory. */
  readonly create: (mod: WasmModule, files: CheckpointFiles, options: ModelLoadOptions) => Model | Promise<Model>;
  /** GGUF files of this family: their general.architecture values, and the file (in memory, or
   * being read) as the family's files. */
  readonly gguf?: {
    readonly architectures: readonly string[];
    readonly read: (file: GgufFile) => CheckpointFiles;
    readonly readStream: (stream: GgufStream) => Promise<CheckpointFiles>;
  };
}

/** Every family, in the order MODEL_TYPES lists them. */
const FAMILIES = [
  {
    name: 'gpt2', modelTypes: ['gpt2'], recognize: (c) => 'n_embd' in c,
    tokenizer: 'byte-level BPE: vocab.json + merges.txt, or tokenizer.json',
    readFiles: readGpt2Files, readConfig: readGpt2Config,
    create: (mod, files, options) => new Gpt2Model(mod, files as Gpt2Files, options),
  },
  {
    name: 'bert', modelTypes: ['bert'],
    tokenizer: "WordPiece: vocab.txt (+ tokenizer_config.json) or tokenizer.json; sentence-transformers' modules.json / 1_Pooling/config.json",
    readFiles: readBertFiles, readConfig: readBertConfig,
    create: (mod, files, options) => new BertModel(mod, files as BertFiles, options),
  },
  {
    name: 'bart', modelTypes: ['bart'],
    tokenizer: 'symbols (vocab.json) or byte-level BPE (vocab.json + merges.txt)',
    readFiles: readBartFiles, readConfig: readBartConfig,
    create: (mod, files, options) => new BartModel(mod, files as BartFiles, options),
  },
  {
    name: 'llama', modelTypes: ['llama', 'qwen2', 'qwen3', 'mistral', 'phi3', 'smollm3', 'gemma3_text', 'gemma3'],
    tokenizer: 'tokenizer.json (+ tokenizer_config.json, generation_config.json)',
    readFiles: readLlamaFiles, readConfig: readLlamaConfig,
    create: async (mod, files, options) => {
      const model = new LlamaModel(mod, files as LlamaFiles, options);
      await model.loading;  // (weights streaming in from a GGUF file)
      return model;
    },
    gguf: { architectures: LLAMA_GGUF_ARCHITECTURES, read: readLlamaGguf, readStream: readLlamaGgufStream },
  },
] as const satisfies readonly ModelFamily[];

/** Any model loadModel() returns; `type` tells which. */
export type Model = Gpt2Model | BertModel | BartModel | LlamaModel;

/** A family's name (its class's `type`). */
export type ModelFamilyName = (typeof FAMILIES)[number]['name'];
/** The model families this library runs, by config.json's model_type. */
export type ModelType = (typeof FAMILIES)[number]['modelTypes'][number];
/** A model's files in memory, as loadModel takes them. */
export type ModelFiles = Gpt2Files | BertFiles | BartFiles | LlamaFiles;

/** The families, for callers that pick by family (the demo's worker). */
export const MODEL_FAMILIES: readonly ModelFamily<ModelFamilyName, ModelType>[] = FAMILIES;
export const MODEL_TYPES: readonly ModelType[] = FAMILIES.flatMap((f) => f.modelTypes);

/** config.json's model_type as declared (or recognized, for a GPT-2 without one); not checked. */
export function declaredModelType(config: unknown): unknown {
  if (typeof config !== 'object' || config === null) throw new AttentionError('config.json: not an object');
  const c = config as Record<string, unknown>;
  try {
    return c.model_type ?? MODEL_FAMILIES.find((f) => f.recognize?.(c))?.modelTypes[0];
  } catch (e) {
    throw new AttentionError(`config.json: model_type could not be read: ${show((e as Error)?.message ?? e)}`);
  }
}

/** The family that runs a model_type, if any. */
export function familyOfType(type: unknown): ModelFamily<ModelFamilyName, ModelType> | undefined {
  return typeof type === 'string' ? MODEL_FAMILIES.find((f) => (f.modelTypes as readonly string[]).includes(type)) : undefined;
}

/** The family of a config.json, or a named error listing the model types this library runs. */
export function modelFamily(config: unknown): ModelFamily<ModelFamilyName, ModelType> {
  const type = declaredModelType(config);
  const family = familyOfType(type);
  if (!family) throw new AttentionError(`config.json: model_type ${show(type)} is not supported (this library runs: ${MODEL_TYPES.join(', ')})`);
  return family;
}

/** The files reader for a config.json's family (loading/model_files.ts's ReaderFor). */
export const readerFor = (config: Record<string, unknown>): FilesReader => modelFamily(config).readFiles;

/** The GGUF architectures this library runs. */
export const GGUF_ARCHITECTURES: readonly string[] = MODEL_FAMILIES.flatMap((f) => f.gguf?.architectures ?? []);

/** The family of a GGUF file's architecture, or a named error listing the ones this library runs. */
function ggufFamily(header: GgufHeader): ModelFamily<ModelFamilyName, ModelType> & { gguf: NonNullable<ModelFamily['gguf']> } {
  const arch = header.metadata.get('general.architecture');
  const family = MODEL_FAMILIES.find((f) => typeof arch === 'string' && f.gguf?.architectures.includes(arch));
  if (!family?.gguf)
    throw new AttentionError(`GGUF: general.architecture ${show(arch)} is not supported (this library runs: ${GGUF_ARCHITECTURES.join(', ')})`);
  return family as ModelFamily<ModelFamilyName, ModelType> & { gguf: NonNullable<ModelFamily['gguf']> };
}

/** A GGUF file in memory as its family's files, with the family. */
export function ggufModelFiles(file: GgufFile): { family: ModelFamily<ModelFamilyName, ModelType>; files: CheckpointFiles } {
  const family = ggufFamily(file);
  return { family, files: family.gguf.read(file) };
}

/** A GGUF file being read, likewise: its tensors go into the model as they arrive. */
export async function ggufStreamFiles(stream: GgufStream): Promise<{ family: ModelFamily<ModelFamilyName, ModelType>; files: CheckpointFiles }> {
  const family = ggufFamily(stream.header);
  return { family, files: await family.gguf.readStream(stream) };
}
