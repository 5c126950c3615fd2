// listHubGgufFiles / ggufQuantization / ggufFilesOf (bindings/ts/hub/hub_gguf_files.ts): a Hub
// repository's GGUF files with the quantization each name says, what the demo's quantization
// picker lists; against the local Hub stand-in's tree API (tests/js/hub_server.cjs).
const { api } = require('./helpers.cjs');
const { startHubServer } = require('./hub_server.cjs');

describe('ggufQuantization', () => {
  test.each([
    ['SmolLM2-135M-Instruct-Q4_K_M.gguf', 'Q4_K_M'],
    ['qwen2.5-0.5b-instruct-q8_0.gguf', 'Q8_0'],
    ['qwen2.5-7b-instruct-q4_k_m-00001-of-00002.gguf', 'Q4_K_M'],
    ['ggml-model-f16.gguf', 'F16'],
    ['Llama-3.2-1B-Instruct-BF16.gguf', 'BF16'],
    ['SmolLM2-135M.Q6_K.gguf', 'Q6_K'],
    ['Q5_K_S/Meta-Llama-3-8B-Q5_K_S.gguf', 'Q5_K_S'],
    ['gemma-IQ4_XS.gguf', 'IQ4_XS'],
    ['model-TQ1_0.gguf', 'TQ1_0'],
    ['Qwen2-0.5B.gguf', null],
    ['model.gguf', null],
  ])('%s -> %s', (file, quant) => {
    expect(api.ggufQuantization(file)).toBe(quant);
  });

  test('a non-string is refused by name', () => {
    expect(() => api.ggufQuantization(3)).toThrow('ggufQuantization: file must be a string, got 3');
  });
});

describe('ggufFilesOf', () => {
  test('GGUF files only, shards grouped under the first, vision projectors left out, unreadable quantizations marked', () => {
    const paths = ['README.md', 'config.json', 'm-Q8_0.gguf', 'm-IQ4_XS.gguf', 'mmproj-m-f16.gguf',
      'big/m-Q4_K_M-00002-of-00002.gguf', 'big/m-Q4_K_M-00001-of-00002.gguf', 'm.gguf'];
    expect(api.ggufFilesOf(paths)).toEqual([
      { file: 'big/m-Q4_K_M-00001-of-00002.gguf', quant: 'Q4_K_M', shards: ['big/m-Q4_K_M-00001-of-00002.gguf', 'big/m-Q4_K_M-00002-of-00002.gguf'], readable: true },
      { file: 'm-IQ4_XS.gguf', quant: 'IQ4_XS', shards: ['m-IQ4_XS.gguf'], readable: false },
      { file: 'm-Q8_0.gguf', quant: 'Q8_0', shards: ['m-Q8_0.gguf'], readable: true },
      { file: 'm.gguf', quant: null, shards: ['m.gguf'], readable: true },
    ]);
    expect(api.ggufFilesOf(['model.safetensors', 'config.json'])).toEqual([]);
  });
});

describe('listHubGgufFiles', () => {
  let hub;
  const bytes = Buffer.from('GGUF');
  beforeAll(async () => {
    hub = await startHubServer({
      'someone/tiny-GGUF': { files: new Map([['README.md', bytes], ['tiny-F16.gguf', bytes], ['tiny-Q4_K_M.gguf', bytes], ['tiny-Q8_0.gguf', bytes]]) },
      'someone/tiny': { files: new Map([['config.json', bytes], ['model.safetensors', bytes]]) },
    });
  });
  afterAll(() => hub?.close());

  test('the tree API\'s .gguf files, with their quantizations; [] for a safetensors repository', async () => {
    const files = await api.listHubGgufFiles('someone/tiny-GGUF', { hubUrl: hub.url });
    expect(files.map((f) => [f.file, f.quant, f.readable])).toEqual([
      ['tiny-F16.gguf', 'F16', true], ['tiny-Q4_K_M.gguf', 'Q4_K_M', true], ['tiny-Q8_0.gguf', 'Q8_0', true],
    ]);
    expect(await api.listHubGgufFiles('hf:someone/tiny', { hubUrl: hub.url })).toEqual([]);
    expect(hub.requests.map((r) => r.path)).toEqual(['/api/models/someone/tiny-GGUF/tree/main', '/api/models/someone/tiny/tree/main']);
  });

  test('an unknown repository is a HubError; a misspelt option is named', async () => {
    await expect(api.listHubGgufFiles('someone/nothing', { hubUrl: hub.url })).rejects.toMatchObject({ name: 'HubError', code: 'not-found' });
    await expect(api.listHubGgufFiles('someone/tiny-GGUF', { hub_url: hub.url })).rejects.toThrow("listHubGgufFiles: unknown option 'hub_url'");
  });
});
