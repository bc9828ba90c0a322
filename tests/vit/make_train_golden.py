#!/usr/bin/python3
"""Golden file for Attention Lab's ViT trainer (core/vit/vit_train.cpp): PyTorch autograd's
gradients and torch.optim.AdamW's steps on a small ViT, written once; the C++ test
(tests/vit/test_vit_train.cpp) compares with them.

An implementation of its own, written from timm's VisionTransformer (1.0.x,
timm/models/vision_transformer.py: PatchEmbed's Conv2d, cls_token prepended, pos_embed over
[cls, patches] (no_embed_class=False), pre-norm Blocks with LayerNorm eps 1e-6, Attention with
qkv Linear and q·D_h^-0.5 @ k^T softmax, Mlp with exact GELU; global_pool "token" → `norm` on
token 0, "avg" → the patch tokens' mean then `fc_norm`), F.cross_entropy with
label_smoothing (or, for masked-patch reconstruction, the mean squared error over the masked
patches' pixels), torch.nn.utils.clip_grad_norm_, torch.optim.AdamW with timm's weight-decay
groups (no decay on 1-D tensors, cls_token, pos_embed), and a linear warm-up then cosine rate
set per step. Nothing is shared with the C++ code: the patches come from F.conv2d, the
sine–cosine codes from numpy (MAE's get_2d_sincos_pos_embed, written out below).

Masked-patch reconstruction (task "masked", VitTask::MaskedPatches): a masked patch's token is its
position code alone, its key is dropped in every layer (its scores set to -inf before the softmax,
torch's masked_fill), `norm` on every token and `head` (3P^2 x D) on each patch token predicts its
pixels; the targets are the input's own patches, cut by reshape/permute (not by the C++ code's loop).

Everything runs in float64 and is rounded to float32 only when written, so the C++ test
measures its own float32 arithmetic against an exact reference. The initial parameters are
random with larger spreads than timm's init (so that attention is not uniform and every
gradient is well away from zero); they are part of the file, and the C++ test loads them.

    /usr/bin/python3 tests/vit/make_train_golden.py      # from the repository root, ~2 s

Writes tests/vit/data/train/train_golden.safetensors with, per case C:
  C/init/NAME, C/grad/NAME (gradient of the batch-mean loss at init), C/step3/NAME (after three
  AdamW steps on the same batch), C/loss (1,), C/grad_norms (3,) (before clipping),
and "images" (4, 3, 28, 28), "labels" (4,), "masks" (4, 16) (1: masked; 4 to 12 per image) shared
by all cases; "__metadata__" holds each
case's settings as JSON under its name, and "cases" the list.
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_golden import set_safetensors_metadata, write_safetensors  # noqa: E402

torch.set_default_dtype(torch.float64)

BASE = dict(image=28, patch=7, D=16, heads=2, depth=2, mlp_hidden=32, classes=10,
            lr=1e-2, min_lr=0.0, beta1=0.9, beta2=0.999, adam_eps=1e-8, weight_decay=0.05,
            warmup_steps=2, total_steps=4, clip_norm=0.5, label_smoothing=0.1, eps=1e-6)
CASES = {
    "token_learned": dict(pooling="token", pos="learned"),
    "avg_sincos": dict(pooling="avg", pos="sincos"),
    "token_none": dict(pooling="token", pos="none"),
    "avg_learned": dict(pooling="avg", pos="learned"),
    "masked_learned": dict(pooling="token", pos="learned", task="masked"),
    "masked_sincos": dict(pooling="token", pos="sincos", task="masked"),
}
B = 4


def sincos_1d(dim, pos):
    omega = np.arange(dim // 2, dtype=np.float64) / (dim / 2.0)
    omega = 1.0 / 10000 ** omega
    out = np.einsum("m,d->md", pos.reshape(-1), omega)
    return np.concatenate([np.sin(out), np.cos(out)], axis=1)


def sincos_2d(D, grid):
    """MAE: the first half from the column (x), the second from the row (y); cls row zeros."""
    gh, gw = np.meshgrid(np.arange(grid, dtype=np.float64), np.arange(grid, dtype=np.float64), indexing="ij")
    emb = np.concatenate([sincos_1d(D // 2, gw), sincos_1d(D // 2, gh)], axis=1)
    return np.concatenate([np.zeros((1, D)), emb], axis=0)[None]


def make_params(c, gen):
    D, Hd, P, C = c["D"], c["mlp_hidden"], c["patch"], c["classes"]
    T = (c["image"] // P) ** 2 + 1

    def rnd(*shape, std):
        return torch.randn(*shape, generator=gen) * std

    p = {"cls_token": rnd(1, 1, D, std=0.5)}
    if c["pos"] == "learned":
        p["pos_embed"] = rnd(1, T, D, std=0.5)
    elif c["pos"] == "sincos":
        p["pos_embed"] = torch.from_numpy(sincos_2d(D, c["image"] // P))
    else:
        p["pos_embed"] = torch.zeros(1, T, D)
    p["patch_embed.proj.weight"] = rnd(D, 3, P, P, std=0.15)
    p["patch_embed.proj.bias"] = rnd(D, std=0.1)
    for l in range(c["depth"]):
        b = f"blocks.{l}."
        p[b + "norm1.weight"] = 1 + rnd(D, std=0.1)
        p[b + "norm1.bias"] = rnd(D, std=0.1)
        p[b + "attn.qkv.weight"] = rnd(3 * D, D, std=0.4)
        p[b + "attn.qkv.bias"] = rnd(3 * D, std=0.1)
        p[b + "attn.proj.weight"] = rnd(D, D, std=0.25)
        p[b + "attn.proj.bias"] = rnd(D, std=0.1)
        p[b + "norm2.weight"] = 1 + rnd(D, std=0.1)
        p[b + "norm2.bias"] = rnd(D, std=0.1)
        p[b + "mlp.fc1.weight"] = rnd(Hd, D, std=0.25)
        p[b + "mlp.fc1.bias"] = rnd(Hd, std=0.1)
        p[b + "mlp.fc2.weight"] = rnd(D, Hd, std=0.18)
        p[b + "mlp.fc2.bias"] = rnd(D, std=0.1)
    masked = c.get("task") == "masked"
    norm = "norm" if c["pooling"] == "token" or masked else "fc_norm"
    p[norm + ".weight"] = 1 + rnd(D, std=0.1)
    p[norm + ".bias"] = rnd(D, std=0.1)
    outputs = 3 * P * P if masked else C
    p["head.weight"] = rnd(outputs, D, std=0.3)
    p["head.bias"] = rnd(outputs, std=0.1)
    return p


def forward(p, x, c, mask=None):
    """Classify: the logits. With `mask` (B, N bool; task "masked"): the final normed tokens."""
    D, H, P = c["D"], c["heads"], c["patch"]
    m = D // H
    e = F.conv2d(x, p["patch_embed.proj.weight"], p["patch_embed.proj.bias"], stride=P)
    e = e.flatten(2).transpose(1, 2)
    if mask is not None:
        e = torch.where(mask[..., None], torch.zeros_like(e), e)
    X = torch.cat([p["cls_token"].expand(x.shape[0], -1, -1), e], dim=1) + p["pos_embed"]
    Bn, T, _ = X.shape
    key_masked = None
    if mask is not None:
        key_masked = torch.cat([torch.zeros(Bn, 1, dtype=torch.bool), mask], dim=1)[:, None, None, :]
    for l in range(c["depth"]):
        b = f"blocks.{l}."
        h = F.layer_norm(X, (D,), p[b + "norm1.weight"], p[b + "norm1.bias"], eps=c["eps"])
        qkv = F.linear(h, p[b + "attn.qkv.weight"], p[b + "attn.qkv.bias"]).reshape(Bn, T, 3, H, m).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        s = (q * m ** -0.5) @ k.transpose(-2, -1)
        if key_masked is not None:
            s = s.masked_fill(key_masked, float("-inf"))
        a = s.softmax(dim=-1)
        o = (a @ v).transpose(1, 2).reshape(Bn, T, D)
        X = X + F.linear(o, p[b + "attn.proj.weight"], p[b + "attn.proj.bias"])
        h = F.layer_norm(X, (D,), p[b + "norm2.weight"], p[b + "norm2.bias"], eps=c["eps"])
        X = X + F.linear(F.gelu(F.linear(h, p[b + "mlp.fc1.weight"], p[b + "mlp.fc1.bias"])),
                         p[b + "mlp.fc2.weight"], p[b + "mlp.fc2.bias"])
    if mask is not None:
        return F.layer_norm(X, (D,), p["norm.weight"], p["norm.bias"], eps=c["eps"])
    if c["pooling"] == "token":
        z = F.layer_norm(X[:, 0], (D,), p["norm.weight"], p["norm.bias"], eps=c["eps"])
    else:
        z = F.layer_norm(X[:, 1:].mean(dim=1), (D,), p["fc_norm.weight"], p["fc_norm.bias"], eps=c["eps"])
    return F.linear(z, p["head.weight"], p["head.bias"])


def lr_at(c, step):
    if step < c["warmup_steps"]:
        return c["lr"] * (step + 1) / c["warmup_steps"]
    t = min(1.0, (step - c["warmup_steps"]) / max(1, c["total_steps"] - c["warmup_steps"]))
    return c["min_lr"] + (c["lr"] - c["min_lr"]) * 0.5 * (1 + math.cos(math.pi * t))


def masked_patch_loss(p, images, c, mask):
    """Mean squared error of the head's pixels against the masked patches' own, over their values."""
    P, g = c["patch"], c["image"] // c["patch"]
    z = forward(p, images, c, mask)
    pred = F.linear(z[:, 1:], p["head.weight"], p["head.bias"])
    target = images.reshape(images.shape[0], 3, g, P, g, P).permute(0, 2, 4, 1, 3, 5).reshape(images.shape[0], g * g, 3 * P * P)
    return ((pred - target) ** 2)[mask].mean()


def run_case(name, c, images, labels, masks, gen):
    init = make_params(c, gen)
    params = {k: v.clone().requires_grad_(k != "pos_embed" or c["pos"] == "learned") for k, v in init.items()}
    trained = [k for k in params if params[k].requires_grad]
    decay = [params[k] for k in trained if params[k].ndim >= 2 and k not in ("cls_token", "pos_embed")]
    no_decay = [params[k] for k in trained if not (params[k].ndim >= 2 and k not in ("cls_token", "pos_embed"))]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": c["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=c["lr"], betas=(c["beta1"], c["beta2"]), eps=c["adam_eps"])
    out, norms, loss0 = {}, [], None
    for step in range(3):
        opt.zero_grad(set_to_none=True)
        if c.get("task") == "masked":
            loss = masked_patch_loss(params, images, c, masks)
        else:
            loss = F.cross_entropy(forward(params, images, c), labels, label_smoothing=c["label_smoothing"])
        loss.backward()
        if step == 0:
            loss0 = loss.item()
            for k in params:
                g = params[k].grad if params[k].grad is not None else torch.zeros_like(params[k])
                out[f"{name}/grad/{k}"] = g.detach().clone()
        norms.append(float(torch.nn.utils.clip_grad_norm_([params[k] for k in trained], c["clip_norm"])))
        for g in opt.param_groups:
            g["lr"] = lr_at(c, step)
        opt.step()
    for k in params:
        out[f"{name}/init/{k}"] = init[k]
        out[f"{name}/step3/{k}"] = params[k].detach().clone()
    out[f"{name}/loss"] = torch.tensor([loss0])
    out[f"{name}/grad_norms"] = torch.tensor(norms)
    print(f"{name}: loss {loss0:.6f}, gradient norms {', '.join(f'{n:.4f}' for n in norms)} (clip {c['clip_norm']})")
    return out


def main():
    gen = torch.Generator().manual_seed(29)
    images = torch.randn(B, 3, BASE["image"], BASE["image"], generator=gen)
    labels = torch.tensor([3, 7, 0, 9])
    # The masks from a generator of their own, so that the classification cases keep their numbers.
    N = (BASE["image"] // BASE["patch"]) ** 2
    mgen = torch.Generator().manual_seed(7)
    masks = torch.zeros(B, N, dtype=torch.bool)
    for b in range(B):
        masks[b, torch.randperm(N, generator=mgen)[:4 + 2 * b + (b % 2)]] = True
    named = {"images": images, "labels": labels.double(), "masks": masks.double()}
    meta = {"format": "pt", "cases": json.dumps(list(CASES))}
    for name, extra in CASES.items():
        c = dict(BASE, **extra)
        named.update(run_case(name, c, images, labels, masks, gen))
        meta[name] = json.dumps(c)
    path = os.path.join(HERE, "data", "train", "train_golden.safetensors")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_safetensors(path, [(k, v.float()) for k, v in named.items()], "F32")
    set_safetensors_metadata(path, meta)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
