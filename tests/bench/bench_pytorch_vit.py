#!/usr/bin/python3
"""PyTorch CPU timings to compare Attention Lab's C++ ViT forward and attention benchmark with.

    /usr/bin/python3 tests/bench/bench_pytorch_vit.py [--threads 1,2] [--shapes S16_224,...]
                                                      [--only {vit,attention,relevance}]
    # --threads: the thread counts to try (default 1,2); --shapes: a subset of S16_224,
    # B16_224, S8_480 (default all; S8_480 takes ~25 s a forward on 2 cores, ~2 min per thread
    # count); --only attention times just softmax(Q K^T / sqrt(m)) (seconds, not minutes);
    # --only relevance times just the class-relevance pass below (S16_224 only, ~1 min)

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

Also times what attnlab-bench's Relevance/Cpu/S16_224 times (core/vit/vit_gradients and
core/vit/relevance; counters forward_ms, backward_ms, map_ms): why a ViT-S/16 classifier decided.
The model is the S16_224 ViT above (random weights, the same classes) with a classifier head of
1000 classes (token pooling: the final LayerNorm on the CLS token, then Linear(384, 1000)); one
3x224x224 image, T = 197. Each timed run is
  forward:  one forward with autograd on, keeping every block's attention matrix A_l (1 x H x
            T x T, after an explicit softmax, no fused attention) with retain_grad();
  backward: logits[top].backward() for the arg-max class top. As in C++ (no parameter
            gradients: "the weights are constants here") the weights have requires_grad False
            and the image requires grad, so the backward pass computes dy/dA_l and dy/dx, not
            the weights' gradients;
  map:      Chefer et al. 2021's relevance, R = I (T x T); for l = 0..L-1:
            R <- R + mean_h((dA_l * A_l).clamp(min=0)) @ R; map = R[0, 1:], in float32 torch ops
            under no_grad (the main number, counted in the total); "map64" times the same in
            float64 (A_l and dA_l cast), as C++'s map_ms is ("the L T x T products in double");
            it is not counted in the total.
Best and median of 7 runs after 2 warm-up runs, per part and for the total (forward + backward
+ float32 map, per run; the best total is the best run's sum, not the sum of the parts' bests),
at each thread count; then the best thread count (by best total). Before the timing, the map is
checked on a small model in float64 (D 64, 4 heads, 3 blocks, 64x64 image, 10 classes): the
retain_grad() dA_l equal torch.autograd.grad of the logit with respect to the kept A_l, and the
map equals a per-head, per-block recomputation from those; the float32 map of S16_224 equals
its float64 map to a relative 1e-4.

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

    def forward(self, x, keep=None):
        """keep: None, or a list that gets this block's A (B x H x T x T), with retain_grad()."""
        B, T, D = x.shape
        hd = D // self.H
        q, k, v = self.qkv(self.norm1(x)).reshape(B, T, 3, self.H, hd).permute(2, 0, 3, 1, 4)
        a = ((q * hd ** -0.5) @ k.transpose(-2, -1)).softmax(-1)
        if keep is not None:
            if a.requires_grad:
                a.retain_grad()
            keep.append(a)
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

    def tokens(self, img, keep=None):
        """The residual stream after the last block (before the final LayerNorm)."""
        x = self.patch_embed(img)
        rows, cols = x.shape[2], x.shape[3]
        x = x.flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos(rows, cols)
        for b in self.blocks:
            x = b(x, keep)
        return x

    def forward(self, img):
        return self.norm(self.tokens(img))


class ViTClassifier(ViT):
    """ViT with timm's token-pooled classifier: final LayerNorm on the CLS token, then Linear."""

    def __init__(self, D, H, depth, M, patch, grid0, classes):
        super().__init__(D, H, depth, M, patch, grid0)
        self.head = torch.nn.Linear(D, classes)

    def forward(self, img, keep=None):
        return self.head(self.norm(self.tokens(img, keep)[:, 0]))


CLASSES = 1000
RELEVANCE_SHAPE = "S16_224"


def chefer_map(keep, dtype=torch.float32):
    """Chefer et al. 2021 from kept A_l (1 x H x T x T, .grad set): R = I; R <- R +
    mean_h((dA_l * A_l)^+) @ R; returns R[0, 1:] (no_grad; computed in `dtype`)."""
    with torch.no_grad():
        T = keep[0].shape[-1]
        R = torch.eye(T, dtype=dtype)
        for a in keep:
            A, dA = a[0].to(dtype), a.grad[0].to(dtype)
            R = R + (dA * A).clamp(min=0).mean(0) @ R
        return R[0, 1:]


def relevance_pass(model, img, dtype=torch.float32):
    """One timed run: (forward s, backward s, map s, the map in `dtype`, kept A_l, top class)."""
    img.grad = None
    t0 = time.perf_counter()
    keep = []
    logits = model(img, keep)[0]
    top = int(logits.argmax())
    t1 = time.perf_counter()
    logits[top].backward()
    t2 = time.perf_counter()
    r = chefer_map(keep, dtype)
    t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2, r, keep, top


def relevance_model(D, H, L, M, patch, grid0, classes, dtype=torch.float32):
    model = ViTClassifier(D, H, L, M, patch, grid0, classes).to(dtype).eval()
    for p in model.parameters():
        p.requires_grad_(False)  # the weights are constants, as in C++'s vit_gradients
    return model


