#!/usr/bin/python3
"""Golden file for Attention Lab's linear CKA (core/vit/cka.cpp), computed with numpy in float64
through the other form of the formula: HSIC of the centered n x n Gram matrices
(Kornblith et al. 2019, eq. 3-4: CKA = HSIC(K, L) / sqrt(HSIC(K, K) HSIC(L, L)),
HSIC(K, L) = tr(K H L H) / (n - 1)^2, K = X X^T, H = I - 11^T/n), where the C++ code works in
the feature space (||Y^T X||_F^2 after centering the columns).

    /usr/bin/python3 tests/vit/make_cka_golden.py     # from the repository root

Writes tests/vit/data/train/cka_golden.json: "reps" (five representations of the same 60
examples, rounded to float32: a random one, a rotation and scaling of it, a noisy linear
map of it, an independent one, and one of another width mixing the first and the fourth) and
"cka" (5 x 5).
"""
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def cka_hsic(X, Y):
    n = X.shape[0]
    H = np.eye(n) - np.ones((n, n)) / n
    K, L = X @ X.T, Y @ Y.T
    hsic = lambda A, B: np.trace(A @ H @ B @ H) / (n - 1) ** 2  # noqa: E731
    return hsic(K, L) / np.sqrt(hsic(K, K) * hsic(L, L))


def main():
    rng = np.random.default_rng(29)
    n, d = 60, 8
    a = rng.standard_normal((n, d)) + 3.0  # an offset: centering matters
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    b = 2.5 * a @ q
    c = a @ rng.standard_normal((d, d)) + 0.5 * rng.standard_normal((n, d))
    e = rng.standard_normal((n, d))
    f = np.concatenate([a, e, a[:, :3] * e[:, :3]], axis=1) @ rng.standard_normal((19, 12))
    reps = [r.astype(np.float32).astype(np.float64) for r in (a, b, c, e, f)]
    cka = [[cka_hsic(x, y) for y in reps] for x in reps]
    out = {"reps": [r.tolist() for r in reps], "cka": cka}
    path = os.path.join(HERE, "data", "train", "cka_golden.json")
    with open(path, "w") as fh:
        json.dump(out, fh)
        fh.write("\n")
    print(np.array(cka).round(4))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
