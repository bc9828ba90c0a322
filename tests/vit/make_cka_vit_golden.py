#!/usr/bin/python3
"""Golden files for Attention Lab's representational similarity of a loaded ViT
(core/vit/vit_similarity.cpp: the tokens at every depth from the CPU path, and the layer x layer
linear CKA over example images).

    /usr/bin/python3 tests/vit/make_cka_vit_golden.py     # from the repository root; ~4 min on 2 cores

Writes

  tests/vit/data/layer_tokens/<model>.json   for three of make_golden.py's checkpoints
      (timm_reg_ls_f16: timm names, registers, no_embed_class, layer scale, no qkv bias, F16;
      hf_cls_f32: Hugging Face names; dinov2_reg_f32: DINOv2 with a register) on
      safari_48x48.png (a 6 x 6 grid: the position embedding resampled), computed by
      make_golden.py's own PyTorch forward (embed, then the blocks): "tokens" holds depth + 1
      entries, the tokens entering block 0 and those leaving each block (before the final
      norm), each T x D float32 values row-major (token order [cls, registers, patches]);
      "args" the CLI arguments the C++ side loads the checkpoint with.

  tests/vit/data/fashion/cka_golden.json   the bundled Fashion-MNIST model
      (assets/fashion_vit, loaded into its own train.py's PyTorch model) on test images taken
      from tests/vit/data/fashion/test500.png (tile k = test image k): the tokens entering
      block 0 and leaving each of the 6 blocks, every token of every image one example
      (rows = images x 50), and
        "cka_40":  the 7 x 7 linear CKA over the first 40 images (2000 examples) in float64
                   through the HSIC form, tr(K H L H) / sqrt(tr(K H K H) tr(L H L H)) with
                   K = X X^T (Kornblith et al. 2019, eq. 3-4: an n x n Gram matrix, not the
                   C++ code's feature-space form);
        "cka_500": the same over all 500 images (25 000 examples) through the feature-space
                   form ||Y^T X||_F^2 / (||X^T X||_F ||Y^T Y||_F) of the centred tokens in
                   float64 (an n x n Gram matrix would not fit); the tokens are PyTorch's.
"""
import json
import os
import sys

import numpy as np
import torch
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
ASSET = os.path.join(REPO, "assets", "fashion_vit")
sys.path.insert(0, HERE)
sys.path.insert(0, ASSET)
import make_golden as mg  # noqa: E402
import train  # noqa: E402

TOKEN_MODELS = ["timm_reg_ls_f16", "hf_cls_f32", "dinov2_reg_f32"]
TOKEN_IMAGE = "safari_48x48.png"


def layer_tokens_golden():
    out_dir = os.path.join(mg.DATA, "layer_tokens")
    os.makedirs(out_dir, exist_ok=True)
    for spec in mg.MODELS:
        if spec["name"] not in TOKEN_MODELS:
            continue
        W, _ = mg.read_safetensors(os.path.join(mg.DATA, spec["name"], "model.safetensors"))
        P = mg.from_named(spec, W)
        img = mg.load_image(TOKEN_IMAGE, spec["mean"], spec["std"])
        with torch.no_grad():
            x0 = mg.embed(spec, P, img)[0]
            out = mg.forward(spec, P, img)
        reps = [x0] + [h for h in out["hidden"]]
        T, D = x0.shape
        g = {"model": spec["name"], "image": TOKEN_IMAGE, "args": spec["args"], "T": T, "D": D,
             "tokens": [mg.f32_list(r.numpy()) for r in reps]}
        mg.write_json(os.path.join(out_dir, spec["name"] + ".json"), g)
        norms = [float(r.norm(dim=1).max()) for r in reps]
        print(f"{spec['name']:16s} T {T} D {D}: largest token norm per depth {np.round(norms, 2).tolist()}")


def fashion_model():
    with open(os.path.join(ASSET, "config.json")) as f:
        ma = json.load(f)["model_args"]
    model = train.VisionTransformer(ma["patch_size"], ma["embed_dim"], ma["depth"], ma["num_heads"], ma["mlp_ratio"])
    tensors, _ = mg.read_safetensors(os.path.join(ASSET, "model.safetensors"))
    state = model.state_dict()
    assert set(tensors) == set(state), set(tensors) ^ set(state)
    model.load_state_dict({k: tensors[k].reshape(state[k].shape) for k in state})
    return model.eval()


@torch.no_grad()
def fashion_tokens(model, u8):
    """uint8 [B, 28, 28] -> depth + 1 arrays [B * T, D] (float64 from PyTorch's float32)."""
    x = model.patch_embed(train.to_input(u8))
    x = torch.cat([model.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + model.pos_embed
    reps = [x]
    for b in model.blocks:
        x = b(x)
        reps.append(x)
    return [r.reshape(-1, r.shape[-1]).double().numpy() for r in reps]


def cka_hsic(X, Y):
    n = X.shape[0]
    H = np.eye(n) - np.ones((n, n)) / n
    K, L = H @ (X @ X.T) @ H, H @ (Y @ Y.T) @ H
    return float((K * L).sum() / np.sqrt((K * K).sum() * (L * L).sum()))


def cka_features(X, Y):
    X = X - X.mean(0)
    Y = Y - Y.mean(0)
    return float(np.linalg.norm(Y.T @ X) ** 2 / (np.linalg.norm(X.T @ X) * np.linalg.norm(Y.T @ Y)))


def fashion_cka_golden():
    mosaic_path = os.path.join(HERE, "data", "fashion", "test500.png")
    mosaic = np.array(Image.open(mosaic_path))
    tile, across = train.IMG, 25
    images = np.stack([mosaic[(k // across) * tile:(k // across + 1) * tile, (k % across) * tile:(k % across + 1) * tile]
                       for k in range(500)])
    model = fashion_model()
    reps = fashion_tokens(model, images)
    small = [r[:40 * 50] for r in reps]
    labels = ["input"] + [f"L{l}" for l in range(len(reps) - 1)]
    cka_40 = [[cka_hsic(x, y) for y in small] for x in small]
    cka_500 = [[cka_features(x, y) for y in reps] for x in reps]
    # The two forms agree on the same 40 images (a check of this script).
    assert abs(cka_features(small[0], small[3]) - cka_40[0][3]) < 1e-9
    g = {"made_by": "tests/vit/make_cka_vit_golden.py", "torch": torch.__version__, "model": "assets/fashion_vit",
         "mosaic": "tests/vit/data/fashion/test500.png", "tokens_per_image": 50, "labels": labels,
         "cka_40": cka_40, "cka_500": cka_500}
    path = os.path.join(HERE, "data", "fashion", "cka_golden.json")
    with open(path, "w") as f:
        json.dump(g, f, indent=1)
        f.write("\n")
    print("CKA over 500 test images (rows, columns: " + " ".join(labels) + ")")
    print(np.array(cka_500).round(3))


def main():
    torch.set_num_threads(min(2, torch.get_num_threads()))
    layer_tokens_golden()
    fashion_cka_golden()


if __name__ == "__main__":
    main()
