// The package's analysis entry (dist/analysis.js, "attention-wasm/analysis"): what a page's main
// thread needs to name heads and check attributes, without the WebAssembly glue that the main
// entry loads (about 70 KB a page would carry for nothing).
export * as headRules from './head_rules.js';
export { nearestName, unknownName } from '../validate.js';
export { attentionRollout } from './rollout.js';
export type { RolloutOptions } from './rollout.js';
