"""The generate workload's 8-bit onnxruntime-web peer: bench/generate/export.py's model.onnx with its
MatMul weights quantized to int8 the way transformers.js makes its default 8-bit ("q8",
*_quantized.onnx) files: onnxruntime's dynamic quantization (IntegerOps mode) with signed int8
weights, one symmetric scale per tensor (per_channel and reduce_range off, as transformers.js's
defaults), uint8 activations quantized at run time.

Usage: /usr/bin/python3 quantize8.py OUT_DIR --source SRC_DIR --source-key KEY [--key KEY]

Each MatMul whose B is an initializer becomes
    DynamicQuantizeLinear(A) -> A_q (uint8), A_scale, A_zero
    MatMulInteger(A_q, B_q int8, A_zero, B_zero = 0) -> int32
    Cast(float) * (A_scale * B_scale)
which onnxruntime fuses at load into its DynamicQuantizeMatMul kernel. Each Gather from an
initializer (the token embeddings) reads an int8 table and dequantizes the gathered rows
(DequantizeLinear), as onnxruntime's quantizer does for Gather. Nothing else changes (LayerNorm,
softmax, the past key/values stay float32).

Also OUT_DIR/model_nbits8.onnx: each such MatMul as one com.microsoft MatMulNBits with bits=8 and
blocks of 32 along the reduction, one float scale a block (symmetric, as this library's Q8_0;
onnxruntime-web's wasm runs it), the Gathers left float32 as onnxruntime's blockwise quantizer
leaves them. transformers.js uses MatMulNBits for its 4-bit files, not its 8-bit ones.

Written without onnxruntime's Python package (not in Debian): the rewrites are the documented
graphs of those quantizers, done with the onnx package. A manifest.json (written last) holds the
quantized nodes and bytes of each file.
"""

import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def quantize_symmetric(w):
    """int8 in [-127, 127] and the scale: w ~ q * scale (onnxruntime's symmetric QInt8)."""
    rmax = float(np.abs(w).max())
    scale = rmax / 127.0 if rmax > 0 else 1.0
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return q, np.float32(scale)


def add_weight(graph, name, w):
    """The int8 tensor, its scale and zero point as initializers; returns their names."""
    q, scale = quantize_symmetric(w)
    names = (f"{name}_quantized", f"{name}_scale", f"{name}_zero_point")
    graph.initializer.extend([
        numpy_helper.from_array(q, names[0]),
        numpy_helper.from_array(np.array(scale, dtype=np.float32), names[1]),
        numpy_helper.from_array(np.array(0, dtype=np.int8), names[2]),
    ])
    return names, q.nbytes


def matmul_nodes(node, qnames):
    """The dynamic-quantization replacement of one MatMul (outputs keep the original name)."""
    a, out, base = node.input[0], node.output[0], node.name or node.output[0]
    wq, ws, wz = qnames
    return [
        helper.make_node("DynamicQuantizeLinear", [a], [f"{a}_quantized_{base}", f"{a}_scale_{base}", f"{a}_zero_point_{base}"], name=f"{base}_quantize"),
        helper.make_node("MatMulInteger", [f"{a}_quantized_{base}", wq, f"{a}_zero_point_{base}", wz], [f"{out}_int32"], name=f"{base}_quant"),
        helper.make_node("Cast", [f"{out}_int32"], [f"{out}_float"], to=TensorProto.FLOAT, name=f"{base}_cast"),
        helper.make_node("Mul", [f"{a}_scale_{base}", ws], [f"{out}_scales"], name=f"{base}_scales_mul"),
        helper.make_node("Mul", [f"{out}_float", f"{out}_scales"], [out], name=f"{base}_output_scale_mul"),
    ]


def nbits_weight(graph, name, w, block=32):
    """MatMulNBits' 8-bit layout of a K x N weight: B [N, K/block, block] uint8 (value + 128, the
    default zero point), one float scale per block: max |w| / 127, symmetric as our Q8_0."""
    k, n = w.shape
    blocks = w.T.reshape(n, k // block, block)
    scale = np.abs(blocks).max(axis=2) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(blocks / scale[:, :, None]), -127, 127).astype(np.int16) + 128
    names = (f"{name}_nbits8", f"{name}_nbits8_scales")
    graph.initializer.extend([
        numpy_helper.from_array(q.astype(np.uint8), names[0]),
        numpy_helper.from_array(scale.astype(np.float32).reshape(-1), names[1]),
    ])
    return names, q.size + scale.size * 4


