// Parent side of child.mjs: one forked process per engine, request/response over IPC.
// 'advanced' serialization passes Float32Arrays (weights, outputs) without JSON.
import { fork } from 'node:child_process';

const CHILD = new URL('./child.mjs', import.meta.url);

export class ChildEngine {
  constructor(engine, { timeoutMs = 15 * 60 * 1000 } = {}) {
    this.engine = engine;
    this.timeoutMs = timeoutMs;
    this.pending = new Map();
    this.nextId = 1;
    this.stderr = '';
    this.child = fork(CHILD, [engine.module, JSON.stringify(engine.options)], {
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    // Keep the tail of stderr for error reports; engines' own warnings are not bench output.
    this.child.stderr.on('data', (b) => { this.stderr = (this.stderr + b).slice(-4000); });
    this.child.on('message', (m) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.ok) p.resolve(m.result); else p.reject(new Error(m.error));
    });
    this.child.on('exit', (code, signal) => {
      for (const p of this.pending.values()) {
        clearTimeout(p.timer);
        p.reject(new Error(`engine process exited (code ${code}, signal ${signal})${this.stderr ? `: ${this.stderr.trim().split('\n').slice(-3).join(' | ')}` : ''}`));
      }
      this.pending.clear();
    });
  }

  request(cmd, payload = {}) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.child.kill('SIGKILL');
        reject(new Error(`${cmd} timed out after ${this.timeoutMs / 1000} s`));
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.child.send({ id, cmd, ...payload });
    });
  }

  load() { return this.request('load'); }
  prepare(wl, data) { return this.request('prepare', { wl, data }); }
  time(policy) { return this.request('time', { policy }); }
  async close() {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    try { await this.request('exit'); } catch { /* already gone */ }
    await exited;
  }
}
