// A minimal ONNX protobuf *encoder*: just the messages the benchmark's graphs need, so the bench
// generates its models itself without a protobuf dependency. Field numbers follow onnx.proto
// (ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto, ValueInfoProto, TypeProto).
// Browser-safe (no Node imports): the browser variant builds its models with it too.

const WIRE_VARINT = 0;
const WIRE_BYTES = 2;

export const DataType = { FLOAT: 1, UINT8: 2, INT8: 3, INT32: 6, INT64: 7 };
const AttrType = { FLOAT: 1, INT: 2, STRING: 3, INTS: 7 };

const utf8 = new TextEncoder();

// A growable byte sink. Nested messages are encoded into their own Writer first, because a
// length-delimited field needs its length before its bytes.
class Writer {
  constructor() { this.chunks = []; this.length = 0; }
  bytes(u8) { this.chunks.push(u8); this.length += u8.length; return this; }
  varint(value) {
    // BigInt so negative int64 values (two's complement, 10 bytes) and >2^53 encode correctly.
    let v = BigInt.asUintN(64, BigInt(value));
    const out = [];
    do {
      let byte = Number(v & 0x7fn);
      v >>= 7n;
      if (v !== 0n) byte |= 0x80;
      out.push(byte);
    } while (v !== 0n);
    return this.bytes(Uint8Array.from(out));
  }
  tag(field, wire) { return this.varint((field << 3) | wire); }
  int(field, value) { return this.tag(field, WIRE_VARINT).varint(value); }
  lenDelimited(field, u8) { return this.tag(field, WIRE_BYTES).varint(u8.length).bytes(u8); }
  string(field, s) { return this.lenDelimited(field, utf8.encode(s)); }
  message(field, writer) { return this.lenDelimited(field, writer.finish()); }
  float32(field, f) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, f, true);
    return this.tag(field, 5 /* fixed32 */).bytes(b);
  }
  finish() {
    const out = new Uint8Array(this.length);
    let offset = 0;
    for (const c of this.chunks) { out.set(c, offset); offset += c.length; }
    return out;
  }
}

/** TensorProto with raw little-endian data (x86 and wasm are little-endian). */
function tensorProto(name, dims, data) {
  const w = new Writer();
  for (const d of dims) w.int(1, d);                 // dims
  let type;
  if (data instanceof Float32Array) type = DataType.FLOAT;
  else if (data instanceof BigInt64Array) type = DataType.INT64;
  else if (data instanceof Int32Array) type = DataType.INT32;
  else if (data instanceof Uint8Array) type = DataType.UINT8;
  else if (data instanceof Int8Array) type = DataType.INT8;
  else throw new Error(`tensor ${name}: unsupported data ${data?.constructor?.name}`);
  w.int(2, type);                                    // data_type
  w.string(8, name);                                 // name
  w.lenDelimited(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength)); // raw_data
  return w;
}

function attributeProto(name, value) {
  const w = new Writer().string(1, name);
  if (value && typeof value === 'object' && '__float' in value) {
    w.float32(2, value.__float).int(20, AttrType.FLOAT);
  } else if (typeof value === 'number' && Number.isInteger(value) && !Object.is(value, -0)) {
    w.int(3, value).int(20, AttrType.INT);
  } else if (typeof value === 'number') {
    w.float32(2, value).int(20, AttrType.FLOAT);
  } else if (typeof value === 'string') {
    w.string(4, value).int(20, AttrType.STRING);
  } else if (Array.isArray(value)) {
    for (const v of value) w.int(8, v);              // ints, unpacked form is always accepted
    w.int(20, AttrType.INTS);
  } else {
    throw new Error(`attribute ${name}: unsupported value ${value}`);
  }
  return w;
}

/** Marks an attribute as FLOAT even when its value is integral (1.0 would otherwise be an INT). */
export function floatAttr(f) { return { __float: f }; }

function nodeProto({ op, inputs, outputs, name, domain, attrs = {} }) {
  const w = new Writer();
  for (const i of inputs) w.string(1, i);
  for (const o of outputs) w.string(2, o);
  if (name) w.string(3, name);
  w.string(4, op);
  for (const [k, v] of Object.entries(attrs)) w.message(5, attributeProto(k, v));
  if (domain) w.string(7, domain);
  return w;
}

// ValueInfoProto { name, type: TypeProto { tensor_type: { elem_type, shape { dim { dim_value } } } } }
function valueInfo(name, elemType, dims) {
  const shape = new Writer();
  for (const d of dims) {
    const dim = new Writer();
    if (typeof d === 'string') dim.string(2, d); else dim.int(1, d);
    shape.message(1, dim);
  }
  const tensorType = new Writer().int(1, elemType).message(2, shape);
  const type = new Writer().message(1, tensorType);
  return new Writer().string(1, name).message(2, type);
}

/**
 * Encodes a ModelProto.
 * graph: { name, nodes: [{op, inputs, outputs, domain?, attrs?}], initializers: [{name, dims, data}],
 *          inputs: [{name, dims, type?}], outputs: [{name, dims, type?}] }
 * opsets: [{ domain: '' | 'com.microsoft', version }]
 */
export function encodeModel(graph, opsets, { irVersion = 8, producer = 'attention-wasm-bench' } = {}) {
  const g = new Writer();
  graph.nodes.forEach((n, i) => g.message(1, nodeProto({ name: `${n.op}_${i}`, ...n })));
  g.string(2, graph.name ?? 'graph');
  for (const t of graph.initializers ?? []) g.message(5, tensorProto(t.name, t.dims, t.data));
  for (const v of graph.inputs) g.message(11, valueInfo(v.name, v.type ?? DataType.FLOAT, v.dims));
  for (const v of graph.outputs) g.message(12, valueInfo(v.name, v.type ?? DataType.FLOAT, v.dims));

  const m = new Writer();
  m.int(1, irVersion);
  m.string(2, producer);
  m.message(7, g);
  for (const o of opsets) m.message(8, new Writer().string(1, o.domain).int(2, o.version));
  return m.finish();
}
