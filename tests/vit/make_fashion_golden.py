#!/usr/bin/python3
"""Write the bundled Fashion-MNIST ViT's sample images and the golden predictions the C++ tests
check the trained model against.

Reads assets/fashion_vit/model.safetensors (written by assets/fashion_vit/train.py) with
make_golden.py's independent safetensors parser, loads it into train.py's PyTorch model and
writes:

  assets/fashion_vit/images/NN_<class>.png    20 test-set images, two of each class (the first
                                              two of that class in the t10k split), 8-bit grey
  tests/vit/data/fashion/test500.png          the first 500 test-set images as one grey mosaic,
                                              25 tiles across, 20 down (tile k at column k % 25,
                                              row k // 25)
  tests/vit/data/fashion/golden.json          for every image above: its t10k index, label,
                                              PyTorch's predicted class and the ten softmax
                                              probabilities; the test accuracy on the 500

The C++ side reads the PNGs, not the arrays: a PNG of uint8 grey is exactly what train.py
feeds (uint8 / 255, grey copied to RGB, (x - mean) / std), so both sides see the same input.

Run from the repository root after training (deterministic; a few seconds):

    /usr/bin/python3 tests/vit/make_fashion_golden.py
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
from make_golden import read_safetensors  # noqa: E402
import train  # noqa: E402

ACROSS, DOWN = 25, 20
MOSAIC_COUNT = ACROSS * DOWN


def slug(label):
    return label.lower().replace("/", "-").replace(" ", "-")


def main():
    with open(os.path.join(ASSET, "config.json")) as f:
        cfg = json.load(f)
    ma = cfg["model_args"]
    model = train.VisionTransformer(ma["patch_size"], ma["embed_dim"], ma["depth"], ma["num_heads"],
                                    ma["mlp_ratio"])
    tensors, _ = read_safetensors(os.path.join(ASSET, "model.safetensors"))
    state = model.state_dict()
    assert set(tensors) == set(state), set(tensors) ^ set(state)
    model.load_state_dict({k: tensors[k].reshape(state[k].shape) for k in state})
    model.eval()

    xte, yte = train.load_split("t10k")

    @torch.no_grad()
    def predict(u8):
        p = torch.softmax(model(train.to_input(u8)), dim=1).numpy().astype(np.float64)
        return p.argmax(1), p

    # 20 shipped images: the first two of each class.
    img_dir = os.path.join(ASSET, "images")
    os.makedirs(img_dir, exist_ok=True)
    for old in os.listdir(img_dir):
        if old.endswith(".png"):
            os.remove(os.path.join(img_dir, old))
    shipped = []
    for c in range(10):
        shipped += [int(i) for i in np.nonzero(yte == c)[0][:2]]
    shipped.sort()
    pred, prob = predict(xte[shipped])
    entries = []
    for n, (i, p, pr) in enumerate(zip(shipped, pred, prob)):
        name = f"{n:02d}_{slug(train.LABELS[yte[i]])}.png"
        Image.fromarray(xte[i], mode="L").save(os.path.join(img_dir, name))
        entries.append({"file": f"assets/fashion_vit/images/{name}", "index": i, "label": int(yte[i]),
                        "predicted": int(p), "probabilities": [float(v) for v in pr]})

    # The first 500 test images as one mosaic.
    out_dir = os.path.join(HERE, "data", "fashion")
    os.makedirs(out_dir, exist_ok=True)
    mosaic = np.zeros((DOWN * train.IMG, ACROSS * train.IMG), np.uint8)
    for k in range(MOSAIC_COUNT):
        r, c = divmod(k, ACROSS)
        mosaic[r * train.IMG:(r + 1) * train.IMG, c * train.IMG:(c + 1) * train.IMG] = xte[k]
    Image.fromarray(mosaic, mode="L").save(os.path.join(out_dir, "test500.png"))
    back = np.array(Image.open(os.path.join(out_dir, "test500.png")))
    assert np.array_equal(back, mosaic)
    pred5, prob5 = predict(xte[:MOSAIC_COUNT])
    tiles = [{"index": k, "label": int(yte[k]), "predicted": int(pred5[k]),
              "probabilities": [float(v) for v in prob5[k]]} for k in range(MOSAIC_COUNT)]
    correct = int((pred5 == yte[:MOSAIC_COUNT]).sum())

    golden = {
        "made_by": "tests/vit/make_fashion_golden.py",
        "torch": torch.__version__,
        "labels": train.LABELS,
        "tile": train.IMG,
        "mosaic": {"file": "tests/vit/data/fashion/test500.png", "across": ACROSS, "down": DOWN,
                   "correct": correct, "tiles": tiles},
        "shipped": entries,
    }
    with open(os.path.join(out_dir, "golden.json"), "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")
    print(f"shipped: {sum(e['predicted'] == e['label'] for e in entries)} of {len(entries)} correct; "
          f"mosaic: {correct} of {MOSAIC_COUNT} correct")


if __name__ == "__main__":
    main()
