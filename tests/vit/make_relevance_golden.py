#!/usr/bin/python3
"""Golden files for Attention Lab's class-relevance maps and effective receptive fields
(SPEC.md section 13), computed with PyTorch autograd.

    /usr/bin/python3 tests/vit/make_relevance_golden.py   # from the repository root; ~2 s

Needs only torch (1.13 used), numpy and PIL. The forward is make_golden.py's, imported as a
module (not copied): its safetensors writer and independent reader, make_canonical / to_named /
from_named, `embed` (patch embedding, prefix tokens, position embedding resampled the way the
checkpoint's library does when the grid is not the trained one), `timm_attention` /
`hf_attention` (an explicit softmax: no fused attention) and `load_image` (RGB / 255,
normalised with the model's mean and std, cropped top-left to multiples of the patch, never
resized). This script runs the blocks itself, as make_golden.forward does, so that it can keep
the gradient of every block's attention (`retain_grad` on the softmax's output) and pool by
averaging, which make_golden.forward does not do.

Writes, under tests/vit/data/relevance/:

  * timm_reg_avg_f32/model.safetensors + config.json: a new random-weight checkpoint in timm's
    names, D 32, depth 3, 4 heads, 2 register tokens, no layer scale, qkv bias, a position
    embedding over every token (cls + registers + patches: timm's layout when
    no_embed_class=False; a timm embedding of cls + patches alone with registers present is no
    timm layout, and the C++ loader accepts only "all tokens" or "patches only"), 4 classes,
    global_pool "avg": timm's `norm` is then Identity and `fc_norm` (a LayerNorm) acts on the
    mean of the tokens after the prefix, x[:, num_prefix_tokens:].mean(1) -> fc_norm -> head, so
    the file holds fc_norm.weight/bias and no norm.*.
  * golden/<model>__<image stem>.json, one per model x image (see README.md there).
  * README.md.

Models: tests/vit/data/timm_f32 and tests/vit/data/hf_cls_f32 (make_golden.py's), the new
timm_reg_avg_f32 (those three on safari_32x32.png and safari_61x45.png) and the bundled trained
assets/fashion_vit on assets/fashion_vit/images/14_bag.png. Receptive fields only (no
classifier, so no logits, classes or relevance): make_golden.py's tests/vit/data/dinov2_reg_f32
(DINOv2 names, 4 registers inserted after cls without position embedding, layer scale) on
safari_61x45.png and tests/vit/data/timm_reg_ls_f16 (timm names, 2 registers, layer scale, no
qkv bias, position embedding on the patches only, F16 weights, --heads 4) on safari_48x48.png;
their forward is make_golden.forward itself (its "hidden"), on the weights read back from the
stored files with make_golden.read_safetensors and from_named (F16 rounding included): the
files test the backward through layer scale (timm LayerScale, x + gamma * branch).

The formulas (SPEC.md section 13). A_l is block l's attention after the softmax (heads x T x T),
y_c the logit of class c before the softmax, mean_h the mean over heads, (v)+ = max(v, 0), and
G_l = mean_h((dy_c/dA_l * A_l)+) (elementwise product, then clipped at zero, then averaged over
heads; each layer's gradient multiplies that same layer's attention). "The read row" of a T x T
matrix M is M[0] (the cls row) for a model pooled on its token, and the mean of the patch rows
M[prefix], ..., M[T-1] for the model pooled by averaging. Every map is the read row restricted
to the patch columns (prefix = cls and registers left out), patches in raster order.

  * attention:      the read row of mean_h A_{L-1}.
  * rollout:        (Abnar & Zuidema 2020) B_l = (mean_h A_l + I) / 2 with each row divided by
                    its sum; R = B_{L-1} ... B_1 B_0 (block 0 applied first); map = read row of R.
  * grad-rollout:   the same product with G_l in place of mean_h A_l: B_l = (G_l + I) / 2, rows
                    renormalised.
  * chefer:         (Chefer, Gur & Wolf, ICCV 2021, eqs. 5-6) R = I (T x T); for l = 0 ... L-1:
                    R <- R + G_l R (matrix product); map = read row of R, raw (not normalised).
  * input-gradient: sum over the colour channels of |dy_c/dx|, x the model's input tensor (after
                    the normalisation: what the patch convolution sees), then summed over each
                    patch's P x P pixels -> one value per patch.
  * receptive field (Luo et al. 2016; Raghu et al. 2021): for block l and token t, the sum over
                    colours of |d(sum_d z_l[t, d]) / dx|, z_l the residual stream after block l
                    (before any final norm: make_golden.forward's "hidden"), one value per input
                    pixel (height x width, row after row), not normalised.

All gradients of y_c come from one backward pass of y_c (float32 autograd), with retain_grad on
each block's softmax output and requires_grad on the input. The readouts (rollout, chefer
products, sums of |gradients|) are computed in float64 from the float32 A, dy/dA and dy/dx, and
written at full float64 precision (make_golden.f64_list); logits as exact float32.

Self-checks (asserted and printed):
  * dy_c/dx (float32 autograd) against float64 autograd on the weights and image converted to
    float64, and float64 autograd against a central finite difference at a few input entries;
  * dy_c/dA_l (retain_grad, float32) against float64 torch.autograd.grad, and float64 against a
    central finite difference on single attention entries (an independent attention that adds a
    perturbation after its softmax);
  * the token-pooled forward here against make_golden.forward (attention and logits equal);
  * the average-pooled forward against torch.nn modules (nn.TransformerEncoderLayer with
    norm_first, nn.LayerNorm, nn.Linear) within 1e-5;
  * fashion_vit's logits against assets/fashion_vit/train.py's own nn.Module within 1e-5;
  * dinov2_reg_f32's receptive field d(sum_d z_l[t, d])/dx: float32 autograd against float64
    autograd, and float64 autograd against a central finite difference at a few input entries;
  * for dinov2_reg_f32 and timm_reg_ls_f16, the norms of make_golden.forward's residual stream
    against make_golden's own golden file of that model and image (tests/vit/data/golden).
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
import make_golden as mg  # noqa: E402  (forward pieces, safetensors I/O, image loading, JSON)

REPO = mg.REPO
REL = os.path.join(mg.DATA, "relevance")
GOLDEN = os.path.join(REL, "golden")
FASHION = os.path.join(REPO, "assets", "fashion_vit")

SAFARI = ["safari_32x32.png", "safari_61x45.png"]
FASHION_IMAGE = "14_bag.png"  # images/ has no 08_bag; the first bag image

AVG_LABELS = ["giraffe", "zebra", "acacia", "sky"]
AVG_SPEC = dict(name="timm_reg_avg_f32", naming="timm", D=32, depth=3, heads=4, dtype="F32",
                registers=2, layer_scale=False, qkv_bias=True, pos_prefix=3, classes=4,
                eps=1e-6, mean=mg.IMAGENET_MEAN, std=mg.IMAGENET_STD, args=[],
                labels=AVG_LABELS, pooling="avg")
AVG_CONFIG = {"architecture": "vit_test_reg_avg", "num_classes": 4, "num_features": 32,
              "global_pool": "avg", "model_args": {"num_heads": 4, "global_pool": "avg"},
              "pretrained_cfg": {"mean": mg.IMAGENET_MEAN, "std": mg.IMAGENET_STD},
              "label_names": AVG_LABELS}
AVG_SEED = 2000

METHODS = ("attention", "rollout", "grad-rollout", "chefer", "input-gradient")

# make_golden's checkpoints without a classifier, with layer scale and registers: receptive
# fields only (model, image).
RF_ONLY = [("dinov2_reg_f32", "safari_61x45.png"), ("timm_reg_ls_f16", "safari_48x48.png")]
RF_CHECK = "dinov2_reg_f32"  # the one whose receptive field is checked by finite differences


def rel(path):
    return os.path.relpath(path, REPO).replace(os.sep, "/")


# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------
def spec_of(name):
    return dict(next(s for s in mg.MODELS if s["name"] == name), pooling="token")


def tensors_in(P):
    if isinstance(P, dict):
        return [t for v in P.values() for t in tensors_in(v)]
    if isinstance(P, list):
        return [t for v in P for t in tensors_in(v)]
    return [P] if torch.is_tensor(P) else []


def assert_all_mapped(P, W, unused=()):
    """Every tensor of the file has its place in the canonical weights (no name missed)."""
    missed = {k for k, t in W.items() if not any(t is u for u in tensors_in(P))}
    assert missed == set(unused), missed


def load_existing(name, images=SAFARI):
    """One of make_golden's checkpoints, read back with its independent parser (weights rounded
    to the stored dtype, as float32: exactly what make_golden's forward used)."""
    spec = spec_of(name)
    folder = os.path.join(mg.DATA, name)
    W, dtypes = mg.read_safetensors(os.path.join(folder, "model.safetensors"))
    assert set(dtypes.values()) == {spec["dtype"]}
    P = mg.from_named(spec, W)
    assert_all_mapped(P, W, ["mask_token"] if spec["naming"] == "dinov2" else [])  # DINOv2's: unused
    return spec, P, folder, [(s, mg.DATA) for s in images]