def check_relevance():
    """The map on a small float64 model against torch.autograd.grad and a per-head recomputation."""
    torch.manual_seed(1)
    D, H, L, M, patch, side, classes = 64, 4, 3, 128, 16, 64, 10
    model = relevance_model(D, H, L, M, patch, side // patch, classes, torch.float64)
    img = torch.randn(1, 3, side, side, dtype=torch.float64, requires_grad=True)
    with torch.enable_grad():
        _, _, _, r, keep, top = relevance_pass(model, img, torch.float64)
        keep2 = []
        logits = model(img, keep2)[0]
        assert int(logits.argmax()) == top
        grads = torch.autograd.grad(logits[top], keep2)
    T = 1 + (side // patch) ** 2
    assert r.shape == (T - 1,) and len(keep) == L
    R = torch.eye(T, dtype=torch.float64)
    for a, a2, g in zip(keep, keep2, grads):
        assert torch.allclose(a.detach(), a2.detach(), rtol=0, atol=1e-14)
        assert torch.allclose(a.grad, g, rtol=1e-10, atol=1e-14), (a.grad - g).abs().max()
        assert float(g.abs().max()) > 0
        G = torch.zeros(T, T, dtype=torch.float64)
        for h in range(H):
            G += torch.maximum(g[0, h].detach() * a2[0, h].detach(), torch.zeros(T, T, dtype=torch.float64))
        R = R + (G / H) @ R
    assert torch.allclose(r, R[0, 1:], rtol=1e-10, atol=1e-14), (r - R[0, 1:]).abs().max()
    r32 = chefer_map(keep)
    assert torch.allclose(r32.double(), r, rtol=1e-5, atol=1e-7)
    return T, float(r.min()), float(r.max())


def time_relevance(threads, lib):
    T0, lo, hi = check_relevance()
    print(f"relevance map checked on a small float64 model (T {T0}): retain_grad dA = "
          f"autograd.grad, map = per-head recomputation (map in [{lo:.3g}, {hi:.3g}])")
    name = RELEVANCE_SHAPE
    D, H, L, M, patch, side, grid0 = SHAPES[name]
    torch.manual_seed(0)
    model = relevance_model(D, H, L, M, patch, grid0, CLASSES)
    img = torch.randn(1, 3, side, side, requires_grad=True)
    T = 1 + (side // patch) ** 2
    print(f"Relevance {name} (attnlab-bench Relevance/Cpu/{name}): D {D}, heads {H}, layers {L}, "
          f"T {T}, MLP {M}, {CLASSES} classes; forward with autograd keeping A (retain_grad), "
          f"logits[top].backward() (weights constant), chefer map float32 (map64: float64, not in "
          f"total); warm-up {WARMUP}, runs {RUNS}; ms best / median")
    print(f"{'threads':>7s} {'forward':>13s} {'backward':>13s} {'map':>11s} {'map64':>11s} "
          f"{'total':>13s} {'load':>5s} {'top':>4s}")
    best_of = None
    with torch.enable_grad():
        for n in threads:
            set_threads(n, lib)
            load = os.getloadavg()[0]
            runs = []
            for i in range(WARMUP + RUNS):
                fwd, bwd, mp, r, keep, top = relevance_pass(model, img)
                t0 = time.perf_counter()
                r64 = chefer_map(keep, torch.float64)
                mp64 = time.perf_counter() - t0
                if i == 0:
                    err = float((r.double() - r64).abs().max() / r64.abs().max())
                    assert err < 1e-4, err
                if i >= WARMUP:
                    runs.append((fwd, bwd, mp, mp64, fwd + bwd + mp))
                del keep, r, r64
            cols = list(zip(*runs))
            stats = [(min(c) * 1e3, statistics.median(c) * 1e3) for c in cols]
            f, b, m, m64, tot = (f"{lo:.1f}/{med:.1f}" for lo, med in stats)
            print(f"{n:7d} {f:>13s} {b:>13s} {m:>11s} {m64:>11s} {tot:>13s} {load:5.2f} {top:4d}",
                  flush=True)
            if best_of is None or stats[4][0] < best_of[1][4][0]:
                best_of = (n, stats)
    n, stats = best_of
    parts = ", ".join(f"{k} {lo:.1f}/{med:.1f}" for k, (lo, med) in
                      zip(("forward", "backward", "map", "map64"), stats))
    print(f"best thread count: {n} threads: total best {stats[4][0]:.1f} ms, median "
          f"{stats[4][1]:.1f} ms ({parts}; ms best/median)")


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
    ap.add_argument("--only", choices=("vit", "attention", "relevance"),
                    help="run only the ViT forwards, the attention timing or the relevance pass")
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
        if args.only in (None, "vit"):
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
        if args.only in (None, "attention"):
            N, m = 4096, 3
            Q, K = torch.randn(N, m), torch.randn(N, m)
            print()
            for n in args.threads:
                set_threads(n, lib)
                best, med = time_it(lambda: torch.softmax(Q @ K.T / math.sqrt(m), dim=-1))
                print(f"softmax(Q K^T / sqrt(m)), N {N}, m {m}, {n} threads: best "
                      f"{best * 1e3:.1f} ms, median {med * 1e3:.1f} ms")
    if args.only in (None, "relevance"):
        if args.only is None:
            print()
        time_relevance(args.threads, lib)


if __name__ == "__main__":
    main()
