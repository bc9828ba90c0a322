#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_safetensors into tests/fuzz/corpus/safetensors/.

Small valid safetensors files made byte by byte (no safetensors package): an 8-byte
little-endian header length, the JSON header, then the tensors' little-endian bytes.
Run it from anywhere: python3 tests/fuzz/corpus/make_safetensors_seeds.py
"""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "safetensors")


def safetensors(tensors, metadata=None, pad=0):
    """tensors: list of (name, dtype, shape, raw bytes), stored in that order."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    data = b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode() + b" " * pad
    return struct.pack("<Q", len(text)) + text + data


def f32(*values):
    return struct.pack("<%df" % len(values), *values)


def u16(*values):
    return struct.pack("<%dH" % len(values), *values)


SEEDS = {
    "f32_2x3.safetensors": safetensors([("weight", "F32", [2, 3], f32(1.0, -2.5, 0.5, 3.25, -0.0, 1e-40))]),
    "f16_values.safetensors": safetensors(
        [("h", "F16", [8], u16(0x3C00, 0xC000, 0x7BFF, 0x0001, 0x03FF, 0x7C00, 0xFC00, 0x7E00))]),
    "bf16_2x2.safetensors": safetensors([("b", "BF16", [2, 2], u16(0x3F80, 0x4049, 0xC0A0, 0x7F80))]),
    "scalar.safetensors": safetensors([("scale", "F32", [], f32(0.125))]),
    "metadata_mixed.safetensors": safetensors(
        [("blocks.0.attn.qkv.weight", "F16", [3, 2], u16(0x3C00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600)),
         ("blocks.0.attn.qkv.bias", "BF16", [3], u16(0x3F80, 0x0000, 0xBF80)),
         ("empty", "F32", [0, 3], b""),
         ("cls_token", "F32", [1, 1, 2], f32(0.5, -0.5))],
        metadata={"format": "pt", "source": "make_safetensors_seeds.py"}),
    "padded_header.safetensors": safetensors([("x", "F32", [1], f32(7.0))], pad=5),
    "empty_header.safetensors": safetensors([]),
}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print("%s: %d bytes" % (name, len(data)))


if __name__ == "__main__":
    main()