def make_avg_model():
    """Write timm_reg_avg_f32 (random weights, make_golden's sizes) and read it back."""
    spec = AVG_SPEC
    folder = os.path.join(REL, spec["name"])
    os.makedirs(folder, exist_ok=True)
    P0 = mg.make_canonical(spec, seed=AVG_SEED)
    # timm's VisionTransformer with global_pool="avg": norm = Identity (no tensors), fc_norm
    # takes the final LayerNorm's place in the state dict (just before head).
    named = [({"norm.weight": "fc_norm.weight", "norm.bias": "fc_norm.bias"}.get(k, k), t)
             for k, t in mg.to_named(spec, P0)]
    path = os.path.join(folder, "model.safetensors")
    mg.write_safetensors(path, named, spec["dtype"])
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(AVG_CONFIG, f, indent=2)
        f.write("\n")
    W, _ = mg.read_safetensors(path)
    assert list(W) == [k for k, _ in named]
    assert "norm.weight" not in W and "fc_norm.weight" in W
    for k, t in named:
        assert torch.equal(W[k], t.float()), k
    P = mg.from_named(spec, W)
    assert P["norm_w"] is None
    P["norm_w"], P["norm_b"] = W["fc_norm.weight"], W["fc_norm.bias"]  # fc_norm, canonical slot
    assert P["pos"].shape[1] == 1 + spec["registers"] + mg.GRID0 ** 2
    return spec, P, folder, [(s, mg.DATA) for s in SAFARI]


