"""Reads an rpt model directory (docs/model-format.md) into NumPy: config, weights, vocabularies.

Shared by the Python tests (converter, NumPy reference) and the CTranslate2 export
(tools/rpt_to_ctranslate2.py). Needs NumPy only.
"""

import json
import os
import struct
import zlib

import numpy as np

NUMPY_DTYPES = {"float32": "<f4", "float16": "<f2", "int32": "<i4", "int8": "i1"}


def _array(blob, dtype):
    if dtype == "bfloat16":  # the upper half of a float32
        return (np.frombuffer(blob, "<u2").astype(np.uint32) << 16).view(np.float32)
    return np.frombuffer(blob, NUMPY_DTYPES[dtype])


def read_model_bin(path):
    """{name: numpy array} from an rpt model.bin, checking every rule of the format."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"RPTW":
        raise ValueError("bad magic")
    version, header_len, header_crc, zero = struct.unpack_from("<IQII", data, 4)
    header = data[24:24 + header_len]
    if version != 1 or zero != 0 or zlib.crc32(header) != header_crc:
        raise ValueError("bad version, reserved field or header CRC")
    tensors = {}
    for entry in json.loads(header.decode("utf-8"))["tensors"]:
        offset, nbytes = entry["offset"], entry["nbytes"]
        if offset % 64 or offset < 24 + header_len or offset + nbytes > len(data):
            raise ValueError(f"{entry['name']}: misplaced data")
        blob = data[offset:offset + nbytes]
        if zlib.crc32(blob) != entry["crc32"]:
            raise ValueError(f"{entry['name']}: bad CRC")
        array = _array(blob, entry["dtype"])
        if array.size != int(np.prod(entry["shape"])):
            raise ValueError(f"{entry['name']}: nbytes does not match the shape")
        tensors[entry["name"]] = array.reshape(entry["shape"])
    return tensors


def read_config(model_dir):
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        return json.load(f)


def read_vocabulary(path):
    """Token per line, line number = id (a token may not contain a newline)."""
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1] if os.path.getsize(path) else []
