#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_safetensors into tests/fuzz/corpus/safetensors/.

Small valid safetensors files made byte by byte (no safetensors package): an 8-byte
little-endian header length, the JSON header, then the tensors' little-endian bytes.
Run it from anywhere: python3 tests/fuzz/corpus/make_safetensors_seeds.py
"""
import json
import os
import struct

from seed_files import write_seeds

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


def tiny_vit(hf, dtype):
    """A whole ViT small enough to mutate (D 4, patch 1, 2x2 patches, MLP 8), so that the fuzzer
    reaches vit_from_tensors' checks and its one pass over the weights: timm's or HF's names."""
    D, H, P, depth = 4, 8, 1, 2 if not hf else 1
    tensors = []

    def add(name, shape):
        n = 1
        for d in shape:
            n *= d
        raw = f32(*[0.25 * (i % 5) - 0.5 for i in range(n)]) if dtype == "F32" else u16(*[0x3C00 + i for i in range(n)])
        tensors.append((name, dtype, shape, raw))

    # (name, shape) before the blocks, in block {i}, and after them, in each library's order.
    if hf:
        attention = "attention.attention.%s.%s"
        head = [("vit.embeddings.cls_token", [1, 1, D]), ("vit.embeddings.position_embeddings", [1, 5, D]),
                ("vit.embeddings.patch_embeddings.projection.weight", [D, 3, P, P]),
                ("vit.embeddings.patch_embeddings.projection.bias", [D])]
        block = ([(attention % (part, kind), [D, D] if kind == "weight" else [D])
                  for part in ("query", "key", "value") for kind in ("weight", "bias")] +
                 [("attention.output.dense.weight", [D, D]), ("attention.output.dense.bias", [D]),
                  ("layernorm_before.weight", [D]), ("layernorm_before.bias", [D]), ("layernorm_after.weight", [D]),
                  ("layernorm_after.bias", [D]), ("intermediate.dense.weight", [H, D]),
                  ("intermediate.dense.bias", [H]), ("output.dense.weight", [D, H]), ("output.dense.bias", [D])])
        block_prefix = "vit.encoder.layer.%d."
        tail = [("vit.layernorm.weight", [D]), ("vit.layernorm.bias", [D]), ("classifier.weight", [3, D]),
                ("classifier.bias", [3])]
    else:
        head = [("cls_token", [1, 1, D]), ("pos_embed", [1, 5, D]), ("patch_embed.proj.weight", [D, 3, P, P]),
                ("patch_embed.proj.bias", [D])]
        block = [("norm1.weight", [D]), ("norm1.bias", [D]), ("attn.qkv.weight", [3 * D, D]),
                 ("attn.qkv.bias", [3 * D]), ("attn.proj.weight", [D, D]), ("attn.proj.bias", [D]),
                 ("norm2.weight", [D]), ("norm2.bias", [D]), ("mlp.fc1.weight", [H, D]),
                 ("mlp.fc1.bias", [H]), ("mlp.fc2.weight", [D, H]), ("mlp.fc2.bias", [D])]
        block_prefix = "blocks.%d."
        tail = [("norm.weight", [D]), ("norm.bias", [D]), ("head.weight", [3, D]), ("head.bias", [3])]
    for name, shape in head:
        add(name, shape)
    for i in range(depth):
        for name, shape in block:
            add(block_prefix % i + name, shape)
    for name, shape in tail:
        add(name, shape)
    return safetensors(tensors, metadata={"format": "pt"})


SEPARATOR = b"\n--next-file--\n"  # fuzz_safetensors: config.json, [preprocessor_config.json,] model.safetensors


def with_configs(model, *configs):
    """The input fuzz_safetensors splits into config files and the model (load_vit on a folder)."""
    return SEPARATOR.join([json.dumps(c).encode() for c in configs] + [model])


SEEDS = {
    "config_timm.input": with_configs(
        tiny_vit(False, "F16"),
        {"architecture": "vit_tiny", "num_classes": 3, "global_pool": "token", "label_names": ["a", "b", "c"],
         "model_args": {"num_heads": 2, "embed_dim": 4, "depth": 2},
         "pretrained_cfg": {"mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25]}}),
    "config_timm_avg.input": with_configs(tiny_vit(False, "F16"), {"num_heads": 4, "global_pool": "avg"}),
    "config_hf.input": with_configs(
        tiny_vit(True, "F32"),
        {"model_type": "vit", "num_attention_heads": 1, "layer_norm_eps": 1e-12, "id2label": {"0": "x", "1": "y", "2": "z"}},
        {"image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]}),
    # Refused configs, one branch each: heads that do not divide D = 4, no whole number of
    # heads, a config that is no JSON, an ε of the wrong type, a mean of two values.
    "config_heads_3.input": with_configs(tiny_vit(False, "F16"), {"num_heads": 3}),
    "config_heads_half.input": with_configs(tiny_vit(True, "F32"), {"num_attention_heads": 1.5}),
    "config_not_json.input": SEPARATOR.join([b"{\"num_heads\": ", tiny_vit(False, "F16")]),
    "config_eps_string.input": with_configs(tiny_vit(True, "F32"), {"num_attention_heads": 2, "layer_norm_eps": "small"}),
    "config_mean_short.input": with_configs(tiny_vit(False, "F16"), {"num_heads": 2, "pretrained_cfg": {"mean": [0.5, 0.5]}}),
    "vit_timm_f16.safetensors": tiny_vit(False, "F16"),
    "vit_hf_f32.safetensors": tiny_vit(True, "F32"),
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
    write_seeds(OUT, SEEDS)


if __name__ == "__main__":
    main()