def load_fashion():
    with open(os.path.join(FASHION, "config.json")) as f:
        cfg = json.load(f)
    ma, pc = cfg["model_args"], cfg["pretrained_cfg"]
    assert cfg["global_pool"] == "token" and ma["class_token"] and not ma["no_embed_class"]
    spec = dict(name="fashion_vit", naming="timm", D=ma["embed_dim"], depth=ma["depth"],
                heads=ma["num_heads"], patch=ma["patch_size"],
                grid0=ma["img_size"] // ma["patch_size"], dtype="F32", registers=0,
                layer_scale=False, qkv_bias=ma["qkv_bias"], pos_prefix=1,
                classes=ma["num_classes"], eps=1e-6, mean=pc["mean"], std=pc["std"], args=[],
                labels=cfg["label_names"], pooling="token")
    W, _ = mg.read_safetensors(os.path.join(FASHION, "model.safetensors"))
    P = mg.from_named(spec, W)
    assert_all_mapped(P, W)
    assert P["pos"].shape == (1, 1 + spec["grid0"] ** 2, spec["D"])
    return spec, P, FASHION, [(FASHION_IMAGE, os.path.join(FASHION, "images"))]


# --------------------------------------------------------------------------------------------
# Forward that keeps the attention's gradient
# --------------------------------------------------------------------------------------------
def golden_attention(spec):
    """make_golden's attention; returns (output, the softmax's own output [1, H, T, T])."""
    fn = mg.hf_attention if spec["naming"] == "hf" else mg.timm_attention

    def attend(l, b, x, H):
        o, a = fn(b, x, H)  # a = probs[0], a view of the softmax output
        base = a._base
        assert base is not None and base.dim() == 4 and base.shape[0] == 1 and base[0].data_ptr() == a.data_ptr()
        return o, base

    return attend


def forward_grad(spec, P, img, attend=None):
    """make_golden.forward's blocks, with pooling "token" (norm, token 0) or "avg" (mean of the
    tokens after the prefix, fc_norm); -> logits [C], attention list of [1, H, T, T] (graph
    tensors: retain_grad works on them), hidden list of [T, D] (each block's output)."""
    D, H, eps = spec["D"], spec["heads"], spec["eps"]
    attend = attend or golden_attention(spec)
    x = mg.embed(spec, P, img)
    attns, hidden = [], []
    for l, b in enumerate(P["blocks"]):
        o, a = attend(l, b, F.layer_norm(x, (D,), b["ln1_w"], b["ln1_b"], eps), H)
        attns.append(a)
        x = x + (o * b["ls1"] if b.get("ls1") is not None else o)
        h = F.layer_norm(x, (D,), b["ln2_w"], b["ln2_b"], eps)
        m = F.linear(F.gelu(F.linear(h, b["fc1_w"], b["fc1_b"])), b["fc2_w"], b["fc2_b"])
        x = x + (m * b["ls2"] if b.get("ls2") is not None else m)
        hidden.append(x[0])
    if spec["pooling"] == "avg":
        pooled = F.layer_norm(x[:, 1 + spec["registers"]:].mean(1), (D,), P["norm_w"], P["norm_b"], eps)
    else:
        pooled = F.layer_norm(x, (D,), P["norm_w"], P["norm_b"], eps)[:, 0]
    logits = F.linear(pooled, P["head_w"], P["head_b"])[0]
    return logits, attns, hidden


def class_gradients(spec, P, img0, c):
    """One forward, one backward of y_c: logits, A [L,H,T,T], dy/dA [L,H,T,T], dy/dx [1,3,h,w]."""
    img = img0.clone().requires_grad_()
    logits, attns, _ = forward_grad(spec, P, img)
    for a in attns:
        a.retain_grad()
    logits[c].backward()
    A = torch.stack([a.detach()[0] for a in attns])
    dA = torch.stack([a.grad[0] for a in attns])
    return logits.detach(), A, dA, img.grad.detach()


def receptive_field(spec, P, img0, layer, token):
    img = img0.clone().requires_grad_()
    _, _, hidden = forward_grad(spec, P, img)
    hidden[layer][token].sum().backward()
    return img.grad[0].double().abs().sum(0).numpy()  # [h, w]


def hidden_mg(spec, P, img):
    """make_golden.forward's residual stream after each block, [L, T, D] (graph tensor)."""
    return mg.forward(spec, P, img)["hidden"]


