#!/usr/bin/python3
"""Independent PyTorch reference for Attention Lab's Vision Transformer code.

Writes small random-weight ViT checkpoints (.safetensors, written by hand) in the three naming
schemes the C++ loader reads (timm, Hugging Face, DINOv2), four PNG crops of the safari photo,
and one golden JSON per (model, image) holding the forward's attention, the rollouts and the
mean attention distances (and the logits where a classifier exists). The C++ tests read these
files; CI never runs this script.

    /usr/bin/python3 tests/vit/make_golden.py        # from the repository root; ~10 s on 2 cores

tests/vit/make_golden_real.py imports this file as a module for its real-size cases (T 197 and
789, head width 64): a model spec may carry `patch` and `grid0` (the position embedding's
trained grid; defaults PATCH and GRID0, the small models'), read by make_canonical, embed,
forward_modules and model_info.

Needs only torch (1.13 used), numpy and PIL: no timm, transformers or safetensors package. The
forward is written from the libraries' published source, versions followed:

  * timm 1.0.x: timm/models/vision_transformer.py `VisionTransformer` (`_pos_embed` with
    dynamic_img_size, `no_embed_class`, `reg_tokens`, `global_pool="token"`, `forward_head`),
    `Block`, `Attention` (qkv Linear [3D, D], reshape(B, N, 3, H, D/H), q * D_h^-0.5 @ k^T,
    softmax), `LayerScale` (x * gamma); timm/layers/pos_embed.py `resample_abs_pos_embed`
    (prefix kept, patch part (1, 4, 4, D) -> (1, D, 4, 4), F.interpolate(size=(rows, cols),
    mode="bicubic", antialias=True) in float32; returned unchanged when the token count matches
    and the new grid is square). LayerNorm eps 1e-6 (timm's partial(nn.LayerNorm, eps=1e-6)).
  * transformers 4.4x: models/vit/modeling_vit.py `ViTEmbeddings` (cls prepended, then
    position_embeddings added; `interpolate_pos_encoding`: F.interpolate(size=(rows, cols),
    mode="bicubic", align_corners=False) without antialias on the patch part),
    `ViTSelfAttention` (separate query/key/value Linears, (q @ k^T) / sqrt(D_h), softmax),
    `ViTSelfOutput`, `ViTLayer` (layernorm_before, attention, residual, layernorm_after,
    intermediate.dense + GELU, output.dense, residual), `ViTModel` (final `layernorm`; the
    pooler is not written), `ViTForImageClassification` (classifier on token 0).
  * DINOv2 (facebookresearch/dinov2, dinov2/models/vision_transformer.py)
    `DinoVisionTransformer.prepare_tokens_with_masks`: x = patches; cat(cls, x) + pos_embed
    (pos covers cls + patches); registers inserted after cls WITHOUT position embedding.
    Deviation kept on purpose: the position embedding is resampled with timm's
    resample_abs_pos_embed (bicubic, antialias=True, size=(rows, cols)) as Attention Lab does
    for DINOv2 names, not with DINOv2's own interpolate_pos_encoding (scale_factor with the
    +0.1 offset, antialias off).

Weights are random (torch.manual_seed per model), rounded to the stored dtype (F32/F16/BF16)
and read back from the written file by an independent parser before the forward, so the forward
uses exactly the float32 values the C++ reader sees; everything is computed in float32. The
readouts (rollout, mean attention distance) are computed in float64 from the float32 attention.

A self-check recomputes timm_f32 at its native size with torch.nn.Conv2d / LayerNorm /
MultiheadAttention / Linear / GELU modules and asserts agreement within 1e-5, and cross-checks
the Hugging Face path against the timm path on the same weights.
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
DATA = os.path.join(HERE, "data")
GOLDEN = os.path.join(DATA, "golden")
PHOTO = os.path.join(REPO, "assets", "safari.jpg")

PATCH = 8
IN_CHANS = 3
NATIVE = 32
GRID0 = NATIVE // PATCH  # 4: the checkpoints' position-embedding grid
IMAGENET_MEAN = [0.485, 0.456, 0.406]
IMAGENET_STD = [0.229, 0.224, 0.225]

TORCH_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}

# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------
# pos_prefix: how many prefix tokens (cls, registers) the stored position embedding covers.
MODELS = [
    dict(name="timm_f32", naming="timm", D=48, depth=3, heads=4, dtype="F32", registers=0,
         layer_scale=False, qkv_bias=True, pos_prefix=1, classes=5, eps=1e-6,
         mean=IMAGENET_MEAN, std=IMAGENET_STD, args=[],
         labels=["cat", "dog", "giraffe", "zebra", "grass"],
         files={"config.json": {
             "architecture": "vit_test", "num_classes": 5, "num_features": 48,
             "global_pool": "token", "model_args": {"num_heads": 4},
             "pretrained_cfg": {"mean": IMAGENET_MEAN, "std": IMAGENET_STD},
             "label_names": ["cat", "dog", "giraffe", "zebra", "grass"]}}),
    dict(name="timm_reg_ls_f16", naming="timm", D=64, depth=2, heads=4, dtype="F16",
         registers=2, layer_scale=True, qkv_bias=False, pos_prefix=0, classes=0, eps=1e-6,
         mean=IMAGENET_MEAN, std=IMAGENET_STD, args=["--heads", "4"], labels=None, files={}),
    dict(name="timm_reg_bf16", naming="timm", D=32, depth=2, heads=2, dtype="BF16",
         registers=1, layer_scale=False, qkv_bias=True, pos_prefix=2, classes=0, eps=1e-6,
         mean=IMAGENET_MEAN, std=IMAGENET_STD, args=[], labels=None,
         files={"config.json": {"model_args": {"num_heads": 2}}}),
    dict(name="hf_cls_f32", naming="hf", hf_prefix="vit.", D=48, depth=3, heads=6, dtype="F32",
         registers=0, layer_scale=False, qkv_bias=True, pos_prefix=1, classes=3, eps=1e-12,
         mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5], args=[],
         labels=["giraffe", "zebra", "tree"],
         files={"config.json": {
             "model_type": "vit", "hidden_size": 48, "num_hidden_layers": 3,
             "num_attention_heads": 6, "layer_norm_eps": 1e-12, "patch_size": 8,
             "image_size": 32, "id2label": {"0": "giraffe", "1": "zebra", "2": "tree"}},
             "preprocessor_config.json": {"image_mean": [0.5, 0.5, 0.5],
                                          "image_std": [0.5, 0.5, 0.5]}}),
    dict(name="hf_model_bf16", naming="hf", hf_prefix="", D=32, depth=2, heads=4, dtype="BF16",
         registers=0, layer_scale=False, qkv_bias=True, pos_prefix=1, classes=0, eps=1e-12,
         mean=IMAGENET_MEAN, std=IMAGENET_STD, args=[], labels=None,
         files={"config.json": {"model_type": "vit", "num_attention_heads": 4,
                                "layer_norm_eps": 1e-12}}),
    dict(name="dinov2_reg_f32", naming="dinov2", D=32, depth=2, heads=2, dtype="F32",
         registers=4, layer_scale=True, qkv_bias=True, pos_prefix=1, classes=0, eps=1e-6,
         mean=IMAGENET_MEAN, std=IMAGENET_STD, args=[], labels=None,
         files={"config.json": {"model_args": {"num_heads": 2}}}),
]

# (png name, crop box in safari.jpg (left, top, right, bottom), size (w, h))
IMAGES = [
    ("safari_32x32.png", (110, 30, 470, 390), (32, 32)),
    ("safari_48x48.png", (110, 30, 470, 390), (48, 48)),
    ("safari_61x45.png", (90, 100, 490, 395), (61, 45)),
    ("safari_44x20.png", (60, 150, 500, 350), (44, 20)),
]


# --------------------------------------------------------------------------------------------
# safetensors, by hand
# --------------------------------------------------------------------------------------------
def tensor_bytes(t, dtype):
    t = t.detach().to(TORCH_DTYPES[dtype]).contiguous()
    if dtype == "BF16":
        arr = t.view(torch.int16).numpy().astype("<i2")
    elif dtype == "F16":
        arr = t.numpy().astype("<f2")
    else:
        arr = t.numpy().astype("<f4")
    return arr.tobytes(order="C")


def write_safetensors(path, named, dtype):
    """named: list of (name, tensor); packed in that order, all in `dtype`."""
    header = {"__metadata__": {"format": "pt"}}  # first, as the Rust implementation writes it
    blobs, offset = [], 0
    for name, t in named:
        b = tensor_bytes(t, dtype)
        header[name] = {"dtype": dtype, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)  # pad with spaces to a multiple of 8
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def set_safetensors_metadata(path, meta):
    """Rewrites the header of the safetensors file at `path` with `meta` (str -> str) as its
    "__metadata__" (write_safetensors writes {"format": "pt"}), padded to a multiple of 8."""
    with open(path, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    header["__metadata__"] = meta
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + raw[8 + n:])


def read_safetensors(path):
    """An independent parser (numpy only): {name: float32 torch tensor}, {name: dtype}."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    data = raw[8 + n:]
    out, dtypes = {}, {}
    end_prev = 0
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, en = e["data_offsets"]
        assert b == end_prev, "tensors not packed in header order"
        end_prev = en
        buf = data[b:en]
        if e["dtype"] == "F32":
            a = np.frombuffer(buf, "<f4").astype(np.float32)
        elif e["dtype"] == "F16":
            a = np.frombuffer(buf, "<f2").astype(np.float32)
        elif e["dtype"] == "BF16":
            a = (np.frombuffer(buf, "<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError(e["dtype"])
        assert a.size == int(np.prod(e["shape"], dtype=np.int64))
        out[name] = torch.from_numpy(a.reshape(e["shape"]).copy())
        dtypes[name] = e["dtype"]
    assert end_prev == len(data)
    return out, dtypes


# --------------------------------------------------------------------------------------------
# Random canonical weights and their names in each scheme
# --------------------------------------------------------------------------------------------
def make_canonical(spec, seed):
    torch.manual_seed(seed)
    D, R, C = spec["D"], spec["registers"], spec["classes"]
    M = 4 * D
    patch, grid0 = spec.get("patch", PATCH), spec.get("grid0", GRID0)
    n = lambda *s: torch.randn(*s)
    P = {
        "patch_w": n(D, IN_CHANS, patch, patch) / math.sqrt(IN_CHANS * patch * patch),
        "patch_b": 0.1 * n(D),
        "cls": 0.5 * n(1, 1, D),
        "reg": 0.5 * n(1, R, D) if R else None,
        "pos": 0.5 * n(1, spec["pos_prefix"] + grid0 * grid0, D),
        "blocks": [],
    }
    for _ in range(spec["depth"]):
        blk = {
            "ln1_w": 1 + 0.1 * n(D), "ln1_b": 0.1 * n(D),
            "qkv_w": n(3 * D, D) * (0.6 / math.sqrt(D) * 3),
            "qkv_b": 0.1 * n(3 * D) if spec["qkv_bias"] else None,
            "proj_w": n(D, D) / math.sqrt(D), "proj_b": 0.1 * n(D),
            "ln2_w": 1 + 0.1 * n(D), "ln2_b": 0.1 * n(D),
            "fc1_w": n(M, D) / math.sqrt(D), "fc1_b": 0.1 * n(M),
            "fc2_w": n(D, M) / math.sqrt(M), "fc2_b": 0.1 * n(D),
            "ls1": 0.5 + 0.2 * n(D) if spec["layer_scale"] else None,
            "ls2": 0.5 + 0.2 * n(D) if spec["layer_scale"] else None,
        }
        P["blocks"].append(blk)
    P["norm_w"], P["norm_b"] = 1 + 0.1 * n(D), 0.1 * n(D)
    P["head_w"] = n(C, D) / math.sqrt(D) if C else None
    P["head_b"] = 0.1 * n(C) if C else None
    P["mask_token"] = 0.5 * n(1, D) if spec["naming"] == "dinov2" else None
    return P


def to_named(spec, P):
    """Canonical weights -> [(file name, tensor)] in the model's naming scheme."""
    out = []
    add = lambda k, v: out.append((k, v)) if v is not None else None
    D = spec["D"]
    if spec["naming"] in ("timm", "dinov2"):
        add("cls_token", P["cls"])
        if spec["naming"] == "timm":
            add("reg_token", P["reg"])
            add("pos_embed", P["pos"])
        else:
            add("pos_embed", P["pos"])
            add("register_tokens", P["reg"])
            add("mask_token", P["mask_token"])
        add("patch_embed.proj.weight", P["patch_w"])
        add("patch_embed.proj.bias", P["patch_b"])
        for i, b in enumerate(P["blocks"]):
            p = f"blocks.{i}."
            add(p + "norm1.weight", b["ln1_w"]); add(p + "norm1.bias", b["ln1_b"])
            add(p + "attn.qkv.weight", b["qkv_w"]); add(p + "attn.qkv.bias", b["qkv_b"])
            add(p + "attn.proj.weight", b["proj_w"]); add(p + "attn.proj.bias", b["proj_b"])
            add(p + "ls1.gamma", b["ls1"])
            add(p + "norm2.weight", b["ln2_w"]); add(p + "norm2.bias", b["ln2_b"])
            add(p + "mlp.fc1.weight", b["fc1_w"]); add(p + "mlp.fc1.bias", b["fc1_b"])
            add(p + "mlp.fc2.weight", b["fc2_w"]); add(p + "mlp.fc2.bias", b["fc2_b"])
            add(p + "ls2.gamma", b["ls2"])
        add("norm.weight", P["norm_w"]); add("norm.bias", P["norm_b"])
        add("head.weight", P["head_w"]); add("head.bias", P["head_b"])
    else:
        v = spec["hf_prefix"]
        e = v + "embeddings."
        add(e + "cls_token", P["cls"])
        add(e + "position_embeddings", P["pos"])
        add(e + "patch_embeddings.projection.weight", P["patch_w"])
        add(e + "patch_embeddings.projection.bias", P["patch_b"])
        for i, b in enumerate(P["blocks"]):
            p = f"{v}encoder.layer.{i}."
            a = p + "attention.attention."
            for j, qkv in enumerate(("query", "key", "value")):
                add(a + qkv + ".weight", b["qkv_w"][j * D:(j + 1) * D])
                add(a + qkv + ".bias", b["qkv_b"][j * D:(j + 1) * D])
            add(p + "attention.output.dense.weight", b["proj_w"])
            add(p + "attention.output.dense.bias", b["proj_b"])
            add(p + "layernorm_before.weight", b["ln1_w"])
            add(p + "layernorm_before.bias", b["ln1_b"])
            add(p + "layernorm_after.weight", b["ln2_w"])
            add(p + "layernorm_after.bias", b["ln2_b"])
            add(p + "intermediate.dense.weight", b["fc1_w"])
            add(p + "intermediate.dense.bias", b["fc1_b"])
            add(p + "output.dense.weight", b["fc2_w"])
            add(p + "output.dense.bias", b["fc2_b"])
        add(v + "layernorm.weight", P["norm_w"]); add(v + "layernorm.bias", P["norm_b"])
        add("classifier.weight", P["head_w"]); add("classifier.bias", P["head_b"])
    return out


def from_named(spec, W):
    """What a loader does: the file's tensors (already float32) -> canonical weights."""
    D = spec["D"]
    g = lambda k: W.get(k)
    if spec["naming"] in ("timm", "dinov2"):
        P = {"cls": g("cls_token"), "pos": g("pos_embed"),
             "reg": g("reg_token") if spec["naming"] == "timm" else g("register_tokens"),
             "patch_w": g("patch_embed.proj.weight"), "patch_b": g("patch_embed.proj.bias"),
             "norm_w": g("norm.weight"), "norm_b": g("norm.bias"),
             "head_w": g("head.weight"), "head_b": g("head.bias"), "blocks": []}
        for i in range(spec["depth"]):
            p = f"blocks.{i}."
            P["blocks"].append({
                "ln1_w": g(p + "norm1.weight"), "ln1_b": g(p + "norm1.bias"),
                "qkv_w": g(p + "attn.qkv.weight"), "qkv_b": g(p + "attn.qkv.bias"),
                "proj_w": g(p + "attn.proj.weight"), "proj_b": g(p + "attn.proj.bias"),
                "ln2_w": g(p + "norm2.weight"), "ln2_b": g(p + "norm2.bias"),
                "fc1_w": g(p + "mlp.fc1.weight"), "fc1_b": g(p + "mlp.fc1.bias"),
                "fc2_w": g(p + "mlp.fc2.weight"), "fc2_b": g(p + "mlp.fc2.bias"),
                "ls1": g(p + "ls1.gamma"), "ls2": g(p + "ls2.gamma")})
    else:
        v = spec["hf_prefix"]
        e = v + "embeddings."
        P = {"cls": g(e + "cls_token"), "pos": g(e + "position_embeddings"), "reg": None,
             "patch_w": g(e + "patch_embeddings.projection.weight"),
             "patch_b": g(e + "patch_embeddings.projection.bias"),
             "norm_w": g(v + "layernorm.weight"), "norm_b": g(v + "layernorm.bias"),
             "head_w": g("classifier.weight"), "head_b": g("classifier.bias"), "blocks": []}
        for i in range(spec["depth"]):
            p = f"{v}encoder.layer.{i}."
            a = p + "attention.attention."
            P["blocks"].append({
                "q_w": g(a + "query.weight"), "q_b": g(a + "query.bias"),
                "k_w": g(a + "key.weight"), "k_b": g(a + "key.bias"),
                "v_w": g(a + "value.weight"), "v_b": g(a + "value.bias"),
                "proj_w": g(p + "attention.output.dense.weight"),
                "proj_b": g(p + "attention.output.dense.bias"),
                "ln1_w": g(p + "layernorm_before.weight"), "ln1_b": g(p + "layernorm_before.bias"),
                "ln2_w": g(p + "layernorm_after.weight"), "ln2_b": g(p + "layernorm_after.bias"),
                "fc1_w": g(p + "intermediate.dense.weight"),
                "fc1_b": g(p + "intermediate.dense.bias"),
                "fc2_w": g(p + "output.dense.weight"), "fc2_b": g(p + "output.dense.bias")})
    return P


# --------------------------------------------------------------------------------------------
# Forward
# --------------------------------------------------------------------------------------------
def timm_resample_abs_pos_embed(posemb, new_size, num_prefix_tokens, grid0=GRID0):
    """timm 1.0.x timm.layers.pos_embed.resample_abs_pos_embed (old_size = (grid0, grid0))."""
    num_pos_tokens = posemb.shape[1]
    num_new_tokens = new_size[0] * new_size[1] + num_prefix_tokens
    if num_new_tokens == num_pos_tokens and new_size[0] == new_size[1]:
        return posemb
    prefix, posemb = posemb[:, :num_prefix_tokens], posemb[:, num_prefix_tokens:]
    dim = posemb.shape[-1]
    posemb = posemb.float().reshape(1, grid0, grid0, -1).permute(0, 3, 1, 2)
    posemb = F.interpolate(posemb, size=new_size, mode="bicubic", antialias=True,
                           align_corners=False)
    posemb = posemb.permute(0, 2, 3, 1).reshape(1, -1, dim)
    return torch.cat([prefix, posemb], dim=1)


def hf_interpolate_pos_encoding(position_embeddings, rows, cols):
    """transformers 4.4x ViTEmbeddings.interpolate_pos_encoding."""
    num_patches, num_positions = rows * cols, position_embeddings.shape[1] - 1
    if num_patches == num_positions and rows == cols:
        return position_embeddings
    cls_pos, patch_pos = position_embeddings[:, :1], position_embeddings[:, 1:]
    dim = position_embeddings.shape[-1]
    s = int(num_positions ** 0.5)
    patch_pos = patch_pos.reshape(1, s, s, dim).permute(0, 3, 1, 2)
    patch_pos = F.interpolate(patch_pos, size=(rows, cols), mode="bicubic", align_corners=False)
    patch_pos = patch_pos.permute(0, 2, 3, 1).reshape(1, -1, dim)
    return torch.cat((cls_pos, patch_pos), dim=1)


def embed(spec, P, img):
    """img [1, 3, h, w] (h, w multiples of the patch) -> tokens [1, T, D]."""
    patch, grid0 = spec.get("patch", PATCH), spec.get("grid0", GRID0)
    rows, cols = img.shape[2] // patch, img.shape[3] // patch
    x = F.conv2d(img, P["patch_w"], P["patch_b"], stride=patch)  # [1, D, rows, cols]
    x = x.flatten(2).transpose(1, 2)  # [1, rows*cols, D], raster order
    cls = P["cls"]
    if spec["naming"] == "hf":
        x = torch.cat([cls, x], dim=1)
        return x + hf_interpolate_pos_encoding(P["pos"], rows, cols)
    if spec["naming"] == "dinov2":
        x = torch.cat([cls, x], dim=1)
        x = x + timm_resample_abs_pos_embed(P["pos"], (rows, cols), 1, grid0)
        if P["reg"] is not None:
            x = torch.cat([x[:, :1], P["reg"], x[:, 1:]], dim=1)
        return x
    prefix = [cls] + ([P["reg"]] if P["reg"] is not None else [])
    if spec["pos_prefix"] == 0:  # timm no_embed_class=True
        x = x + timm_resample_abs_pos_embed(P["pos"], (rows, cols), 0, grid0)
        return torch.cat(prefix + [x], dim=1)
    x = torch.cat(prefix + [x], dim=1)
    return x + timm_resample_abs_pos_embed(P["pos"], (rows, cols), spec["pos_prefix"], grid0)


def timm_attention(b, x, H):
    """timm Attention (batched heads). Returns output before proj's residual, attn [H,T,T]."""
    B, T, D = x.shape
    hd = D // H
    qkv = F.linear(x, b["qkv_w"], b["qkv_b"]).reshape(B, T, 3, H, hd).permute(2, 0, 3, 1, 4)
    q, k, v = qkv.unbind(0)
    q = q * hd ** -0.5
    attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
    o = (attn @ v).transpose(1, 2).reshape(B, T, D)
    return F.linear(o, b["proj_w"], b["proj_b"]), attn[0]


def hf_attention(b, x, H):
    """ViTSelfAttention + ViTSelfOutput."""
    B, T, D = x.shape
    hd = D // H
    split = lambda t: t.view(B, T, H, hd).permute(0, 2, 1, 3)
    q = split(F.linear(x, b["q_w"], b["q_b"]))
    k = split(F.linear(x, b["k_w"], b["k_b"]))
    v = split(F.linear(x, b["v_w"], b["v_b"]))
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hd)
    probs = F.softmax(scores, dim=-1)
    ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(B, T, D)
    return F.linear(ctx, b["proj_w"], b["proj_b"]), probs[0]


def forward(spec, P, img):
    """-> dict(tokens [1,T,D] after the final norm, attention [L,H,T,T] float32, logits,
    hidden [L,T,D]: each block's output tokens, before the final norm)."""
    D, H, eps = spec["D"], spec["heads"], spec["eps"]
    attn_fn = hf_attention if spec["naming"] == "hf" else timm_attention
    x = embed(spec, P, img)
    attns, hidden = [], []
    for b in P["blocks"]:
        o, a = attn_fn(b, F.layer_norm(x, (D,), b["ln1_w"], b["ln1_b"], eps), H)
        attns.append(a)
        x = x + (o * b["ls1"] if b.get("ls1") is not None else o)
        h = F.layer_norm(x, (D,), b["ln2_w"], b["ln2_b"], eps)
        m = F.linear(F.gelu(F.linear(h, b["fc1_w"], b["fc1_b"])), b["fc2_w"], b["fc2_b"])
        x = x + (m * b["ls2"] if b.get("ls2") is not None else m)
        hidden.append(x[0])
    x = F.layer_norm(x, (D,), P["norm_w"], P["norm_b"], eps)
    logits = F.linear(x[:, 0], P["head_w"], P["head_b"])[0] if P["head_w"] is not None else None
    return {"tokens": x, "attention": torch.stack(attns), "logits": logits,
            "hidden": torch.stack(hidden)}


def forward_modules(spec, P, img):
    """Self-check path for timm names: torch.nn modules, nn.MultiheadAttention."""
    D, H, eps = spec["D"], spec["heads"], spec["eps"]
    patch, native = spec.get("patch", PATCH), spec.get("grid0", GRID0) * spec.get("patch", PATCH)
    conv = torch.nn.Conv2d(IN_CHANS, D, patch, stride=patch)
    conv.weight.data.copy_(P["patch_w"]); conv.bias.data.copy_(P["patch_b"])
    x = conv(img).flatten(2).transpose(1, 2)
    prefix = [P["cls"]] + ([P["reg"]] if P["reg"] is not None else [])
    assert img.shape[2] == native and img.shape[3] == native
    if spec["pos_prefix"] == 0:
        x = torch.cat(prefix + [x + P["pos"]], dim=1)
    else:
        x = torch.cat(prefix + [x], dim=1) + P["pos"]
    attns = []

    def ln(w, b):
        m = torch.nn.LayerNorm(D, eps=eps)
        m.weight.data.copy_(w); m.bias.data.copy_(b)
        return m

    def lin(w, b):
        m = torch.nn.Linear(w.shape[1], w.shape[0], bias=b is not None)
        m.weight.data.copy_(w)
        if b is not None:
            m.bias.data.copy_(b)
        return m

    for b in P["blocks"]:
        mha = torch.nn.MultiheadAttention(D, H, bias=True, batch_first=True)
        mha.in_proj_weight.data.copy_(b["qkv_w"])
        mha.in_proj_bias.data.copy_(b["qkv_b"] if b["qkv_b"] is not None else torch.zeros(3 * D))
        mha.out_proj.weight.data.copy_(b["proj_w"]); mha.out_proj.bias.data.copy_(b["proj_b"])
        h = ln(b["ln1_w"], b["ln1_b"])(x)
        o, a = mha(h, h, h, need_weights=True, average_attn_weights=False)
        attns.append(a[0])
        x = x + (o * b["ls1"] if b["ls1"] is not None else o)
        mlp = torch.nn.Sequential(lin(b["fc1_w"], b["fc1_b"]), torch.nn.GELU(),
                                  lin(b["fc2_w"], b["fc2_b"]))
        m = mlp(ln(b["ln2_w"], b["ln2_b"])(x))
        x = x + (m * b["ls2"] if b["ls2"] is not None else m)
    x = ln(P["norm_w"], P["norm_b"])(x)
    logits = lin(P["head_w"], P["head_b"])(x[:, 0])[0] if P["head_w"] is not None else None
    return {"tokens": x, "attention": torch.stack(attns), "logits": logits}


# --------------------------------------------------------------------------------------------
# Readouts (float64)
# --------------------------------------------------------------------------------------------
def self_check(spec, P, img, out, tol):
    """The forward pass through torch's own modules (nn.MultiheadAttention) against `out`:
    attention within 1e-5, tokens and logits within `tol`."""
    with torch.no_grad():
        chk = forward_modules(spec, P, img)
    da = (chk["attention"] - out["attention"]).abs().max().item()
    dt = (chk["tokens"] - out["tokens"]).abs().max().item()
    dl = (chk["logits"] - out["logits"]).abs().max().item()
    print(f"self-check {spec['name']} vs nn.MultiheadAttention: attention {da:.2e}, "
          f"tokens {dt:.2e}, logits {dl:.2e}")
    assert da < 1e-5 and dt < tol and dl < tol


def rollout(attn, fusion):
    """attn [L, H, T, T] float64 -> [L, T, T]; Abnar & Zuidema 2020."""
    L, _, T, _ = attn.shape
    out, R = [], None
    for l in range(L):
        a = {"mean": attn[l].mean(0), "max": attn[l].max(0), "min": attn[l].min(0)}[fusion]
        a = (a + np.eye(T)) / 2
        a = a / a.sum(-1, keepdims=True)
        R = a if R is None else a @ R
        out.append(R)
    return np.stack(out)


def mean_distance(attn, prefix, cols, rows, patch=PATCH):
    """attn [L, H, T, T] float64 -> [L, H] in input pixels (prefix keys dropped, no renorm)."""
    c = np.array([((j % cols + 0.5) * patch, (j // cols + 0.5) * patch)
                  for j in range(rows * cols)])
    dist = np.sqrt(((c[:, None, :] - c[None, :, :]) ** 2).sum(-1))  # [N, N]
    a = attn[:, :, prefix:, prefix:]  # patch queries x patch keys
    return (a * dist).sum(-1).mean(-1)


# --------------------------------------------------------------------------------------------
# Images
# --------------------------------------------------------------------------------------------
def make_images():
    photo = Image.open(PHOTO).convert("RGB")
    for name, box, size in IMAGES:
        im = photo.crop(box).resize(size, Image.Resampling.LANCZOS)
        im.save(os.path.join(DATA, name), optimize=True)


def load_image(name, mean, std, patch=PATCH, folder=DATA):
    """The PNG (ground truth), RGB/255, normalized, cropped top-left to multiples of the patch."""
    a = np.asarray(Image.open(os.path.join(folder, name)).convert("RGB")).astype(np.float32)
    a = a / np.float32(255)
    a = (a - np.array(mean, np.float32)) / np.array(std, np.float32)
    h, w = a.shape[0] // patch * patch, a.shape[1] // patch * patch
    a = a[:h, :w]
    return torch.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))[None]


# --------------------------------------------------------------------------------------------
# JSON output
# --------------------------------------------------------------------------------------------
def f32_list(a):
    """float32 values as Python floats whose repr is float32's shortest round-trip string."""
    a = np.asarray(a, dtype=np.float32).ravel()
    return [float(repr(v)) for v in a]


def f64_list(a):
    return [float(v) for v in np.asarray(a, dtype=np.float64).ravel()]


def fixed8_list(a):
    """float64 values rounded to 8 decimal places (absolute error <= 5e-9): keeps the files
    small; the values are probabilities in [0, 1]."""
    return [float("%.8f" % v) for v in np.asarray(a, dtype=np.float64).ravel()]


def write_json(path, obj):
    with open(path, "w") as f:
        f.write("{\n")
        items = list(obj.items())
        for i, (k, v) in enumerate(items):
            f.write(f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}")
            f.write(",\n" if i + 1 < len(items) else "\n")
        f.write("}\n")


def model_info(spec, W):
    return {
        "naming": spec["naming"], "depth": spec["depth"], "heads": spec["heads"],
        "D": spec["D"], "patch": spec.get("patch", PATCH), "mlp_hidden": 4 * spec["D"],
        "registers": spec["registers"], "prefix": 1 + spec["registers"],
        "layer_scale": spec["layer_scale"], "qkv_bias": spec["qkv_bias"],
        "pos_covers_prefix": spec["pos_prefix"] == 1 + spec["registers"],
        "pos_prefix": spec["pos_prefix"],
        "classes": spec["classes"], "dtype": spec["dtype"],
        "parameters": int(sum(t.numel() for k, t in W.items() if k != "mask_token")),
        "eps": spec["eps"], "mean": spec["mean"], "std": spec["std"],
    }


README_HEAD = """# ViT test checkpoints and golden files

Made by `tests/vit/make_golden.py` (run `/usr/bin/python3 tests/vit/make_golden.py` from the
repository root; torch 1.13, numpy, PIL; about 10 s on 2 cores; the output is deterministic).
Do not edit by hand: change the script and run it again. CI never runs Python; the C++ tests
read these files.

**The weights are random** (torch.manual_seed per model, N(0, sigma) with sigma picked so that
attention is clearly non-uniform), so there are no licence questions for the checkpoints. The
PNGs are crops of `assets/safari.jpg` (see `assets/README.md` for its licence), resized with
PIL (Lanczos) and saved as PNG; the PNG is the ground truth for the C++ side.

Forward written from the published source of timm 1.0.x (`VisionTransformer`, `Block`,
`Attention`, `LayerScale`, `timm.layers.pos_embed.resample_abs_pos_embed`), transformers 4.4x
(`ViTEmbeddings.interpolate_pos_encoding`, `ViTSelfAttention`, `ViTLayer`, `ViTModel`,
`ViTForImageClassification`) and DINOv2 (`DinoVisionTransformer.prepare_tokens_with_masks`);
the script's docstring gives the details. The forward uses the weights rounded to the stored
dtype and read back as float32, and computes in float32; readouts in float64.

Position embeddings are resampled when the grid is not 4x4: timm and DINOv2 names with timm's
`resample_abs_pos_embed` (bicubic, antialias=True), Hugging Face names with
`interpolate_pos_encoding` (bicubic, no antialias). (DINOv2's own code would use a scale factor
with a +0.1 offset and no antialias; Attention Lab uses timm's rule for DINOv2 names.)

## Models (patch 8, 3 channels, native 32x32 = grid 4x4, MLP hidden 4D, GELU exact)

| folder | naming | D | depth | heads | registers | layer scale | qkv bias | position embedding | classes | dtype | parameters | extra files |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
"""

README_TAIL = """
`parameters` counts every tensor element in the file except DINOv2's `mask_token` (present in the
file, unused).

## Images

| file | crop of safari.jpg (left, top, right, bottom) | size | grid (cols x rows) |
| --- | --- | --- | --- |
| `safari_32x32.png` | (110, 30, 470, 390) | 32x32 (native) | 4x4 |
| `safari_48x48.png` | (110, 30, 470, 390) | 48x48 | 6x6 (position embedding resampled) |
| `safari_61x45.png` | (90, 100, 490, 395) | 61x45 | 7x5 (image cropped top-left to 56x40) |
| `safari_44x20.png` | (60, 150, 500, 350) | 44x20 | 5x2 (cropped to 40x16; rows fewer than the checkpoint's: the resampling shrinks, where antialias matters) |

Pixels: RGB uint8 / 255, then (x - mean) / std per channel with the model's mean/std.

## Golden files: `golden/<model>__<image stem>.json` (24 = 6 models x 4 images)

* `model`: the folder name; `image`: the PNG name; `args`: extra CLI arguments the C++ side
  passes (`["--heads", "4"]` for `timm_reg_ls_f16`, which has no config.json).
* `info`: `naming` ("timm" | "hf" | "dinov2"), `depth`, `heads`, `D`, `patch`, `mlp_hidden`,
  `registers`, `prefix` (1 + registers), `layer_scale`, `qkv_bias`, `pos_covers_prefix` (the
  position embedding has a row for every prefix token), `pos_prefix` (how many prefix tokens it
  covers: 1 for dinov2_reg_f32, whose registers get none), `classes` (0: no classifier),
  `dtype`, `parameters`, `eps`, `mean`, `std`.
* `grid`: [cols, rows]; `T`: 1 + registers + cols x rows; token order [cls, registers,
  patches in raster order].
* `attention`: [layer][head] -> T x T floats, row-major (query rows, key columns); float32
  values written as their shortest round-trip decimal (exact float32).
* `rollout`: {"mean", "max", "min"} -> [layer] -> T x T row-major: fuse the heads elementwise,
  A = (A_fused + I) / 2, rows normalized, R_0 = A_0, R_l = A_l @ R_(l-1) (Abnar & Zuidema 2020),
  float64 from the float32 attention, rounded to 8 decimal places.
* `distance`: [layer][head], mean attention distance in input pixels: patch centres
  ((col + 0.5) * 8, (row + 0.5) * 8); for each patch query the sum over patch keys of
  a_ij * |c_i - c_j| (prefix keys left out, not renormalized), averaged over patch queries;
  float64.
* `norms`: [layer] -> T values, ||z_l[t]||_2 of every token t leaving block l (the residual
  stream before the final LayerNorm; Darcet et al. 2023), float64 from the float32 tokens.
* Only with a classifier: `logits` (head(norm(x)[:, 0]), float32), `probabilities`
  (softmax of the logits, float32), `labels` (class names in order).

## Real sizes: `real/`

Two checkpoints of real token counts and head width (T 197 and 789, head width 64) with golden
files holding a selection of rows: made by `tests/vit/make_golden_real.py`, described in
`real/README.md`.
"""


def write_readme(rows):
    with open(os.path.join(DATA, "README.md"), "w") as f:
        f.write(README_HEAD)
        for spec, info in rows:
            pos = {0: "patches only (no_embed_class)"}.get(spec["pos_prefix"], "")
            if not pos:
                pos = ("cls + registers + patches" if spec["pos_prefix"] == 1 + spec["registers"]
                       and spec["registers"] else "cls + patches")
                if spec["naming"] == "dinov2":
                    pos += " (registers after cls, no position)"
            extra = ", ".join(spec["files"]) or "none (pass --heads 4)"
            f.write(f"| `{spec['name']}` | {spec['naming']} | {spec['D']} | {spec['depth']} | "
                    f"{spec['heads']} | {spec['registers']} | "
                    f"{'yes' if spec['layer_scale'] else 'no'} | "
                    f"{'yes' if spec['qkv_bias'] else 'no'} | {pos} | {spec['classes']} | "
                    f"{spec['dtype']} | {info['parameters']} | {extra} |\n")
        f.write(README_TAIL)


# --------------------------------------------------------------------------------------------
def main():
    torch.set_num_threads(min(2, torch.get_num_threads()))
    os.makedirs(GOLDEN, exist_ok=True)
    make_images()
    n_files = 0
    readme_rows = []
    for mi, spec in enumerate(MODELS):
        folder = os.path.join(DATA, spec["name"])
        os.makedirs(folder, exist_ok=True)
        P0 = make_canonical(spec, seed=1000 + mi)
        named = to_named(spec, P0)
        path = os.path.join(folder, "model.safetensors")
        write_safetensors(path, named, spec["dtype"])
        for fname, content in spec["files"].items():
            with open(os.path.join(folder, fname), "w") as f:
                json.dump(content, f, indent=2)
                f.write("\n")
        # Read back with the independent parser: the forward uses exactly these float32 values.
        W, dtypes = read_safetensors(path)
        assert list(W) == [k for k, _ in named]
        for k, t in named:
            assert dtypes[k] == spec["dtype"]
            ref = t.to(TORCH_DTYPES[spec["dtype"]]).float()
            assert torch.equal(W[k], ref), k
        P = from_named(spec, W)
        info = model_info(spec, W)
        readme_rows.append((spec, info))
        prefix = info["prefix"]

        for img_name, _, _ in IMAGES:
            img = load_image(img_name, spec["mean"], spec["std"])
            rows, cols = img.shape[2] // PATCH, img.shape[3] // PATCH
            with torch.no_grad():
                out = forward(spec, P, img)
            A32 = out["attention"].numpy()
            L, H, T, _ = A32.shape
            assert (L, H, T) == (spec["depth"], spec["heads"], prefix + rows * cols)
            A = A32.astype(np.float64)
            assert np.abs(A.sum(-1) - 1).max() < 1e-5
            dist = mean_distance(A, prefix, cols, rows)

            if spec["name"] == "timm_f32" and img.shape[2] == NATIVE and img.shape[3] == NATIVE:
                self_check(spec, P, img, out, 1e-5)
            if spec["name"] == "hf_cls_f32":
                # The HF path (separate q/k/v, HF pos interpolation) vs the timm path on the
                # same weights: equal at the native size (no resampling involved).
                Pt = dict(P, blocks=[dict(b, qkv_w=torch.cat([b["q_w"], b["k_w"], b["v_w"]]),
                                          qkv_b=torch.cat([b["q_b"], b["k_b"], b["v_b"]]))
                                     for b in P["blocks"]])
                tspec = dict(spec, naming="timm")
                with torch.no_grad():
                    chk = forward(tspec, Pt, img)
                da = (chk["attention"] - out["attention"]).abs().max().item()
                dl = (chk["logits"] - out["logits"]).abs().max().item()
                if rows == cols == GRID0:
                    print(f"self-check hf_cls_f32 HF path vs timm path: attention {da:.2e}, "
                          f"logits {dl:.2e}")
                    assert da < 1e-5 and dl < 1e-5
                else:  # timm resamples with antialias, HF without: must differ
                    assert da > 1e-4

            g = {
                "model": spec["name"], "image": img_name, "args": spec["args"], "info": info,
                "grid": [cols, rows], "T": T,
                "attention": [[f32_list(A32[l, h]) for h in range(H)] for l in range(L)],
                "rollout": {f: [fixed8_list(r) for r in rollout(A, f)]
                            for f in ("mean", "max", "min")},
                "distance": [f64_list(dist[l]) for l in range(L)],
                # ||z_l[t]||_2 of every token t leaving block l, before the final LayerNorm
                # (Darcet et al. 2023's token norms), float64 from the float32 tokens.
                "norms": [f64_list(np.linalg.norm(out["hidden"][l].numpy().astype(np.float64), axis=-1))
                          for l in range(L)],
            }
            if out["logits"] is not None:
                lg = out["logits"]
                g["logits"] = f32_list(lg.numpy())
                g["probabilities"] = f32_list(torch.softmax(lg, -1).numpy())
                g["labels"] = spec["labels"]
            stem = os.path.splitext(img_name)[0]
            write_json(os.path.join(GOLDEN, f"{spec['name']}__{stem}.json"), g)
            n_files += 1
            peak = A.max(-1).mean()
            print(f"{spec['name']:16s} {img_name:17s} grid {cols}x{rows} T {T:3d} "
                  f"mean row max {peak:.3f} distance {dist.min():5.2f}..{dist.max():5.2f}"
                  + (f" p {np.round(g['probabilities'], 3).tolist()}" if "logits" in g else ""))
    write_readme(readme_rows)
    print(f"{n_files} golden files in {GOLDEN}")


if __name__ == "__main__":
    sys.exit(main())
