"""The safetensors writer the exports share (F16/F32 numpy arrays, 8-byte aligned data).

Checked by reading back with safetensors_read.py, which shares no code with this.
"""

import json
import struct

import numpy as np


def write_safetensors(path, tensors, metadata):
    """tensors: ordered {name: numpy array (already in the wanted dtype)}."""
    names = {np.dtype("<f2"): "F16", np.dtype("<f4"): "F32"}
    header, offset, blobs = {}, 0, []
    for name, arr in tensors.items():
        raw = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": names[arr.dtype.newbyteorder("<")],
                        "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    # Pad with spaces so the tensor data starts 8-byte aligned (allowed by
    # the format; lets a JS reader make typed-array views without copying).
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in blobs:
            f.write(raw)