def receptive_field_mg(spec, P, img0, layer, token):
    """receptive_field through make_golden.forward itself (models without a classifier)."""
    img = img0.clone().requires_grad_()
    hidden_mg(spec, P, img)[layer, token].sum().backward()
    return img.grad[0].double().abs().sum(0).numpy()  # [h, w]


def check_receptive_field(spec, P, img32, layer, token):
    """d(sum_d z_l[t, d])/dx: float32 autograd vs float64 autograd vs central differences."""
    img = img32.clone().requires_grad_()
    hidden_mg(spec, P, img)[layer, token].sum().backward()
    dx32 = img.grad.detach()
    P64, x64 = to64(P), img32.double()
    xg = x64.clone().requires_grad_()
    (dx64,) = torch.autograd.grad(hidden_mg(spec, P64, xg)[layer, token].sum(), xg)
    e32 = ((dx32.double() - dx64).abs().max() / dx64.abs().max()).item()
    flat = dx64.abs().flatten()
    rng = np.random.default_rng(11)
    entries = flat.topk(3).indices.tolist() + rng.choice(flat.numel(), 3, replace=False).tolist()
    step, worst, rows = 1e-6, 0.0, []
    with torch.no_grad():
        for i in entries:
            xp, xm = x64.clone(), x64.clone()
            xp.view(-1)[i] += step
            xm.view(-1)[i] -= step
            fd = (hidden_mg(spec, P64, xp)[layer, token].sum() - hidden_mg(spec, P64, xm)[layer, token].sum()).item() / (2 * step)
            g = dx64.view(-1)[i].item()
            rows.append((i, g, fd))
            worst = max(worst, abs(fd - g) / flat.max().item())
    for i, g, fd in rows:
        ch, r = divmod(i, x64.shape[2] * x64.shape[3])
        y, xx = divmod(r, x64.shape[3])
        print(f"  {spec['name']} layer {layer} token {token} dz/dx[c{ch}, y{y}, x{xx}]: autograd f64 {g:+.12e}, "
              f"central difference {fd:+.12e}")
    print(f"self-check {spec['name']} receptive field layer {layer} token {token}: float32 vs float64 autograd "
          f"{e32:.2e} (of max |g|), float64 autograd vs central difference at {len(entries)} entries {worst:.2e}")
    assert e32 < 1e-4 and worst < 1e-7


# --------------------------------------------------------------------------------------------
# Readouts (float64)
# --------------------------------------------------------------------------------------------
def read_row(M, prefix, pooling):
    """The cls row of M, or the mean of its patch rows (average pooling); patch columns only."""
    row = M[prefix:].mean(0) if pooling == "avg" else M[0]
    return row[prefix:]


def grad_weighted(A, dA):
    """G_l = mean_h((dy/dA_l * A_l)+), [L, T, T]."""
    return np.maximum(dA * A, 0).mean(1)


def rollout_of(mats):
    """B_l = (M_l + I)/2, rows renormalised; R = B_{L-1} ... B_0."""
    T = mats.shape[-1]
    R = np.eye(T)
    for M in mats:
        B = (M + np.eye(T)) / 2
        B = B / B.sum(-1, keepdims=True)
        R = B @ R
    return R


def chefer_of(G):
    T = G.shape[-1]
    R = np.eye(T)
    for Gl in G:
        R = R + Gl @ R
    return R


def relevance_maps(A32, dA32, dx32, prefix, pooling, patch):
    A, dA = A32.numpy().astype(np.float64), dA32.numpy().astype(np.float64)
    G = grad_weighted(A, dA)
    g = dx32[0].numpy().astype(np.float64)
    _, h, w = g.shape
    per_pixel = np.abs(g).sum(0)
    per_patch = per_pixel.reshape(h // patch, patch, w // patch, patch).sum((1, 3)).ravel()
    return {
        "attention": read_row(A[-1].mean(0), prefix, pooling),
        "rollout": read_row(rollout_of(A.mean(1)), prefix, pooling),
        "grad-rollout": read_row(rollout_of(G), prefix, pooling),
        "chefer": read_row(chefer_of(G), prefix, pooling),
        "input-gradient": per_patch,
    }


# --------------------------------------------------------------------------------------------
# Self-checks
# --------------------------------------------------------------------------------------------
def to64(P):
    if isinstance(P, dict):
        return {k: to64(v) for k, v in P.items()}
    if isinstance(P, list):
        return [to64(v) for v in P]
    return P.double() if torch.is_tensor(P) else P


def timm_attention_delta(delta):
    """An attention written separately from make_golden's (timm's fused qkv layout) that adds
    delta[l] ([H, T, T] or None) to block l's softmax output: finite differences in A."""
    def attend(l, b, x, H):
        _, T, D = x.shape
        hd = D // H
        qkv = x[0] @ b["qkv_w"].t() + b["qkv_b"]  # [T, 3D]
        q, k, v = (qkv[:, i * D:(i + 1) * D].reshape(T, H, hd).transpose(0, 1) for i in range(3))
        A = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(hd), dim=-1)
        if delta[l] is not None:
            A = A + delta[l]
        o = (A @ v).transpose(0, 1).reshape(1, T, D) @ b["proj_w"].t() + b["proj_b"]
        return o, A[None]
    return attend


