#!/usr/bin/python3
"""PyTorch CPU timings to compare Attention Lab's C++ ViT forward and attention benchmark with.

    /usr/bin/python3 tests/bench/bench_pytorch_vit.py [--threads 1,2] [--shapes S16_224,...]
                                                      [--only {vit,attention}]
    # --threads: the thread counts to try (default 1,2); --shapes: a subset of S16_224,
    # B16_224, S8_480 (default all; S8_480 takes ~25 s a forward on 2 cores, ~2 min per thread
    # count); --only attention times just softmax(Q K^T / sqrt(m)) (seconds, not minutes)

The shapes of attnlab-bench's VitForward/{Cpu,Gpu}/{S16_224,B16_224,S8_480}
(tests/bench/bench_attention.cpp): S16_224 = ViT-S/16 (D 384, 6 heads, 12 layers, MLP 1536),
B16_224 = ViT-B/16 (D 768, 12 heads, 12 layers, MLP 3072), both patch 16 on one 3x224x224 image
(T = 1 + 14*14 = 197); S8_480 = ViT-S/8 (ViT-S/16's widths, patch 8) on one 3x480x480 image
(T = 1 + 60*60 = 3601, DINO's visualize_attention.py size), its position embedding trained on
28 x 28 and resampled to 60 x 60 in every forward as timm's dynamic_img_size does
(resample_abs_pos_embed: bicubic, antialias=True; included in the time, a few ms). Random
weights, written as timm 1.0.x's VisionTransformer forward (pre-norm blocks, qkv Linear,
softmax(q k^T / sqrt(D/H)), exact GELU, final LayerNorm) without a classifier head, as
attnlab-bench's models have none. torch.no_grad(). For each shape and thread count
(torch.set_num_threads and OpenBLAS's openblas_set_num_threads, both set to N): 2 warm-up runs
then best and median of 7 (S8_480: 1 warm-up, 3 runs); then each shape's best thread count.

Also times softmax(Q K^T / sqrt(m)) with N = 4096, m = 3, float32, Q and K of N x m (the shapes
of attnlab-bench's FullMatrix/*/4096: head 0, the colour head, of a K = 8 grid of 64 x 64
patches with the default settings, whose q and k have m' = 3 since the positional mode is
"none"; the bench prints m as a counter). The C++ side returns the finished N x N matrix in new
memory on every call, as torch does here.

Prints which BLAS torch uses: torch.__config__'s build settings (Debian's torch says
BLAS_INFO=generic: it calls the system's libblas.so.3) and the BLAS libraries actually mapped
into the process after a matrix product (with libopenblas0-pthread installed:
openblas-pthread/libopenblasp-r0.3.x.so), with OpenBLAS's own configuration string.

On a machine busy with other work, 2 OpenMP threads on 2 cores can be several times slower than
1 (every op waits at a barrier for a thread that is not scheduled): the load average printed at
the start of each timing says how busy it was; that is why both thread counts are timed.
"""
import argparse
import ctypes
import math
import os
import statistics
import time

import torch
import torch.nn.functional as F

THREADS = (1, 2)
WARMUP = 2
RUNS = 7
SLOW_WARMUP, SLOW_RUNS = 1, 3  # S8_480

# name: (D, heads, layers, MLP, patch, image side, position-embedding grid it was trained on)
SHAPES = {
    "S16_224": (384, 6, 12, 1536, 16, 224, 14),
    "B16_224": (768, 12, 12, 3072, 16, 224, 14),
    "S8_480": (384, 6, 12, 1536, 8, 480, 28),
}


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
    def __init__(self, D, H, depth, M, patch, grid0):
        super().__init__()
        self.grid0 = grid0
        self.patch_embed = torch.nn.Conv2d(3, D, patch, stride=patch)
        self.cls_token = torch.nn.Parameter(0.02 * torch.randn(1, 1, D))
        self.pos_embed = torch.nn.Parameter(0.02 * torch.randn(1, 1 + grid0 * grid0, D))
        self.blocks = torch.nn.ModuleList(Block(D, H, M) for _ in range(depth))
        self.norm = torch.nn.LayerNorm(D, eps=1e-6)

    def pos(self, rows, cols):
        """timm's resample_abs_pos_embed (cls kept; the stored one when the grid matches)."""
        if (rows, cols) == (self.grid0, self.grid0):
            return self.pos_embed
        prefix, p = self.pos_embed[:, :1], self.pos_embed[:, 1:]
        D = p.shape[-1]
        p = p.reshape(1, self.grid0, self.grid0, D).permute(0, 3, 1, 2)
        p = F.interpolate(p, size=(rows, cols), mode="bicubic", antialias=True,
                          align_corners=False)
        return torch.cat([prefix, p.permute(0, 2, 3, 1).reshape(1, rows * cols, D)], dim=1)

    def forward(self, img):
        x = self.patch_embed(img)
        rows, cols = x.shape[2], x.shape[3]
        x = x.flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos(rows, cols)
        for b in self.blocks:
            x = b(x)
        return self.norm(x)


