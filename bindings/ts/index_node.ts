// attention-wasm for Node (package.json's "node" condition; ESM dist/index.node.js and CommonJS
// dist/index.cjs): files are read from disk and the threaded build runs on worker_threads.
// index.ts is the same API for browsers.
import { openAttention } from './attention_module.js';
import type { AttentionModule } from './attention_module.js';
import type { LoadOptions } from './runtime/loader.js';
import { nodePlatform } from './platform_node.js';

export * from './exports.js';

/**
 * Loads the library: the .wasm is read from the package, or from `wasmUrl`. Several calls give
 * independent modules.
 */
export async function loadAttention(options: LoadOptions = {}): Promise<AttentionModule> {
  return openAttention(nodePlatform, options);
}