def check_gradients(spec, P, img32, c):
    """dy_c/dx and dy_c/dA: float32 autograd vs float64 autograd vs central differences."""
    name = spec["name"]
    _, A32, dA32, dx32 = class_gradients(spec, P, img32, c)
    P64, x64 = to64(P), img32.double()

    # dy/dx: float64 autograd, then central differences at a few input entries.
    xg = x64.clone().requires_grad_()
    logits64, attns64, _ = forward_grad(spec, P64, xg)
    dA64 = torch.autograd.grad(logits64[c], attns64, retain_graph=True)
    (dx64,) = torch.autograd.grad(logits64[c], xg)
    e32 = ((dx32.double() - dx64).abs().max() / dx64.abs().max()).item()
    flat = dx64.abs().flatten()
    rng = np.random.default_rng(7)
    entries = flat.topk(3).indices.tolist() + rng.choice(flat.numel(), 3, replace=False).tolist()
    step, worst = 1e-6, 0.0
    with torch.no_grad():
        for i in entries:
            xp, xm = x64.clone(), x64.clone()
            xp.view(-1)[i] += step
            xm.view(-1)[i] -= step
            fd = (forward_grad(spec, P64, xp)[0][c] - forward_grad(spec, P64, xm)[0][c]).item() / (2 * step)
            worst = max(worst, abs(fd - dx64.view(-1)[i].item()) / flat.max().item())
    print(f"self-check {name} class {c} dy/dx: float32 vs float64 autograd {e32:.2e} (of max |g|), "
          f"float64 autograd vs central difference at {len(entries)} entries {worst:.2e}")
    assert e32 < 1e-4 and worst < 1e-7

    # dy/dA: retain_grad (float32) vs torch.autograd.grad (float64).
    dA64 = torch.stack([d[0] for d in dA64])
    eA = ((dA32.double() - dA64).abs().max() / dA64.abs().max()).item()
    # ... and float64 autograd vs central differences on single entries of A_l, through an
    # attention written separately (first checked to reproduce make_golden's attention).
    L = len(P["blocks"])
    with torch.no_grad():
        lg_sep, at_sep, _ = forward_grad(spec, P64, x64, timm_attention_delta([None] * L))
        lg_ref, at_ref, _ = forward_grad(spec, P64, x64)
    d_sep = max((a - b).abs().max().item() for a, b in zip(at_sep, at_ref))
    d_sep = max(d_sep, (lg_sep - lg_ref).abs().max().item())
    assert d_sep < 1e-12, d_sep
    worstA, n = 0.0, 0
    for l in range(L):
        for idx in [np.unravel_index(int(dA64[l].abs().argmax()), dA64[l].shape),
                    tuple(int(rng.integers(s)) for s in dA64[l].shape)]:
            vals = []
            for sgn in (1, -1):
                delta = [None] * L
                delta[l] = torch.zeros_like(dA64[l])
                delta[l][idx] = sgn * step
                with torch.no_grad():
                    vals.append(forward_grad(spec, P64, x64, timm_attention_delta(delta))[0][c].item())
            fd = (vals[0] - vals[1]) / (2 * step)
            worstA = max(worstA, abs(fd - dA64[l][idx].item()) / dA64.abs().max().item())
            n += 1
    print(f"self-check {name} class {c} dy/dA: retain_grad float32 vs autograd.grad float64 {eA:.2e} "
          f"(of max |g|), separate attention vs make_golden's {d_sep:.1e}, float64 autograd vs "
          f"central difference at {n} entries {worstA:.2e}")
    assert eA < 1e-4 and worstA < 1e-7


def check_token_forward(spec, P, img):
    with torch.no_grad():
        ref = mg.forward(spec, P, img)
        logits, attns, hidden = forward_grad(spec, P, img)
    assert torch.equal(ref["logits"], logits) and torch.equal(ref["attention"], torch.stack([a[0] for a in attns]))
    assert torch.equal(ref["hidden"], torch.stack(hidden))