def time_it(fn, warmup=WARMUP, runs=RUNS):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts), statistics.median(ts)


def openblas():
    """The OpenBLAS library mapped into this process (after a matrix product), or None."""
    torch.randn(64, 64) @ torch.randn(64, 64)
    with open("/proc/self/maps") as f:
        paths = sorted({l.split()[-1] for l in f if "openblas" in l and ".so" in l})
    for p in paths:
        try:
            lib = ctypes.CDLL(p)
            lib.openblas_set_num_threads, lib.openblas_get_config  # noqa: B018 (must exist)
            lib.openblas_get_config.restype = ctypes.c_char_p
            return lib
        except (OSError, AttributeError):
            continue
    return None


def blas_info(lib):
    lines = []
    for line in torch.__config__.show().splitlines():
        for part in line.strip(" -").split(", "):
            if any(w in part for w in ("BLAS", "LAPACK", "MKL", "OpenMP")):
                lines.append("torch.__config__: " + part.strip())
    with open("/proc/self/maps") as f:
        for p in sorted({l.split()[-1] for l in f if ("blas" in l.lower() or "lapack" in l.lower())
                         and ".so" in l}):
            lines.append(f"mapped: {p}")
    alt = "/etc/alternatives/libblas.so.3-x86_64-linux-gnu"
    if os.path.exists(alt):
        lines.append(f"{alt} -> {os.path.realpath(alt)}")
    if lib is not None:
        lines.append("OpenBLAS config: " + lib.openblas_get_config().decode())
    else:
        lines.append("no OpenBLAS mapped: its threads are not set by --threads")
    return lines


def set_threads(n, lib):
    torch.set_num_threads(n)
    if lib is not None:
        lib.openblas_set_num_threads(n)


def csv(kind, allowed=None):
    def parse(text):
        items = [kind(t) for t in text.split(",") if t]
        if allowed is not None:
            bad = [t for t in items if t not in allowed]
            if bad:
                raise argparse.ArgumentTypeError(f"unknown {bad}, choose from {list(allowed)}")
        if not items:
            raise argparse.ArgumentTypeError("empty list")
        return items
    return parse


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=csv(int), default=list(THREADS),
                    help="comma-separated thread counts (torch and OpenBLAS), default 1,2")
    ap.add_argument("--shapes", type=csv(str, SHAPES), default=list(SHAPES),
                    help="comma-separated subset of " + ",".join(SHAPES))
    ap.add_argument("--only", choices=("vit", "attention"),
                    help="run only the ViT forwards or only the attention timing")
    args = ap.parse_args()
    lib = openblas()
    print(f"torch {torch.__version__}, threads {args.threads}, warm-up {WARMUP}, runs {RUNS} "
          f"(S8_480: {SLOW_WARMUP}, {SLOW_RUNS}), cpus {os.cpu_count()}, "
          f"load average at start {os.getloadavg()[0]:.2f} (other work on the machine slows "
          f"these numbers)")
    for line in blas_info(lib):
        print("  " + line)
    print()
    best_of = {}
    with torch.no_grad():
        if args.only != "attention":
            print(f"{'shape':8s} {'D':>4s} {'heads':>5s} {'layers':>6s} {'T':>5s} {'MLP':>5s} "
                  f"{'threads':>7s} {'best ms':>9s} {'median ms':>10s} {'load':>5s}")
            for name in args.shapes:
                D, H, L, M, patch, side, grid0 = SHAPES[name]
                torch.manual_seed(0)
                model = ViT(D, H, L, M, patch, grid0).eval()
                img = torch.randn(1, 3, side, side)
                T = 1 + (side // patch) ** 2
                warmup, runs = (SLOW_WARMUP, SLOW_RUNS) if name == "S8_480" else (WARMUP, RUNS)
                for n in args.threads:
                    set_threads(n, lib)
                    load = os.getloadavg()[0]
                    best, med = time_it(lambda: model(img), warmup, runs)
                    print(f"{name:8s} {D:4d} {H:5d} {L:6d} {T:5d} {M:5d} {n:7d} "
                          f"{best * 1e3:9.1f} {med * 1e3:10.1f} {load:5.2f}", flush=True)
                    if name not in best_of or best < best_of[name][1]:
                        best_of[name] = (n, best, med)
            print()
            print("best thread count per shape:")
            for name, (n, best, med) in best_of.items():
                print(f"  {name:8s} {n} threads: best {best * 1e3:.1f} ms, median {med * 1e3:.1f} ms")
        if args.only == "vit":
            return
        N, m = 4096, 3
        Q, K = torch.randn(N, m), torch.randn(N, m)
        print()
        for n in args.threads:
            set_threads(n, lib)
            best, med = time_it(lambda: torch.softmax(Q @ K.T / math.sqrt(m), dim=-1))
            print(f"softmax(Q K^T / sqrt(m)), N {N}, m {m}, {n} threads: best {best * 1e3:.1f} ms, "
                  f"median {med * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
