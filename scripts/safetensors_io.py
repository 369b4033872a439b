"""The safetensors writer the fixture scripts share: the format as safetensors' spec gives it (an 8-byte little-endian
header length, a JSON header padded with spaces to 8 bytes, then the tensors' bytes in order)."""
import json
import struct

import torch

# safetensors dtype name → the torch dtype and the integer view its bytes are written through
DTYPES = {"F32": (torch.float32, torch.int32), "BF16": (torch.bfloat16, torch.int16), "F16": (torch.float16, torch.int16)}
NAMES = {torch_dtype: name for name, (torch_dtype, _) in DTYPES.items()}


def write_safetensors(path, tensors, dtype=None):
    """Writes {name: tensor}; each tensor as `dtype` ("F32", "BF16", "F16": rounded to nearest even as torch does)
    or, with dtype None, in its own dtype."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        kind = dtype or NAMES[t.dtype]
        torch_dtype, view = DTYPES[kind]
        data = t.contiguous().to(torch_dtype).view(view).numpy().tobytes()
        header[name] = {"dtype": kind, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