def check_avg_modules(spec, P, img):
    """The average-pooled forward through torch.nn modules (embedding from make_golden.embed,
    which make_golden checks against nn.Conv2d at the native size)."""
    D, H, eps = spec["D"], spec["heads"], spec["eps"]
    with torch.no_grad():
        logits, _, _ = forward_grad(spec, P, img)
        x = mg.embed(spec, P, img)
        for b in P["blocks"]:
            layer = torch.nn.TransformerEncoderLayer(D, H, dim_feedforward=b["fc1_w"].shape[0], dropout=0.0,
                                                     activation="gelu", layer_norm_eps=eps, batch_first=True,
                                                     norm_first=True)
            layer.self_attn.in_proj_weight.copy_(b["qkv_w"]); layer.self_attn.in_proj_bias.copy_(b["qkv_b"])
            layer.self_attn.out_proj.weight.copy_(b["proj_w"]); layer.self_attn.out_proj.bias.copy_(b["proj_b"])
            layer.norm1.weight.copy_(b["ln1_w"]); layer.norm1.bias.copy_(b["ln1_b"])
            layer.norm2.weight.copy_(b["ln2_w"]); layer.norm2.bias.copy_(b["ln2_b"])
            layer.linear1.weight.copy_(b["fc1_w"]); layer.linear1.bias.copy_(b["fc1_b"])
            layer.linear2.weight.copy_(b["fc2_w"]); layer.linear2.bias.copy_(b["fc2_b"])
            x = layer.eval()(x)
        fc_norm = torch.nn.LayerNorm(D, eps=eps)
        fc_norm.weight.copy_(P["norm_w"]); fc_norm.bias.copy_(P["norm_b"])
        head = torch.nn.Linear(D, spec["classes"])
        head.weight.copy_(P["head_w"]); head.bias.copy_(P["head_b"])
        pooled = torch.nn.AdaptiveAvgPool1d(1)(x[:, 1 + spec["registers"]:].transpose(1, 2))[..., 0]
        chk = head(fc_norm(pooled))[0]
    d = (chk - logits).abs().max().item()
    print(f"self-check {spec['name']} {img.shape[3]}x{img.shape[2]} average pooling vs torch.nn modules: logits {d:.2e}")
    assert d < 1e-5


def check_fashion(P, img):
    sys.path.insert(0, FASHION)
    import train  # assets/fashion_vit/train.py: the model it was trained as

    ma = json.load(open(os.path.join(FASHION, "config.json")))["model_args"]
    model = train.VisionTransformer(ma["patch_size"], ma["embed_dim"], ma["depth"], ma["num_heads"], ma["mlp_ratio"])
    W, _ = mg.read_safetensors(os.path.join(FASHION, "model.safetensors"))
    state = model.state_dict()
    model.load_state_dict({k: W[k].reshape(state[k].shape) for k in state})
    with torch.no_grad():
        chk = model.eval()(img)[0]
    return chk


# --------------------------------------------------------------------------------------------
README_HEAD = """# Golden files for class relevance and receptive fields

Made by `tests/vit/make_relevance_golden.py` (run `/usr/bin/python3
tests/vit/make_relevance_golden.py` from the repository root; torch 1.13, numpy, PIL; a few seconds
on 2 cores; deterministic). Do not edit by hand: change the script and run it again. **CI never
runs Python**; the C++ tests read these files.

The script imports `tests/vit/make_golden.py` as a module: its forward (embedding, position
embedding resampling, explicit-softmax attention of timm and Hugging Face), its safetensors
writer and reader, its image loading (RGB / 255, normalised with the model's mean and std,
cropped top-left to multiples of the patch, no resize). Gradients are PyTorch autograd in
float32, from one backward pass of the class logit y_c (`retain_grad` on every block's
attention after its softmax, `requires_grad` on the input tensor); readouts in float64.

## Formulas (SPEC.md section 13)

A_l: block l's attention after softmax (heads x T x T); y_c: logit of class c; mean_h: mean over
heads; G_l = mean_h((dy_c/dA_l * A_l)+), each layer's gradient with its own layer. The read row
of a T x T matrix is row 0 (cls) for token pooling and the mean of the patch rows (prefix ... T-1)
for average pooling; maps are that row's patch columns (cls and registers left out), raster order.

* `attention`: read row of mean_h A_{L-1}.
* `rollout` (Abnar & Zuidema 2020): B_l = (mean_h A_l + I)/2, rows renormalised;
  R = B_{L-1} ... B_0; read row of R.
* `grad-rollout`: as rollout with G_l in place of mean_h A_l.
* `chefer` (Chefer, Gur & Wolf, ICCV 2021, eqs. 5-6): R = I; for l = 0 ... L-1: R <- R + G_l R;
  read row of R, raw.
* `input-gradient`: sum over colours of |dy_c/dx| (x: the normalised input tensor), summed over
  each patch's P x P pixels.
* receptive field (section 13, Luo et al. 2016): sum over colours of |d(sum_d z_l[t, d])/dx|,
  z_l the residual stream after block l (before the final norm), one value per input pixel.

## Models

| model folder | naming | D | depth | heads | patch | registers | layer scale | position embedding | pooling | classes | images |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
"""

