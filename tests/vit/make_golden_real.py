#!/usr/bin/python3
"""Real-size golden files for Attention Lab's ViT tests (issue 27): T >= 197, head width 64.

Writes two random-weight ViT checkpoints of real token counts and head width, one 224x224 crop
of the safari photo, and one golden JSON per checkpoint, under tests/vit/data/real/. The forward
is make_golden.py's (imported as a module, not copied): the same independent PyTorch
implementation of timm / DINOv2's ViT, the same hand-written safetensors writer and independent
reader, the same float64 readouts. CI never runs this script; the C++ tests
(tests/reference/test_vit_real_size.cpp, tests/gpu/test_vit_gpu_real_size.cpp) read its files.

    /usr/bin/python3 tests/vit/make_golden_real.py   # from the repository root; ~15 s on 2 cores

At these sizes the golden file cannot hold whole attention matrices (T^2 floats per head and
layer: 789^2 x 4 heads x 2 layers would be ~60 MB of text), so it holds a selection:

  * `rows`: for every layer and head, the rows of a few queries (cls, a register, patch tokens
    at a corner, the centre and elsewhere, the last token) over all T keys;
  * `rollout`: the rollout rows (mean, max, min head fusions) of the cls query and one patch
    query at the last layer (computed from the whole float64 attention, as make_golden.py does);
  * `distance`: the mean attention distance, layers x heads (in input pixels);
  * `token_norms`: the Euclidean norm of a few tokens of every block's output (before the final
    LayerNorm), float64 from the float32 tokens;
  * `logits` and `probabilities` where the model has a classifier.

Numbers are written with 7 significant digits (the C++ tests compare to 2e-4 + 1e-3 |value| at
the tightest, far above the rounding's 5e-7 relative error). Weights are stored as F16 and BF16
(exactly what the forward uses: it reads them back from the written file), so the checkpoints
are ~1 MB each.

A self-check recomputes the timm model at its native size with torch.nn.Conv2d / LayerNorm /
MultiheadAttention / Linear / GELU modules (make_golden.forward_modules) and asserts agreement.
"""
import json
import os
import sys

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_golden as mg  # noqa: E402  (the forward, the safetensors I/O, the readouts)

REAL = os.path.join(mg.DATA, "real")
GOLDEN = os.path.join(REAL, "golden")

# (png name, crop box in safari.jpg (left, top, right, bottom), size (w, h))
IMAGE = ("safari_224x224.png", (60, 40, 460, 440), (224, 224))

LABELS10 = ["cat", "dog", "giraffe", "zebra", "grass", "tree", "sky", "lion", "elephant", "rock"]

# Models: D 128, 2 heads (head width 64), depth 2, MLP 4D, GELU exact. `patch` and `grid0` (the
# position embedding's trained grid) are read by make_golden's make_canonical / embed / info.
MODELS = [
    # (a) timm names, patch 16, position embedding of 14 x 14 (+ cls), 10 classes, F16:
    #     a 224 x 224 input is the native grid, T = 1 + 196 = 197.
    dict(name="timm_p16_f16", naming="timm", D=128, depth=2, heads=2, patch=16, grid0=14,
         dtype="F16", registers=0, layer_scale=False, qkv_bias=True, pos_prefix=1, classes=10,
         eps=1e-6, mean=mg.IMAGENET_MEAN, std=mg.IMAGENET_STD, args=[], labels=LABELS10,
         files={"config.json": {
             "architecture": "vit_test_real", "num_classes": 10, "num_features": 128,
             "global_pool": "token", "model_args": {"num_heads": 2},
             "pretrained_cfg": {"mean": mg.IMAGENET_MEAN, "std": mg.IMAGENET_STD},
             "label_names": LABELS10}}),
    # (b) DINOv2 names, patch 8, position embedding of 28 x 28 (+ cls), 4 registers after cls
    #     without position, layer scale, no classifier, BF16: T = 1 + 4 + 784 = 789. No
    #     config.json: the loader's default H = D/64 = 2 is what the model has.
    dict(name="dinov2_p8_reg4_bf16", naming="dinov2", D=128, depth=2, heads=2, patch=8,
         grid0=28, dtype="BF16", registers=4, layer_scale=True, qkv_bias=True, pos_prefix=1,
         classes=0, eps=1e-6, mean=mg.IMAGENET_MEAN, std=mg.IMAGENET_STD, args=[],
         labels=None, files={}),
]


