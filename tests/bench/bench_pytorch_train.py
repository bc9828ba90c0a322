#!/usr/bin/python3
"""PyTorch CPU's training step on the models of attnlab-bench's TrainStep/<model>/<batch>/<threads>
(tests/bench/bench_train.cpp), to compare Attention Lab's trainer (core/vit/vit_train.cpp) with.

    /usr/bin/python3 tests/bench/bench_pytorch_train.py [--threads 1,2] [--models D64_L4_H4_P4,...]
                                                        [--batch 128]

The same step as the C++ one: timm 1.0.x's VisionTransformer written out (patch Conv2d on
3x28x28, cls token, learned pos over [cls, patches], pre-norm blocks, qkv Linear,
softmax(q k^T / sqrt(D/H)), exact GELU, `norm`, head), F.cross_entropy with label smoothing
0.1, backward, clip_grad_norm_(1.0), torch.optim.AdamW (timm's weight-decay groups), on a
fixed random batch. For each model and thread count (torch.set_num_threads and OpenBLAS's
openblas_set_num_threads both set to N): 3 warm-up steps, then best and median wall time of 10
and the median process CPU time (every thread's; attnlab-bench's process_cpu_ms counter is the
same measure); then each model's best thread count. Prints the load average before each timing: on a machine busy with
other work, wall times mean little (compare with attnlab-bench run in the same sitting).
"""
import argparse
import ctypes
import os
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# name: (D, depth, heads, patch, MLP)
MODELS = {
    "D96_L4_H4_P7": (96, 4, 4, 7, 192),  # attnlab train's default
    "D64_L6_H4_P4": (64, 6, 4, 4, 256),  # the bundled model's shape
    "D64_L4_H4_P4": (64, 4, 4, 4, 128),
}
WARMUP, RUNS = 3, 10


class Block(nn.Module):
    def __init__(self, D, H, hidden):
        super().__init__()
        self.H = H
        self.norm1 = nn.LayerNorm(D, eps=1e-6)
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)
        self.norm2 = nn.LayerNorm(D, eps=1e-6)
        self.fc1 = nn.Linear(D, hidden)
        self.fc2 = nn.Linear(hidden, D)

    def forward(self, x):
        B, T, D = x.shape
        m = D // self.H
        q, k, v = self.qkv(self.norm1(x)).reshape(B, T, 3, self.H, m).permute(2, 0, 3, 1, 4).unbind(0)
        a = ((q * m ** -0.5) @ k.transpose(-2, -1)).softmax(-1)
        x = x + self.proj((a @ v).transpose(1, 2).reshape(B, T, D))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class Vit(nn.Module):
    def __init__(self, D, depth, H, P, hidden, classes=10):
        super().__init__()
        T = (28 // P) ** 2 + 1
        self.patch = nn.Conv2d(3, D, P, P)
        self.cls_token = nn.Parameter(torch.randn(1, 1, D) * 1e-6)
        self.pos_embed = nn.Parameter(torch.randn(1, T, D) * 0.02)
        self.blocks = nn.ModuleList([Block(D, H, hidden) for _ in range(depth)])
        self.norm = nn.LayerNorm(D, eps=1e-6)
        self.head = nn.Linear(D, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], 1) + self.pos_embed
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x)[:, 0])


def set_blas_threads(n):
    for lib in ("libopenblas.so.0", "libblas.so.3"):
        try:
            ctypes.CDLL(lib).openblas_set_num_threads(n)
            return
        except (OSError, AttributeError):
            pass


def time_model(name, threads, batch):
    D, depth, H, P, hidden = MODELS[name]
    torch.manual_seed(0)
    model = Vit(D, depth, H, P, hidden)
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and n not in ("cls_token", "pos_embed")]
    rest = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and n not in ("cls_token", "pos_embed"))]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05}, {"params": rest, "weight_decay": 0.0}], lr=1e-3)
    x = torch.randn(batch, 3, 28, 28)
    y = torch.arange(batch) % 10

    def step():
        loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    for _ in range(WARMUP):
        step()
    times, cpu = [], []
    for _ in range(RUNS):
        t, c = time.perf_counter(), time.process_time()
        step()
        times.append((time.perf_counter() - t) * 1e3)
        cpu.append((time.process_time() - c) * 1e3)
    return min(times), statistics.median(times), statistics.median(cpu)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--batch", type=int, default=128)
    args = ap.parse_args()
    print(f"torch {torch.__version__}, batch {args.batch}")
    best = {}
    for name in args.models.split(","):
        for n in (int(t) for t in args.threads.split(",")):
            torch.set_num_threads(n)
            set_blas_threads(n)
            load = os.getloadavg()[0]
            lo, med, cpu = time_model(name, n, args.batch)
            print(f"TrainStep/{name}/{args.batch}  threads {n}: best {lo:.1f} ms, median {med:.1f} ms, "
                  f"process CPU {cpu:.1f} ms a step (median) ({args.batch / lo * 1e3:.0f} images/s at best; "
                  f"load average {load:.2f})", flush=True)
            if name not in best or lo < best[name][0]:
                best[name] = (lo, n)
    for name, (lo, n) in best.items():
        print(f"best: TrainStep/{name}/{args.batch}: {lo:.1f} ms with {n} thread(s)")


if __name__ == "__main__":
    main()
