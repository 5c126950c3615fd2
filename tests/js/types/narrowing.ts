// Results narrowed by their options (types.test.cjs type-checks this file under tsc --strict):
// what an option asks for is there without `?.`, and what was not asked for stays optional (the
// line after each expect-error directive must be an error, or tsc fails on the unused directive).
import type { BartModel, BertModel, Gpt2Model, LlamaModel, MultiHeadAttention, RunOptions } from 'attention-wasm';
import { loadAttentionWorker } from 'attention-wasm/worker';
import brownGpt2 from 'attention-wasm/models/brown-gpt2';
import brownLlama from 'attention-wasm/models/brown-llama';

declare const gpt2: Gpt2Model, llama: LlamaModel, bert: BertModel, bart: BartModel, mha: MultiHeadAttention;
declare const x: Float32Array, options: RunOptions;
const use = (...values: unknown[]): unknown[] => values;

export function onThePage(): void {
  const run = gpt2.run('The jury', { prependBos: true, attention: true, traceLayer: 1 });
  use(run.attention.length, run.trace.weights.length);
  use(llama.run('The jury', { traceLayer: 0 }).trace.qBeforeRotary.length);
  // @ts-expect-error attention was not asked for
  use(gpt2.run('The jury').attention.length);
  // @ts-expect-error options typed as RunOptions may not ask for it
  use(gpt2.run('The jury', options).attention.length);
  // @ts-expect-error attention: false
  use(gpt2.run('The jury', { attention: false }).attention.length);
  // @ts-expect-error no traceLayer
  use(llama.run('The jury', { attention: true }).trace.weights);

  const b = bert.run('The cat', { attention: true, logits: true, padTo: 8, traceLayer: 0 });
  use(b.attention.length, b.logits.length, b.padding.length, b.trace.weights.length);
  // @ts-expect-error logits were not asked for
  use(bert.run('The cat').logits.length);
  // @ts-expect-error padding comes with padTo
  use(bert.run('The cat', { logits: true }).padding.length);

  use(bart.generate('phone', { traceLayer: 0 }).trace.weights, bart.run('phone', [2], { traceLayer: 0, traceKind: 'self' }).trace.z);
  // @ts-expect-error no traceLayer
  use(bart.generate('phone').trace.weights);
  use(bart.generate('phone', { attention: true }).tokenAttention.length);
  // @ts-expect-error beam search has no tokenAttention
  use(bart.generate('phone', { attention: true, beams: 3 }).tokenAttention.length);

  void gpt2.generate('The jury', { attention: true, onToken: (event) => use(event.attention.length) }).then((out) => use(out.tokenAttention.length));
  // @ts-expect-error beam search has no tokenAttention
  void gpt2.generate('The jury', { attention: true, beams: 2 }).then((out) => use(out.tokenAttention.length));
  void llama.chat([{ role: 'user', content: 'Hi' }], { attention: true, onToken: (event) => use(event.attention.length) });
  // @ts-expect-error onToken's event has attention only with attention: true
  void gpt2.generate('The jury', { onToken: (event) => use(event.attention.length) });

  use(mha.forward(x, { returnAttention: true, trace: true }).attention.length);
  // @ts-expect-error returnAttention was not asked for
  use(mha.forward(x).attention.length);
}

export async function inTheWorker(): Promise<void> {
  const attn = await loadAttentionWorker();
  const model = await attn.loadModel(brownGpt2);
  const run = await model.run('The jury', { attention: true, traceLayer: 2 });
  use(run.attention.length, run.trace.weights.length, model.config.n_layer, attn.variant);
  // @ts-expect-error attention was not asked for
  use((await model.run('The jury')).attention.length);
  const ids: number[] = await model.tokenizer.encode('The jury');
  await model.generate('The jury', { attention: true, onToken: (event) => use(event.attention.length, ids) });
  const any = await attn.loadModel('/models/brown-bert/');
  if (any.type === 'bert') use((await any.run('The cat', { logits: true })).logits.length, (await any.embed(['a'])).row(0));
  const layer = await attn.createMultiHeadAttention({ dModel: 4, numHeads: 2 });
  use((await layer.forward(x, { returnAttention: true })).attention.length);
  // @ts-expect-error a proxy's methods return promises
  use(model.run('The jury').tokens);
  await model.dispose();
  const llama = await attn.loadModel(brownLlama, { dtype: 'q4' });
  const run2 = await llama.run('The jury', { attention: true });
  const file: Uint8Array = await llama.save();
  use(file.length, run2.attention.length);
  // @ts-expect-error saveStream() stays on the page (a stream is not posted)
  use(llama.saveStream());
  attn.terminate();
}
