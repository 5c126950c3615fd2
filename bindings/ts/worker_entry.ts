// The module worker loadAttentionWorker() starts (dist/worker-entry.js): it loads the library here,
// off the page's main thread, and serves the page's calls on it (worker_serve.ts). Inside a
// cross-origin isolated page the worker is isolated too, so loadAttention() picks the threaded
// build here as it would on the page.
import { loadAttention } from './index.js';
import { serveInWorker } from './worker_serve.js';

serveInWorker(loadAttention);
