#!/usr/bin/python3
"""PyTorch CPU timings to set beside attnlab-bench's CnnForward/Cpu/{R18,R50}_224 and
CnnGradCam/Cpu/{R18,R50}_224 (tests/bench/bench_cnn.cpp), in one sitting.

    /usr/bin/python3 tests/bench/bench_pytorch_resnet.py [--threads 1,2]

torchvision's resnet18() and resnet50() (Debian's python3-torchvision) with random weights,
model.eval(), one 1x3x224x224 image:
  forward:   torch.no_grad(), the logits;
  grad-cam:  autograd on; the forward keeping the last block's output (a hook), the top class's
             logit backward to it, alpha = mean over positions of the gradient, ReLU(sum alpha A)
             (the C++ side's resnet_gradients + resnet_grad_cam, whose backward also reaches the
             input: here too, the input requires grad).
For each thread count (torch.set_num_threads and OpenBLAS's openblas_set_num_threads, both N):
2 warm-up runs, then the best and the median of 9; then each case's best thread count. Prints
which BLAS torch uses, as bench_pytorch_vit.py does (its helpers imported, not copied).
"""
import argparse
import os
import statistics
import sys
import time

import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_pytorch_vit as common  # noqa: E402  (openblas(), blas_info(), set_threads())


def timed(fn, warm=2, runs=9):
    for _ in range(warm):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000.0)
    return min(times), statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=common.csv(int), default=[1, 2])
    args = ap.parse_args()
    torch.manual_seed(0)
    lib = common.openblas()
    for line in common.blas_info(lib):
        print(line)
    x = torch.rand(1, 3, 224, 224)
    best = {}
    for name, make in (("R18_224", torchvision.models.resnet18), ("R50_224", torchvision.models.resnet50)):
        model = make().eval()
        feats = {}
        model.layer4.register_forward_hook(lambda m, i, o: feats.__setitem__("A", o))

        def forward():
            with torch.no_grad():
                model(x)

        def grad_cam():
            xi = x.clone().requires_grad_(True)
            logits = model(xi)
            A = feats["A"]
            A.retain_grad()
            logits[0, int(logits.argmax())].backward()
            alpha = A.grad.mean(dim=(2, 3), keepdim=True)
            torch.relu((alpha * A).sum(1))

        for case, fn in (("CnnForward", forward), ("CnnGradCam", grad_cam)):
            for n in args.threads:
                common.set_threads(n, lib)
                lo, med = timed(fn)
                print(f"{case}/PyTorch/{name} threads={n}: best {lo:.1f} ms, median {med:.1f} ms")
                key = f"{case}/PyTorch/{name}"
                if key not in best or med < best[key][1]:
                    best[key] = (n, med)
    for key, (n, med) in best.items():
        print(f"{key}: best thread count {n}, median {med:.1f} ms")


if __name__ == "__main__":
    main()
