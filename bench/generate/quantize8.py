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

Written without onnxruntime's Python package (not in Debian): the rewrite is the documented
graph of that quantizer, done with the onnx package. Writes OUT_DIR/model.onnx and a manifest.json
(written last) with the quantized tensors' count and bytes.
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


def gather_nodes(node, qnames):
    """Gather rows of the int8 table, then dequantize them."""
    out, base = node.output[0], node.name or node.output[0]
    wq, ws, wz = qnames
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    return [
        helper.make_node("Gather", [wq, node.input[1]], [f"{out}_quantized"], name=f"{base}_quant", **attrs),
        helper.make_node("DequantizeLinear", [f"{out}_quantized", ws, wz], [out], name=f"{base}_dequantize"),
    ]


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

    model = onnx.load(os.path.join(a.source, "model.onnx"))
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    quantized, nodes, done = {}, [], {"MatMul": 0, "Gather": 0}
    int8_bytes = 0
    for node in graph.node:
        b = node.input[1] if node.op_type == "MatMul" else node.input[0] if node.op_type == "Gather" else None
        if b is None or b not in inits or inits[b].data_type != TensorProto.FLOAT:
            nodes.append(node)
            continue
        if b not in quantized:  # one int8 copy of a tensor two nodes share
            quantized[b], n = add_weight(graph, b, numpy_helper.to_array(inits[b]))
            int8_bytes += n
        nodes.extend((matmul_nodes if node.op_type == "MatMul" else gather_nodes)(node, quantized[b]))
        done[node.op_type] += 1
    # The float originals go unless some other node still reads them.
    still_read = {i for n in nodes for i in n.input}
    kept = [t for t in graph.initializer if t.name not in quantized or t.name in still_read]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept)
    out = os.path.join(a.out_dir, "model.onnx")
    onnx.save(model, out)
    onnx.checker.check_model(out)

    with open(manifest, "w") as f:
        json.dump({"key": a.key, "source_key": a.source_key, "quantized_nodes": done, "int8_tensors": len(quantized),
                   "int8_bytes": int8_bytes, "onnx": onnx.__version__, "files": ["model.onnx"]}, f, indent=1)
    print(f"quantize8.py: wrote {out} ({os.path.getsize(out) / 2**20:.0f} MiB; {done['MatMul']} MatMul and {done['Gather']} Gather nodes "
          f"on {len(quantized)} int8 tensors, {int8_bytes / 2**20:.0f} MiB)")


if __name__ == "__main__":
    main()
