"""Minimal, independent safetensors reader (numpy only).

Kept separate from the writer in export.py on purpose: the export is checked
by reading the file back with code that shares nothing with the code that
wrote it, the same way the browser's own loader will.

Format: u64 little-endian header size N, N bytes of JSON
{"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}},
then the raw little-endian tensor bytes; offsets are relative to the end of
the header.
"""

import json
import struct

import numpy as np

DTYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8", "I64": "<i8", "I32": "<i4",
          "I16": "<i2", "I8": "i1", "U8": "u1", "BOOL": "?"}


def read_safetensors(path):
    """Return ({name: numpy array}, metadata dict)."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = memoryview(blob)[8 + n:]
    meta = header.pop("__metadata__", {})
    tensors = {}
    spans = []
    for name, info in header.items():
        dtype = np.dtype(DTYPES[info["dtype"]])
        begin, end = info["data_offsets"]
        count = int(np.prod(info["shape"])) if info["shape"] else 1
        if end - begin != count * dtype.itemsize or end > len(data):
            raise ValueError(f"{name}: bad data_offsets {begin}..{end}")
        arr = np.frombuffer(data[begin:end], dtype=dtype).reshape(info["shape"])
        tensors[name] = arr
        spans.append((begin, end))
    # The spec requires the buffers to tile the data section with no holes.
    spans.sort()
    pos = 0
    for begin, end in spans:
        if begin != pos:
            raise ValueError("tensor data is not contiguous")
        pos = end
    if pos != len(data):
        raise ValueError("trailing bytes after the last tensor")
    return tensors, meta
