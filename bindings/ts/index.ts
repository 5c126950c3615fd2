// attention-wasm for browsers and bundlers (package.json's "browser" / "import" condition):
// files are fetched, and no Node module is imported, so bundlers need no configuration.
// index_node.ts is the same API for Node.
import { openAttention } from './attention_module.js';
import type { AttentionModule } from './attention_module.js';
import type { LoadOptions } from './runtime/loader.js';
import { browserPlatform } from './platform_browser.js';

export * from './exports.js';

/**
 * Loads the library: the .wasm is fetched from beside this script (bundlers copy it), or from
 * `wasmUrl`. Several calls give independent modules.
 */
export async function loadAttention(options: LoadOptions = {}): Promise<AttentionModule> {
  return openAttention(browserPlatform, options);
}