README_TAIL = """
`timm_reg_avg_f32` is written by this script (random weights, `torch.manual_seed(2000)`, sized
as make_golden.py's): timm names, qkv bias, no layer scale, F32, config.json with
`"global_pool": "avg"`; timm's `norm` is Identity there, so the file holds `fc_norm.weight/bias`
(applied to the mean of the tokens after cls and registers) and no `norm.*`. Its position
embedding covers cls + registers + patches (timm with `no_embed_class=False`; timm has no layout
with registers where it covers cls and patches only). `assets/fashion_vit` has no image 08 of a
bag (08 is a sneaker); the first bag image, 14_bag.png, is used.

`dinov2_reg_f32` and `timm_reg_ls_f16` are make_golden.py's checkpoints (see `../README.md`):
no classifier, layer scale (timm `LayerScale`: x + gamma * branch, both branches of every
block), registers. Their files hold receptive fields only, computed through
`make_golden.forward` itself (its `hidden`) on the weights read back from the stored files with
make_golden's reader and `from_named` (F16 rounded for `timm_reg_ls_f16`). `dinov2_reg_f32`'s
position embedding covers cls + patches and its 4 registers are inserted after cls without one
(DINOv2's `prepare_tokens_with_masks`; its unused `mask_token` is in the file);
`timm_reg_ls_f16`'s covers the patches only (timm `no_embed_class=True`), has no qkv bias and no
config.json (the C++ side passes `--heads 4`).

The script asserts and prints its self-checks: dy_c/dx in float32 against float64 autograd
and float64 autograd against central differences at a few input entries; dy_c/dA_l from
`retain_grad` (float32) against float64 `torch.autograd.grad` and against central differences
on single attention entries; the average-pooled forward against torch.nn modules
(`nn.TransformerEncoderLayer(norm_first=True)`, `nn.LayerNorm`, `nn.Linear`); fashion_vit's
logits against `assets/fashion_vit/train.py`'s own model; `dinov2_reg_f32`'s receptive field
d(sum_d z_l[t, d])/dx (both entries) in float32 against float64 autograd and float64 autograd
against central differences at a few input entries; for `dinov2_reg_f32` and
`timm_reg_ls_f16`, the norms of the residual stream against make_golden's own golden file of
that model and image (`../golden/`).

## Golden files: `golden/<model>__<image stem>.json` (9: 7 with relevance, 2 receptive fields only)

* `model`: the model folder relative to the repository root; `image`: the PNG relative to the
  repository root; `args`: extra command-line arguments (`["--heads", "4"]` for
  `timm_reg_ls_f16`, none for the others).
* `grid`: [cols, rows]; `T`: tokens (1 + registers + cols x rows); `prefix`: 1 + registers;
  `input`: [width, height] of the cropped input tensor; `pooling`: "token" or "avg" ("token"
  for the models without a classifier, where nothing is pooled).
* Only with a classifier (absent from `dinov2_reg_f32__safari_61x45.json` and
  `timm_reg_ls_f16__safari_48x48.json`):
  * `logits`: float32 (shortest round-trip decimals).
  * `classes`: [c_top, c_other]: the argmax logit and (c_top + 1) % classes.
  * `relevance`: {"<c>": {"attention", "rollout", "grad-rollout", "chefer", "input-gradient"}}
    for both classes (key: the class index as a string); each cols x rows values, raster
    order, float64.
* `receptive_field`: two entries {"layer", "token", "col", "row", "map"}: layer 0 at the patch
  in the grid's centre (col = cols // 2, row = rows // 2) and the last layer at patch (0, 0);
  token = prefix + row x cols + col; `map`: height x width float64 values, row after row.
"""


