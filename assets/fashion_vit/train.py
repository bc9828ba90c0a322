#!/usr/bin/python3
"""Train Attention Lab's small Fashion-MNIST Vision Transformer and write it in timm's names.

The shipped weights now come from the project's own trainer (`attnlab train`, see
assets/README.md); this PyTorch script trained the first bundled model (87.32 %) and stays as
the PyTorch model that tests/vit/make_fashion_golden.py loads the shipped weights into.

Trains a small ViT (exactly timm's VisionTransformer forward: patch 4 on 28x28 -> 7x7 = 49
patches, a CLS token, learned position embedding over [cls, patches], pre-norm blocks with
LayerNorm eps 1e-6, exact GELU, classifier on the final-normed CLS token, global_pool='token')
on Zalando's Fashion-MNIST (Debian package dataset-fashion-mnist, MIT licence), on the CPU, then
writes beside this script:

  model.safetensors  F32, timm's tensor names, written by hand (tests/vit/make_golden.py's
                     write_safetensors)
  config.json        timm hub style (architecture, num_classes, global_pool, model_args,
                     pretrained_cfg mean/std/input_size, label_names)
  train_log.txt      per epoch: loss, train accuracy, test accuracy, time; the final line
                     "test accuracy: 0.XXXX (N of 10000)"

The grey 28x28 images are replicated to 3 channels (the app feeds RGB in [0, 1]) and normalized
with MEAN/STD below. Augmentation: random crop (padding 2, zero = black) and horizontal flip.
AdamW, linear warm-up then cosine decay (per step), label smoothing 0.1. Everything is seeded
(torch, numpy, deterministic algorithms); batches are drawn from a numpy RNG.

Rerun (from the repository root; torch 1.13 CPU, numpy; one thread, which is faster than two
on this 2-core machine for such small matrices: about 0.32 s a step alone, 30 min in all):

    /usr/bin/python3 assets/fashion_vit/train.py                 # the shipped run's settings
    /usr/bin/python3 assets/fashion_vit/train.py --epochs 1 --out /tmp/fv   # a quick trial

Then regenerate the test images and golden file with tests/vit/make_fashion_golden.py.
"""
import argparse
import gzip
import json
import math
import os
import sys
import time

# One BLAS thread, set before numpy and torch load OpenBLAS: its own threads spin beside torch's
# on 2 cores and made a training step 2x slower (and the run less repeatable).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "vit"))
from make_golden import write_safetensors  # noqa: E402  (the project's hand-written writer)

DATA_DIR = "/usr/share/datasets/fashion-mnist"
LABELS = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
          "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
# Fashion-MNIST training set pixel mean / std of uint8/255 (0.2860, 0.3530), rounded.
MEAN = 0.2860
STD = 0.3530
IMG = 28


# --------------------------------------------------------------------------------------------
# Data: the IDX format (big-endian magic, dims, then uint8), read by hand
# --------------------------------------------------------------------------------------------
def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    magic = int.from_bytes(raw[0:4], "big")
    assert magic >> 8 == 0x08, "IDX: expected unsigned byte data"
    ndim = magic & 0xFF
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    off = 4 + 4 * ndim
    a = np.frombuffer(raw, np.uint8, offset=off)
    assert a.size == int(np.prod(dims))
    return a.reshape(dims)


def load_split(split):
    """split 'train' or 't10k' -> images uint8 [N, 28, 28], labels int64 [N]."""
    x = read_idx(os.path.join(DATA_DIR, f"{split}-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(DATA_DIR, f"{split}-labels-idx1-ubyte.gz")).astype(np.int64)
    return x, y


def to_input(u8):
    """uint8 [B, 28, 28] -> float32 [B, 3, 28, 28]: /255, grey -> RGB, (x - mean) / std."""
    x = torch.from_numpy(np.array(u8, np.uint8)).float() / 255.0
    x = (x - MEAN) / STD
    return x[:, None].expand(-1, 3, -1, -1).contiguous()


def augment(u8, rng, pad=2):
    """Random crop with zero padding `pad` and horizontal flip (p = 0.5), per image."""
    B = u8.shape[0]
    padded = np.zeros((B, IMG + 2 * pad, IMG + 2 * pad), np.uint8)
    padded[:, pad:pad + IMG, pad:pad + IMG] = u8
    dy = rng.integers(0, 2 * pad + 1, B)
    dx = rng.integers(0, 2 * pad + 1, B)
    flip = rng.random(B) < 0.5
    out = np.empty_like(u8)
    for i in range(B):
        c = padded[i, dy[i]:dy[i] + IMG, dx[i]:dx[i] + IMG]
        out[i] = c[:, ::-1] if flip[i] else c
    return out


# --------------------------------------------------------------------------------------------
# Model: timm's VisionTransformer (class token, global_pool='token'), written out
# --------------------------------------------------------------------------------------------
class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=True)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, D = x.shape
        qkv = self.qkv(x).reshape(B, T, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = ((q * self.scale) @ k.transpose(-2, -1)).softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, T, D)
        return self.proj(x)


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))  # exact (erf) GELU, as nn.GELU()


class Block(nn.Module):
    def __init__(self, dim, heads, mlp_ratio):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class PatchEmbed(nn.Module):
    def __init__(self, patch, dim):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)  # [B, rows*cols, D], raster order