def g7(a):
    """Values rounded to 7 significant digits."""
    return [float("%.7g" % v) for v in np.asarray(a, dtype=np.float64).ravel()]


def query_tokens(prefix, cols, rows):
    """cls, the first register (if any), patch tokens at the top-left corner, row 1 col 1, the
    centre, two-thirds down and across, and the last token (the bottom-right patch)."""
    T = prefix + cols * rows
    q = [0] + ([1] if prefix > 1 else []) + [
        prefix, prefix + cols + 1, prefix + (rows // 2) * cols + cols // 2,
        prefix + (2 * rows // 3) * cols + 2 * cols // 3, T - 1]
    return sorted(set(q))


README = """# Real-size ViT test checkpoints and golden files (issue 27)

Made by `tests/vit/make_golden_real.py` (run `/usr/bin/python3 tests/vit/make_golden_real.py`
from the repository root; ~15 s on 2 cores; deterministic on one machine). Do not edit by hand.
The forward, the safetensors writer and reader and the readouts are `tests/vit/make_golden.py`'s
(imported), so `../README.md` applies (random weights, float32 forward on the stored weights
read back as float32, float64 readouts). Read by `tests/reference/test_vit_real_size.cpp` (CPU
path) and `tests/gpu/test_vit_gpu_real_size.cpp` (GPU engine).

## Models (D 128, 2 heads: head width 64, depth 2, MLP 512, GELU exact)

| folder | naming | patch | position grid | registers | layer scale | classes | dtype | parameters | T on the 224x224 image | extra files |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
{rows}
`safari_224x224.png`: crop (60, 40, 460, 440) of `assets/safari.jpg`, Lanczos to 224x224 (the
native grid of both models: no position resampling).

## Golden files: `golden/<model>__safari_224x224.json`

At T = 789 whole attention matrices would be tens of MB, so only a selection is kept, every
number rounded to 7 significant digits:

* `model`, `image`, `args`, `info`, `grid`, `T`: as in `../README.md`.
* `queries`: the query tokens kept (cls, the first register, patches at the corner, the centre
  and elsewhere, the last token); `rows`: [layer][head][query index] -> T attention weights of
  that query over every key.
* `rollout_queries`: [cls, the centre patch]; `rollout`: {"mean", "max", "min"} -> [query
  index] -> T values: the row of the rollout at the last layer (A = (A_fused + I)/2, rows
  normalized, R = A_(L-1) ... A_0), computed in float64 from the whole float32 attention.
* `distance`: [layer][head], mean attention distance in input pixels (patch centres
  ((col + 0.5) P, (row + 0.5) P), prefix keys left out, not renormalized).
* `norm_tokens` (the same tokens as `queries`); `token_norms`: [layer][token index] -> the
  Euclidean norm of that token in the block's output, before the final LayerNorm.
* With a classifier only: `logits`, `probabilities`, `labels`.
"""


def write_readme(rows):
    lines = []
    for spec, info, T in rows:
        lines.append(f"| `{spec['name']}` | {spec['naming']} | {spec['patch']} | "
                     f"{spec['grid0']}x{spec['grid0']} (+ cls) | {spec['registers']} | "
                     f"{'yes' if spec['layer_scale'] else 'no'} | {spec['classes']} | "
                     f"{spec['dtype']} | {info['parameters']} | {T} | "
                     f"{', '.join(spec['files']) or 'none (H = D/64 by default)'} |")
    with open(os.path.join(REAL, "README.md"), "w") as f:
        f.write(README.replace("{rows}", "\n".join(lines) + "\n"))


def main():
    torch.set_num_threads(min(2, torch.get_num_threads()))
    os.makedirs(GOLDEN, exist_ok=True)
    name, box, size = IMAGE
    photo = Image.open(mg.PHOTO).convert("RGB")
    photo.crop(box).resize(size, Image.Resampling.LANCZOS).save(os.path.join(REAL, name),
                                                                  optimize=True)
    readme_rows = []
    for mi, spec in enumerate(MODELS):
        folder = os.path.join(REAL, spec["name"])
        os.makedirs(folder, exist_ok=True)
        named = mg.to_named(spec, mg.make_canonical(spec, seed=2000 + mi))
        path = os.path.join(folder, "model.safetensors")
        mg.write_safetensors(path, named, spec["dtype"])
        for fname, content in spec["files"].items():
            with open(os.path.join(folder, fname), "w") as f:
                json.dump(content, f, indent=2)
                f.write("\n")
        W, dtypes = mg.read_safetensors(path)
        assert list(W) == [k for k, _ in named]
        for k, t in named:
            assert dtypes[k] == spec["dtype"]
            assert torch.equal(W[k], t.to(mg.TORCH_DTYPES[spec["dtype"]]).float()), k
        P = mg.from_named(spec, W)
        info = mg.model_info(spec, W)
        prefix, patch = info["prefix"], spec["patch"]

        img = mg.load_image(name, spec["mean"], spec["std"], patch=patch, folder=REAL)
        rows, cols = img.shape[2] // patch, img.shape[3] // patch
        assert (rows, cols) == (spec["grid0"], spec["grid0"])  # the native grid: no resampling
        with torch.no_grad():
            out = mg.forward(spec, P, img)
        A32 = out["attention"].numpy()
        L, H, T, _ = A32.shape
        assert (L, H, T) == (spec["depth"], spec["heads"], prefix + rows * cols)
        assert spec["D"] // H == 64 and T >= 197
        A = A32.astype(np.float64)
        assert np.abs(A.sum(-1) - 1).max() < 1e-5
        dist = mg.mean_distance(A, prefix, cols, rows, patch)
        readme_rows.append((spec, info, T))

        if spec["naming"] == "timm":
            mg.self_check(spec, P, img, out, 1e-4)

        queries = query_tokens(prefix, cols, rows)
        roll_q = [0, prefix + (rows // 2) * cols + cols // 2]  # cls, the centre patch
        hidden = out["hidden"].numpy().astype(np.float64)  # [L, T, D]
        g = {
            "model": spec["name"], "image": name, "args": spec["args"], "info": info,
            "grid": [cols, rows], "T": T, "queries": queries,
            "rows": [[[g7(A32[l, h, q]) for q in queries] for h in range(H)] for l in range(L)],
            "rollout_queries": roll_q,
            "rollout": {f: [g7(mg.rollout(A, f)[L - 1][q]) for q in roll_q]
                        for f in ("mean", "max", "min")},
            "distance": [g7(dist[l]) for l in range(L)],
            "norm_tokens": queries,
            "token_norms": [g7(np.linalg.norm(hidden[l, queries], axis=-1)) for l in range(L)],
        }
        if out["logits"] is not None:
            lg = out["logits"]
            g["logits"] = g7(lg.numpy())
            g["probabilities"] = g7(torch.softmax(lg, -1).numpy())
            g["labels"] = spec["labels"]
        jpath = os.path.join(GOLDEN, f"{spec['name']}__{os.path.splitext(name)[0]}.json")
        mg.write_json(jpath, g)
        peak = A.max(-1).mean()
        print(f"{spec['name']:20s} {name} grid {cols}x{rows} T {T} queries {queries} "
              f"mean row max {peak:.3f} distance {dist.min():6.2f}..{dist.max():6.2f} "
              f"json {os.path.getsize(jpath) / 1024:.0f} KiB, checkpoint "
              f"{os.path.getsize(path) / 1024:.0f} KiB, {info['parameters']} parameters"
              + (f" p {np.round(g['probabilities'], 3).tolist()}" if "logits" in g else ""))
    write_readme(readme_rows)


if __name__ == "__main__":
    sys.exit(main())