def main():
    torch.set_num_threads(min(2, torch.get_num_threads()))
    os.makedirs(GOLDEN, exist_ok=True)
    models = [load_existing("timm_f32"), load_existing("hf_cls_f32"), make_avg_model(), load_fashion()]
    readme_rows = []
    n_files = 0
    for spec, P, folder, images in models:
        patch = spec.get("patch", mg.PATCH)
        prefix = 1 + spec["registers"]
        readme_rows.append((spec, folder, images))
        for img_name, img_dir in images:
            img = mg.load_image(img_name, spec["mean"], spec["std"], patch, img_dir)
            h, w = img.shape[2:]
            rows, cols = h // patch, w // patch
            T = prefix + rows * cols

            with torch.no_grad():
                logits = forward_grad(spec, P, img)[0]
            if spec["pooling"] == "token":
                check_token_forward(spec, P, img)
            else:
                check_avg_modules(spec, P, img)
            if spec["name"] == "fashion_vit":
                d = (check_fashion(P, img) - logits).abs().max().item()
                print(f"self-check fashion_vit vs assets/fashion_vit/train.py's nn.Module: logits {d:.2e}")
                assert d < 1e-5
            c_top = int(torch.argmax(logits))
            c_other = (c_top + 1) % spec["classes"]
            if spec["name"] == "timm_reg_avg_f32" and img_name == "safari_61x45.png":
                check_gradients(spec, P, img, c_top)

            relevance = {}
            for c in (c_top, c_other):
                lg, A, dA, dx = class_gradients(spec, P, img, c)
                assert torch.equal(lg, logits)
                assert A.shape == (spec["depth"], spec["heads"], T, T)
                maps = relevance_maps(A, dA, dx, prefix, spec["pooling"], patch)
                for k in METHODS:
                    assert maps[k].shape == (rows * cols,) and np.isfinite(maps[k]).all()
                relevance[str(c)] = {k: mg.f64_list(maps[k]) for k in METHODS}

            fields = []
            for layer, (col, row) in ((0, (cols // 2, rows // 2)), (spec["depth"] - 1, (0, 0))):
                t = prefix + row * cols + col
                m = receptive_field(spec, P, img, layer, t)
                assert m.shape == (h, w)
                fields.append({"layer": layer, "token": t, "col": col, "row": row, "map": mg.f64_list(m)})

            g = {
                "model": rel(folder), "image": rel(os.path.join(img_dir, img_name)), "args": spec["args"],
                "grid": [cols, rows], "T": T, "prefix": prefix, "input": [w, h], "pooling": spec["pooling"],
                "logits": mg.f32_list(logits.numpy()),
                "classes": [c_top, c_other],
                "relevance": relevance,
                "receptive_field": fields,
            }
            stem = os.path.splitext(img_name)[0]
            mg.write_json(os.path.join(GOLDEN, f"{spec['name']}__{stem}.json"), g)
            n_files += 1
            p = torch.softmax(logits, -1).numpy().astype(np.float64)
            top = relevance[str(c_top)]
            print(f"{spec['name']:17s} {img_name:17s} grid {cols}x{rows} T {T:3d} classes {c_top},{c_other} "
                  f"p {np.round(p, 4).tolist()} chefer max {max(top['chefer']):.4f} "
                  f"rf0 sum {sum(fields[0]['map']):.4f}")

    # Receptive fields only: make_golden's checkpoints without a classifier, with layer scale.
    for name, img_name in RF_ONLY:
        spec, P, folder, images = load_existing(name, [img_name])
        assert P["head_w"] is None and spec["classes"] == 0 and spec["layer_scale"]
        assert all(b["ls1"] is not None and b["ls2"] is not None for b in P["blocks"])
        patch = spec.get("patch", mg.PATCH)
        prefix = 1 + spec["registers"]
        readme_rows.append((spec, folder, images))
        img = mg.load_image(img_name, spec["mean"], spec["std"], patch, mg.DATA)
        h, w = img.shape[2:]
        rows, cols = h // patch, w // patch
        T = prefix + rows * cols
        with torch.no_grad():
            ref = mg.forward(spec, P, img)
        assert ref["logits"] is None and ref["hidden"].shape == (spec["depth"], T, spec["D"])
        # The same residual stream as make_golden's own golden file for this model and image.
        with open(os.path.join(mg.DATA, "golden", f"{name}__{os.path.splitext(img_name)[0]}.json")) as f:
            norms = np.array(json.load(f)["norms"])
        d = np.abs(np.linalg.norm(ref["hidden"].double().numpy(), axis=-1) - norms).max()
        print(f"self-check {name} {img_name}: ||z_l[t]|| vs make_golden's golden norms {d:.1e}")
        assert d < 1e-9
        fields = []
        for layer, (col, row) in ((0, (cols // 2, rows // 2)), (spec["depth"] - 1, (0, 0))):
            t = prefix + row * cols + col
            if name == RF_CHECK:
                check_receptive_field(spec, P, img, layer, t)
            m = receptive_field_mg(spec, P, img, layer, t)
            assert m.shape == (h, w) and np.isfinite(m).all() and m.max() > 0
            fields.append({"layer": layer, "token": t, "col": col, "row": row, "map": mg.f64_list(m)})
        g = {
            "model": rel(folder), "image": rel(os.path.join(mg.DATA, img_name)), "args": spec["args"],
            "grid": [cols, rows], "T": T, "prefix": prefix, "input": [w, h], "pooling": spec["pooling"],
            "receptive_field": fields,
        }
        stem = os.path.splitext(img_name)[0]
        mg.write_json(os.path.join(GOLDEN, f"{spec['name']}__{stem}.json"), g)
        n_files += 1
        print(f"{spec['name']:17s} {img_name:17s} grid {cols}x{rows} T {T:3d} receptive fields only "
              f"rf0 sum {sum(fields[0]['map']):.4f} rf{spec['depth'] - 1} sum {sum(fields[1]['map']):.4f}")

    with open(os.path.join(REL, "README.md"), "w") as f:
        f.write(README_HEAD)
        for spec, folder, images in readme_rows:
            if spec["pos_prefix"] == 0:
                pos = "patches only"
            elif spec["naming"] == "dinov2":
                pos = "cls + patches (registers inserted after cls, no position)"
            else:
                pos = "cls + registers + patches" if spec["registers"] else "cls + patches"
            imgs = ", ".join(f"`{n}`" for n, _ in images)
            f.write(f"| `{rel(folder)}` | {spec['naming']} | {spec['D']} | {spec['depth']} | {spec['heads']} | "
                    f"{spec.get('patch', mg.PATCH)} | {spec['registers']} | "
                    f"{'yes' if spec['layer_scale'] else 'no'} | {pos} | "
                    f"{spec['pooling'] if spec['classes'] else '-'} | "
                    f"{spec['classes'] or 'none (receptive fields only)'} | {imgs} |\n")
        f.write(README_TAIL)
    print(f"{n_files} golden files in {rel(GOLDEN)}")


if __name__ == "__main__":
    sys.exit(main())
