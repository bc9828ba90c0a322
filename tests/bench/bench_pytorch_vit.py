#!/usr/bin/python3
"""PyTorch CPU timings to compare Attention Lab's C++ ViT forward and attention benchmark with.

    /usr/bin/python3 tests/bench/bench_pytorch_vit.py [--threads N] [--only {vit,attention}]
    # N defaults to 2; --only attention times just softmax(Q K^T / sqrt(m)) (seconds, not minutes)

ViT-S/16 (D 384, 6 heads, 12 layers, MLP 1536) and ViT-B/16 (D 768, 12 heads, 12 layers,
MLP 3072), patch 16, one 3x224x224 image (T = 1 + 14*14 = 197), random weights, written as timm
1.0.x's VisionTransformer forward (pre-norm blocks, qkv Linear, softmax(q k^T / sqrt(D/H)), exact
GELU, final LayerNorm, head on the cls token, 1000 classes). torch.set_num_threads(2),
torch.no_grad(); 2 warm-up runs, then best and median of 7. Also times softmax(Q K^T / sqrt(m))
with N = 4096, m = 3, float32, Q and K of N x m (the shapes of attnlab-bench's FullMatrix/*/4096:
head 0, the colour head, of a K = 8 grid of 64 x 64 patches with the default settings, whose
q and k have m' = 3 since the positional mode is "none"; the bench prints m as a counter), and
prints which BLAS torch uses. The C++ side returns the finished N x N matrix in new memory on
every call, as torch does here.

On a machine busy with other work, 2 OpenMP threads on 2 cores can be several times slower than
1 (every op waits at a barrier for a thread that is not scheduled): the load average printed at
the start says how busy it was; compare with --threads 1.
"""
import argparse
import math
import os
import statistics
import time

import torch
import torch.nn.functional as F

THREADS = 2
WARMUP = 2
RUNS = 7


class Block(torch.nn.Module):
    def __init__(self, D, H, M):
        super().__init__()
        self.H = H
        self.norm1 = torch.nn.LayerNorm(D, eps=1e-6)
        self.qkv = torch.nn.Linear(D, 3 * D)
        self.proj = torch.nn.Linear(D, D)
        self.norm2 = torch.nn.LayerNorm(D, eps=1e-6)
        self.fc1 = torch.nn.Linear(D, M)
        self.fc2 = torch.nn.Linear(M, D)

    def forward(self, x):
        B, T, D = x.shape
        hd = D // self.H
        q, k, v = self.qkv(self.norm1(x)).reshape(B, T, 3, self.H, hd).permute(2, 0, 3, 1, 4)
        a = ((q * hd ** -0.5) @ k.transpose(-2, -1)).softmax(-1)
        x = x + self.proj((a @ v).transpose(1, 2).reshape(B, T, D))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class ViT(torch.nn.Module):
    def __init__(self, D, H, depth, M, patch=16, img=224, classes=1000):
        super().__init__()
        self.patch_embed = torch.nn.Conv2d(3, D, patch, stride=patch)
        self.cls_token = torch.nn.Parameter(0.02 * torch.randn(1, 1, D))
        self.pos_embed = torch.nn.Parameter(0.02 * torch.randn(1, 1 + (img // patch) ** 2, D))
        self.blocks = torch.nn.ModuleList(Block(D, H, M) for _ in range(depth))
        self.norm = torch.nn.LayerNorm(D, eps=1e-6)
        self.head = torch.nn.Linear(D, classes)

    def forward(self, img):
        x = self.patch_embed(img).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x)[:, 0])


def time_it(fn):
    for _ in range(WARMUP):
        fn()
    ts = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts), statistics.median(ts)


def blas_info():
    lines = []
    for line in torch.__config__.show().splitlines():
        if "BLAS" in line or "LAPACK" in line or "MKL" in line or "OpenMP" in line:
            for part in line.strip(" -").split(", "):
                if "BLAS" in part or "LAPACK" in part or "MKL" in part or "OpenMP" in part:
                    lines.append(part.strip())
    alt = "/etc/alternatives/libblas.so.3-x86_64-linux-gnu"
    if os.path.exists(alt):
        lines.append(f"{alt} -> {os.path.realpath(alt)}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=THREADS, help="torch.set_num_threads")
    ap.add_argument("--only", choices=("vit", "attention"), help="run only the ViT forwards or only the attention timing")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"warm-up {WARMUP}, runs {RUNS}, cpus {os.cpu_count()}, "
          f"load average at start {os.getloadavg()[0]:.2f} (other work on the machine slows "
          f"these numbers)")
    for line in blas_info():
        print("  " + line)
    print()
    img = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        if args.only != "attention":
            print(f"{'model':10s} {'D':>4s} {'heads':>5s} {'layers':>6s} {'T':>4s} {'MLP':>5s} "
                  f"{'best ms':>9s} {'median ms':>10s}")
            for name, D, H, L, M in (("ViT-S/16", 384, 6, 12, 1536), ("ViT-B/16", 768, 12, 12, 3072)):
                model = ViT(D, H, L, M).eval()
                best, med = time_it(lambda: model(img))
                print(f"{name:10s} {D:4d} {H:5d} {L:6d} {197:4d} {M:5d} "
                      f"{best * 1e3:9.1f} {med * 1e3:10.1f}")
        if args.only == "vit":
            return
        N, m = 4096, 3
        Q, K = torch.randn(N, m), torch.randn(N, m)
        best, med = time_it(lambda: torch.softmax(Q @ K.T / math.sqrt(m), dim=-1))
        print()
        print(f"softmax(Q K^T / sqrt(m)), N {N}, m {m}: best {best * 1e3:.1f} ms, "
              f"median {med * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
