#!/usr/bin/python3
"""Writes a random-weight ViT checkpoint in timm's tensor names, for timing and memory checks of
`attnlab vit` on real shapes (no download: the weights are N(0, sigma) from a fixed seed).

    /usr/bin/python3 tests/bench/make_random_vit.py {S16,B16,S8} OUT_DIR

writes OUT_DIR/model.safetensors (float32) and OUT_DIR/config.json (timm's model_args: the
heads). S16: ViT-S/16 (D 384, 6 heads, 12 blocks, MLP 1536, patch 16, 14x14 positions, 1000
classes, about 88 MB); B16: ViT-B/16 (D 768, 12 heads, MLP 3072, about 346 MB); S8: ViT-S/8
(patch 8, 28x28 positions, as DINO's ViT-S/8). The safetensors file is written by hand (an
8-byte little-endian header length, the JSON header, the raw bytes), as the format specifies.
"""
import json
import os
import struct
import sys

import numpy as np

SHAPES = {"S16": (384, 6, 16), "B16": (768, 12, 16), "S8": (384, 6, 8)}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in SHAPES:
        sys.exit(__doc__)
    D, H, P = SHAPES[sys.argv[1]]
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    grid, M, depth, classes = 224 // P, 4 * D, 12, 1000
    tensors = {}

    def add(name, shape, sd, mean=0.0):
        tensors[name] = (mean + sd * rng.standard_normal(shape)).astype(np.float32)

    w = D ** -0.5
    add("patch_embed.proj.weight", (D, 3, P, P), 0.02)
    add("patch_embed.proj.bias", (D,), 0.02)
    add("cls_token", (1, 1, D), 0.5)
    add("pos_embed", (1, 1 + grid * grid, D), 0.5)
    for i in range(depth):
        b = f"blocks.{i}."
        add(b + "norm1.weight", (D,), 0.1, 1.0), add(b + "norm1.bias", (D,), 0.1)
        add(b + "attn.qkv.weight", (3 * D, D), w), add(b + "attn.qkv.bias", (3 * D,), 0.1)
        add(b + "attn.proj.weight", (D, D), w), add(b + "attn.proj.bias", (D,), 0.1)
        add(b + "norm2.weight", (D,), 0.1, 1.0), add(b + "norm2.bias", (D,), 0.1)
        add(b + "mlp.fc1.weight", (M, D), w), add(b + "mlp.fc1.bias", (M,), 0.1)
        add(b + "mlp.fc2.weight", (D, M), M ** -0.5), add(b + "mlp.fc2.bias", (D,), 0.1)
    add("norm.weight", (D,), 0.1, 1.0), add("norm.bias", (D,), 0.1)
    add("head.weight", (classes, D), w), add("head.bias", (classes,), 0.1)
    header, offset = {}, 0
    for name, t in tensors.items():
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + t.nbytes]}
        offset += t.nbytes
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for t in tensors.values():
            f.write(t.tobytes())
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump({"architecture": f"vit_random_{sys.argv[1].lower()}", "model_args": {"num_heads": H}}, f)


if __name__ == "__main__":
    main()
