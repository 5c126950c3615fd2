// A safetensors file whose header lists N one-float tensors (default 1.6 million, a 95 MB header), then
// the time parseSafetensors takes to parse it or refuse it: node bench/memory/safetensors_header.cjs <package dir> [N]
const api = require(process.argv[2] + '/dist/index.cjs');
const n = Number(process.argv[3] ?? 1600000);
const parts = [];
for (let i = 0; i < n; i++) parts.push(`"t${i}":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}`);
const header = Buffer.from('{' + parts.join(',') + '}');
const file = Buffer.alloc(8 + header.length + 4);
file.writeUInt32LE(header.length, 0); header.copy(file, 8);
console.log('header bytes', header.length, 'entries', n);
let t = Date.now();
try { const f = api.parseSafetensors(file); console.log('parsed', f.tensors.size); } catch (e) { console.log('error:', e.message.slice(0, 120)); }
console.log('parseSafetensors ms', Date.now() - t);