class VisionTransformer(nn.Module):
    def __init__(self, patch=4, dim=64, depth=6, heads=4, mlp_ratio=4.0, classes=10):
        super().__init__()
        grid = IMG // patch
        self.patch_embed = PatchEmbed(patch, dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, 1 + grid * grid, dim))
        self.blocks = nn.ModuleList([Block(dim, heads, mlp_ratio) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, classes)
        # timm's init (weight_init=''): pos trunc_normal(.02), cls normal(1e-6), Linear
        # trunc_normal(.02) with zero bias; patch conv keeps PyTorch's default; LayerNorm 1/0.
        nn.init.trunc_normal_(self.pos_embed, std=0.02)
        nn.init.normal_(self.cls_token, std=1e-6)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.patch_embed(x)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1)
        x = x + self.pos_embed
        for b in self.blocks:
            x = b(x)
        x = self.norm(x)
        return self.head(x[:, 0])


def timm_named(model):
    """[(timm name, tensor)] in timm's state_dict order."""
    return [(k, v.detach().float().contiguous()) for k, v in model.state_dict().items()]


# --------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------
@torch.no_grad()
def evaluate(model, x, y, batch=1000):
    model.eval()
    correct = 0
    for i in range(0, len(x), batch):
        correct += (model(to_input(x[i:i + batch])).argmax(1).numpy() == y[i:i + batch]).sum()
    return int(correct)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--patch", type=int, default=4)
    ap.add_argument("--mlp-ratio", type=float, default=4.0)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--weight-decay", type=float, default=0.05)
    ap.add_argument("--warmup-epochs", type=float, default=1.0)
    ap.add_argument("--smoothing", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=HERE, help="output folder (default: beside this script)")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    torch.use_deterministic_algorithms(True)
    rng = np.random.default_rng(args.seed)
    os.makedirs(args.out, exist_ok=True)

    xtr, ytr = load_split("train")
    xte, yte = load_split("t10k")
    model = VisionTransformer(args.patch, args.dim, args.depth, args.heads, args.mlp_ratio)
    nparams = sum(p.numel() for p in model.parameters())

    decay = [p for n, p in model.named_parameters()
             if p.ndim >= 2 and n not in ("cls_token", "pos_embed")]
    no_decay = [p for n, p in model.named_parameters()
                if not (p.ndim >= 2 and n not in ("cls_token", "pos_embed"))]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.999))
    steps_per_epoch = len(xtr) // args.batch  # the last partial batch is dropped
    total = steps_per_epoch * args.epochs
    warm = int(args.warmup_epochs * steps_per_epoch)

    def lr_at(step):
        if step < warm:
            return args.lr * (step + 1) / warm
        t = (step - warm) / max(1, total - warm)
        return args.lr * 0.5 * (1.0 + math.cos(math.pi * t))

    log_path = os.path.join(args.out, "train_log.txt")
    log = open(log_path, "w")

    def say(s):
        print(s, flush=True)
        log.write(s + "\n")
        log.flush()

    say(f"# Attention Lab fashion_vit: {' '.join(sys.argv)}")
    say(f"# torch {torch.__version__}, threads {args.threads}, seed {args.seed}")
    say(f"# ViT patch {args.patch}, D {args.dim}, depth {args.depth}, heads {args.heads}, "
        f"MLP {int(args.dim * args.mlp_ratio)}, parameters {nparams}")
    say(f"# AdamW lr {args.lr} wd {args.weight_decay}, batch {args.batch}, epochs {args.epochs}, "
        f"warm-up {warm} steps then cosine, label smoothing {args.smoothing}, "
        f"crop pad 2 + h-flip, mean {MEAN} std {STD}")
    say("epoch  loss    train_acc  test_acc  epoch_s  total_s")
    t0 = time.time()
    step = 0
    for epoch in range(1, args.epochs + 1):
        te = time.time()
        model.train()
        perm = rng.permutation(len(xtr))
        loss_sum, correct, seen = 0.0, 0, 0
        for s in range(steps_per_epoch):
            idx = perm[s * args.batch:(s + 1) * args.batch]
            xb = to_input(augment(xtr[idx], rng))
            yb = torch.from_numpy(ytr[idx])
            for g in opt.param_groups:
                g["lr"] = lr_at(step)
            logits = model(xb)
            loss = F.cross_entropy(logits, yb, label_smoothing=args.smoothing)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            loss_sum += loss.item() * len(idx)
            correct += int((logits.argmax(1) == yb).sum())
            seen += len(idx)
        test_correct = evaluate(model, xte, yte)
        now = time.time()
        say(f"{epoch:5d}  {loss_sum / seen:.4f}  {correct / seen:.4f}     "
            f"{test_correct / len(xte):.4f}    {now - te:7.1f}  {now - t0:7.1f}")

    test_correct = evaluate(model, xte, yte)
    say(f"wall time: {time.time() - t0:.1f} s")
    say(f"test accuracy: {test_correct / len(xte):.4f} ({test_correct} of {len(xte)})")
    log.close()

    write_safetensors(os.path.join(args.out, "model.safetensors"), timm_named(model), "F32")
    cfg = {
        "architecture": "vit_fashion_mnist",
        "num_classes": 10,
        "num_features": args.dim,
        "global_pool": "token",
        "model_args": {"num_heads": args.heads, "patch_size": args.patch,
                       "embed_dim": args.dim, "depth": args.depth,
                       "mlp_ratio": args.mlp_ratio, "img_size": IMG},
        "pretrained_cfg": {"mean": [MEAN] * 3, "std": [STD] * 3, "input_size": [3, IMG, IMG],
                           "num_classes": 10},
        "label_names": LABELS,
    }
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