def nbits_node(node, qnames, k, n, block=32):
    """One MatMulNBits (com.microsoft) in place of the MatMul, same output name."""
    return helper.make_node("MatMulNBits", [node.input[0], *qnames], [node.output[0]], name=f"{node.name or node.output[0]}_nbits8",
                            domain="com.microsoft", K=k, N=n, bits=8, block_size=block)


def gather_nodes(node, qnames):
    """Gather rows of the int8 table, then dequantize them."""
    out, base = node.output[0], node.name or node.output[0]
    wq, ws, wz = qnames
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    return [
        helper.make_node("Gather", [wq, node.input[1]], [f"{out}_quantized"], name=f"{base}_quant", **attrs),
        helper.make_node("DequantizeLinear", [f"{out}_quantized", ws, wz], [out], name=f"{base}_dequantize"),
    ]


def rewrite_integer(model):
    """The MatMulInteger graph (transformers.js's q8): MatMuls and Gathers on int8 tensors."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    quantized, nodes, done, nbytes = {}, [], {"MatMul": 0, "Gather": 0}, 0
    for node in graph.node:
        b = node.input[1] if node.op_type == "MatMul" else node.input[0] if node.op_type == "Gather" else None
        if b is None or b not in inits or inits[b].data_type != TensorProto.FLOAT:
            nodes.append(node)
            continue
        if b not in quantized:  # one int8 copy of a tensor two nodes share
            quantized[b], n = add_weight(graph, b, numpy_helper.to_array(inits[b]))
            nbytes += n
        nodes.extend((matmul_nodes if node.op_type == "MatMul" else gather_nodes)(node, quantized[b]))
        done[node.op_type] += 1
    replace(graph, nodes, quantized)
    return done, nbytes


def rewrite_nbits(model):
    """The MatMulNBits graph: every MatMul with a constant weight at 8 bits in blocks of 32."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    quantized, nodes, done, nbytes = {}, [], {"MatMul": 0}, 0
    for node in graph.node:
        b = node.input[1] if node.op_type == "MatMul" else None
        if b is None or b not in inits or inits[b].data_type != TensorProto.FLOAT or inits[b].dims[0] % 32:
            nodes.append(node)
            continue
        w = numpy_helper.to_array(inits[b])
        quantized[b], n = nbits_weight(graph, b, w)
        nbytes += n
        nodes.append(nbits_node(node, quantized[b], *w.shape))
        done["MatMul"] += 1
    replace(graph, nodes, quantized)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return done, nbytes


def replace(graph, nodes, quantized):
    """The new node list; float originals go unless some other node still reads them."""
    still_read = {i for n in nodes for i in n.input}
    kept = [t for t in graph.initializer if t.name not in quantized or t.name in still_read]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out_dir")
    p.add_argument("--source", required=True)
    p.add_argument("--source-key", default="", help="the source folder's manifest key (the caller's cache key)")
    p.add_argument("--key", default="")
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    manifest = os.path.join(a.out_dir, "manifest.json")
    if os.path.exists(manifest):
        os.remove(manifest)

    written = {}
    for name, rewrite in [("model.onnx", rewrite_integer), ("model_nbits8.onnx", rewrite_nbits)]:
        model = onnx.load(os.path.join(a.source, "model.onnx"))
        done, nbytes = rewrite(model)
        out = os.path.join(a.out_dir, name)
        onnx.save(model, out)
        onnx.checker.check_model(out)
        written[name] = {"quantized_nodes": done, "quantized_bytes": nbytes}
        print(f"quantize8.py: wrote {out} ({os.path.getsize(out) / 2**20:.0f} MiB; {done})")

    with open(manifest, "w") as f:
        json.dump({"key": a.key, "source_key": a.source_key, "written": written, "onnx": onnx.__version__, "files": list(written)}, f, indent=1)


if __name__ == "__main__":
    main()
