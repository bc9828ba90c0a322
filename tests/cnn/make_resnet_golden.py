#!/usr/bin/python3
"""Golden files for Attention Lab's ResNet (CNN) support: two narrow random-weight ResNets built
from torchvision's own BasicBlock / Bottleneck, their block outputs, Grad-CAM, input gradients
and receptive fields on two photos, and the linear CKA between their blocks (and a ViT's).

    /usr/bin/python3 tests/cnn/make_resnet_golden.py   # from the repository root; ~5 s on 1 core

Needs torch (1.13 used), torchvision (0.14 used), numpy and PIL. The models ARE torchvision's
code: `NarrowResNet` subclasses torchvision.models.resnet.ResNet with its own __init__ (ResNet's
only fixes the stem width at 64) that builds the stem and the four stages with ResNet's own
`_make_layer`, so the blocks are torchvision's `BasicBlock` / `Bottleneck` (v1.5: a Bottleneck
has its stride on conv2, the 3x3; the downsample is conv1x1(stride) + BatchNorm) and the
forward is ResNet's `_forward_impl`; the state-dict names are torchvision's (= timm's ResNet):

    conv1.weight, bn1.{weight,bias,running_mean,running_var,num_batches_tracked},
    layer{s}.{i}.conv{1,2[,3]}.weight, layer{s}.{i}.bn{1,2[,3]}.*,
    layer{s}.0.downsample.0.weight, layer{s}.0.downsample.1.*, fc.weight, fc.bias

Writes, under tests/cnn/data/ (README.md there describes every file and formula):

  * resnet18_narrow/model.pth + config.json: BasicBlock, [2, 2, 2, 2], width 8 (stage outputs
    8, 16, 32, 64 channels), 5 classes; torch.save(model.state_dict()) of the float32 model,
    the int64 0-dim num_batches_tracked tensors included (a reader must skip them).
  * resnet50_narrow/model.safetensors + config.json: Bottleneck, [3, 4, 6, 3], width 8 (stage
    outputs 32, 64, 128, 256 channels), 5 classes; safetensors written by hand (this script's
    writer: make_golden.py's writes one dtype per file), F32 tensors and num_batches_tracked as
    "I64", shape [], 8 bytes, in state-dict order. Its config.json has mean = std = [0.5]*3,
    the other's ImageNet's, so a loader that ignores config.json fails.
  * golden/<model>__<image stem>.json for safari_48x48.png and safari_61x45.png
    (tests/vit/data, odd sizes in the second: 61 x 45 exercises the padding arithmetic).
  * cka_images/crop_{0..7}.png: 48 x 48 crops (no resizing) of assets/safari.jpg.
  * golden/cka_resnet18_narrow__resnet50_narrow.json and golden/cka_timm_f32__resnet18_narrow.json
    (tests/vit/data/timm_f32, make_golden.py's ViT: patch 8, so 48 x 48 is a 6 x 6 grid).

Weights: torch.manual_seed per model. Convolutions start from torchvision's kaiming_normal_
(fan_out, relu) and are then rescaled one by one, in forward order, so that each one's output
has standard deviation 1 (0.5 for the last convolution of a residual branch) on a fixed random
batch (an LSUV-style calibration: activations neither vanish nor explode through 16 blocks).
Every BatchNorm is random: weight ~ U(0.5, 1.5), bias ~ N(0, 0.1^2), running_mean ~ N(0, 0.1^2),
running_var ~ U(0.5, 1.5), num_batches_tracked a distinct int, eps 1e-5. fc: torch's default
init scaled by FC_GAIN. The model is put in eval() mode (BatchNorm uses the running statistics).

Golden values are computed in float64 by the model converted with .double() from the float32
weights (exactly what a float32 reader holds), on the input RGB / 255 normalised per channel
with the model's config.json mean/std, in float64, no resizing or cropping. Gradients by float64
autograd. Formulas: see README_TEXT below (= tests/cnn/data/README.md).

Self-checks (asserted and printed): the torchvision forward against a functional forward written
here from the state dict (F.conv2d, BatchNorm as (x - mean) / sqrt(var + eps) * w + b); the
float32 model against the float64 one; dy_c/dx and dy_c/dA against central differences at a few
entries; the Gram (HSIC) and feature forms of linear CKA against each other; the self-CKA
symmetric with ones on its diagonal; the .pth read back by torch.load and the .safetensors by
this script's parser (numpy only), tensor for tensor equal to the model's state dict.
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torchvision.models.resnet import BasicBlock, Bottleneck, ResNet

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "vit"))
import make_golden as mg  # noqa: E402  (JSON writer, the ViT forward and its safetensors reader)

DATA = os.path.join(HERE, "data")
GOLDEN = os.path.join(DATA, "golden")
CKA_DIR = os.path.join(DATA, "cka_images")
PHOTO = os.path.join(REPO, "assets", "safari.jpg")

IMAGENET_MEAN = [0.485, 0.456, 0.406]
IMAGENET_STD = [0.229, 0.224, 0.225]
HALF = [0.5, 0.5, 0.5]

MODELS = [
    dict(name="resnet18_narrow", arch="resnet18", block=BasicBlock, layers=[2, 2, 2, 2], width=8,
         classes=5, seed=3003, file="model.pth", mean=IMAGENET_MEAN, std=IMAGENET_STD,
         labels=["cat", "dog", "giraffe", "zebra", "grass"]),
    dict(name="resnet50_narrow", arch="resnet50", block=Bottleneck, layers=[3, 4, 6, 3], width=8,
         classes=5, seed=3001, file="model.safetensors", mean=HALF, std=HALF,
         labels=["lion", "elephant", "giraffe", "zebra", "acacia"]),
]
INPUT_SIZE = [3, 48, 48]
CROP_PCT = 0.95
FC_GAIN = 4.0
IMAGES = ["tests/vit/data/safari_48x48.png", "tests/vit/data/safari_61x45.png"]

# (left, top) of the 48 x 48 crops of the 500 x 500 safari.jpg used for CKA
CKA_OFFSETS = [(20, 30), (160, 60), (300, 20), (430, 110), (60, 240), (200, 300), (340, 230),
               (440, 440)]
CKA_BATCHES = [[0, 1, 2, 3], [4, 5, 6, 7]]
VIT_MODEL = "timm_f32"


def rel(path):
    return os.path.relpath(path, REPO).replace(os.sep, "/")


# --------------------------------------------------------------------------------------------
# The models: torchvision's ResNet with a narrow stem
# --------------------------------------------------------------------------------------------
class NarrowResNet(ResNet):
    """torchvision.models.resnet.ResNet with stem width w (ResNet's own __init__ fixes 64)."""

    def __init__(self, block, layers, width, num_classes):
        nn.Module.__init__(self)
        self._norm_layer = nn.BatchNorm2d
        self.inplanes = width
        self.dilation = 1
        self.groups = 1
        self.base_width = 64
        self.conv1 = nn.Conv2d(3, width, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, width, layers[0])
        self.layer2 = self._make_layer(block, 2 * width, layers[1], stride=2)
        self.layer3 = self._make_layer(block, 4 * width, layers[2], stride=2)
        self.layer4 = self._make_layer(block, 8 * width, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8 * width * block.expansion, num_classes)
        # forward: ResNet.forward -> ResNet._forward_impl (torchvision's own)


def blocks_of(model):
    """[(name, module)] of every residual block in forward order (stem not counted)."""
    return [(f"layer{s}.{i}", blk) for s in range(1, 5)
            for i, blk in enumerate(getattr(model, f"layer{s}"))]


def build(spec):
    torch.manual_seed(spec["seed"])
    model = NarrowResNet(spec["block"], spec["layers"], spec["width"], spec["classes"])
    last = "conv3" if spec["block"] is Bottleneck else "conv2"
    bn_index = 0
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                c = m.num_features
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.1)
                m.running_mean.normal_(0.0, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.num_batches_tracked.fill_(1000 + 37 * bn_index)
                assert m.eps == 1e-5 and c > 0
                bn_index += 1
        model.fc.weight.mul_(FC_GAIN)
        model.fc.bias.mul_(FC_GAIN)
    model.eval()
    # LSUV-style calibration on a fixed random batch: each convolution, in forward order, scaled
    # so its output has standard deviation 1 (0.5 for the last one of a residual branch).
    calib = torch.randn(4, 3, 48, 48, generator=torch.Generator().manual_seed(spec["seed"] + 1))
    convs = [(n, m) for n, m in model.named_modules() if isinstance(m, nn.Conv2d)]
    for name, conv in convs:
        seen = {}
        h = conv.register_forward_hook(lambda m, i, o: seen.__setitem__("out", o.detach()))
        with torch.no_grad():
            model(calib)
        h.remove()
        target = 0.5 if name.endswith("." + last) else 1.0
        with torch.no_grad():
            conv.weight.mul_(target / seen["out"].std().item())
    assert all(t.dtype in (torch.float32, torch.int64) for t in model.state_dict().values())
    return model  # float32: the weights as stored


# --------------------------------------------------------------------------------------------
# A functional forward written from the state dict (self-check of names and formulas)
# --------------------------------------------------------------------------------------------
def bn_f(x, sd, p):
    w, b = sd[p + ".weight"], sd[p + ".bias"]
    m, v = sd[p + ".running_mean"], sd[p + ".running_var"]
    r = lambda t: t.view(1, -1, 1, 1)  # noqa: E731
    return (x - r(m)) / torch.sqrt(r(v) + 1e-5) * r(w) + r(b)


def forward_functional(sd, spec, x):
    """-> logits [C], block outputs list. sd: name -> float64 tensor."""
    x = F.relu(bn_f(F.conv2d(x, sd["conv1.weight"], stride=2, padding=3), sd, "bn1"))
    x = F.max_pool2d(x, 3, stride=2, padding=1)
    outs = []
    bottleneck = spec["block"] is Bottleneck
    for s in range(1, 5):
        for i in range(spec["layers"][s - 1]):
            p = f"layer{s}.{i}."
            stride = 2 if (s > 1 and i == 0) else 1
            if bottleneck:  # v1.5: 1x1, 3x3 (stride), 1x1
                h = F.relu(bn_f(F.conv2d(x, sd[p + "conv1.weight"]), sd, p + "bn1"))
                h = F.relu(bn_f(F.conv2d(h, sd[p + "conv2.weight"], stride=stride, padding=1),
                                sd, p + "bn2"))
                h = bn_f(F.conv2d(h, sd[p + "conv3.weight"]), sd, p + "bn3")
            else:
                h = F.relu(bn_f(F.conv2d(x, sd[p + "conv1.weight"], stride=stride, padding=1),
                                sd, p + "bn1"))
                h = bn_f(F.conv2d(h, sd[p + "conv2.weight"], padding=1), sd, p + "bn2")
            if p + "downsample.0.weight" in sd:
                idn = bn_f(F.conv2d(x, sd[p + "downsample.0.weight"], stride=stride), sd,
                           p + "downsample.1")
            else:
                idn = x
            x = F.relu(h + idn)
            outs.append(x)
    pooled = x.mean((2, 3))
    return F.linear(pooled, sd["fc.weight"], sd["fc.bias"])[0], outs


# --------------------------------------------------------------------------------------------
# safetensors with mixed dtypes (F32 + I64), and an independent reader
# --------------------------------------------------------------------------------------------
def write_safetensors(path, state):
    header = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name, t in state.items():
        if t.dtype == torch.float32:
            dtype, b = "F32", mg.tensor_bytes(t, "F32")
        elif t.dtype == torch.int64:
            dtype, b = "I64", t.contiguous().numpy().astype("<i8").tobytes(order="C")
        else:
            raise ValueError(t.dtype)
        header[name] = {"dtype": dtype, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """numpy only: {name: torch tensor} (F32 -> float32, I64 -> int64), {name: dtype}."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    assert n % 8 == 0
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    data = raw[8 + n:]
    out, dtypes, end_prev = {}, {}, 0
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, en = e["data_offsets"]
        assert b == end_prev
        end_prev = en
        np_dtype = {"F32": "<f4", "I64": "<i8"}[e["dtype"]]
        a = np.frombuffer(data[b:en], np_dtype)
        assert a.size == int(np.prod(e["shape"], dtype=np.int64))
        out[name] = torch.from_numpy(a.reshape(e["shape"]).copy())
        dtypes[name] = e["dtype"]
    assert end_prev == len(data)
    return out, dtypes


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------
def load_input(path, mean, std):
    """RGB uint8 / 255, (x - mean) / std per channel, float64, [1, 3, H, W]; no resizing."""
    a = np.asarray(Image.open(path).convert("RGB")).astype(np.float64) / 255.0
    a = (a - np.array(mean, np.float64)) / np.array(std, np.float64)
    return torch.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))[None]


def make_cka_images():
    photo = Image.open(PHOTO).convert("RGB")
    os.makedirs(CKA_DIR, exist_ok=True)
    paths = []
    for k, (left, top) in enumerate(CKA_OFFSETS):
        assert left + 48 <= photo.width and top + 48 <= photo.height
        path = os.path.join(CKA_DIR, f"crop_{k}.png")
        photo.crop((left, top, left + 48, top + 48)).save(path, optimize=True)
        assert np.array_equal(np.asarray(Image.open(path).convert("RGB")),
                              np.asarray(photo)[top:top + 48, left:left + 48])
        paths.append(path)
    return paths


# --------------------------------------------------------------------------------------------
# Forward with the block outputs kept (graph tensors)
# --------------------------------------------------------------------------------------------
def run(model, x):
    outs = []
    hooks = [blk.register_forward_hook(lambda m, i, o: outs.append(o))
             for _, blk in blocks_of(model)]
    logits = model(x)[0]
    for h in hooks:
        h.remove()
    return logits, outs


def g10(a):
    """float64 values rounded to 10 significant digits (relative error <= 5e-10)."""
    return [float("%.10g" % v) for v in np.asarray(a, dtype=np.float64).ravel()]


def check_fd(what, f, x, grad, entries, step=1e-6):
    """central differences of the scalar f(x) at flat entries of x against grad."""
    worst, scale = 0.0, grad.abs().max().item()
    with torch.no_grad():
        for i in entries:
            xp, xm = x.clone(), x.clone()
            xp.view(-1)[i] += step
            xm.view(-1)[i] -= step
            fd = (f(xp) - f(xm)).item() / (2 * step)
            worst = max(worst, abs(fd - grad.view(-1)[i].item()) / scale)
    print(f"  self-check {what}: autograd vs central difference at {len(entries)} entries "
          f"{worst:.1e} (of max |g|)")
    assert worst < 1e-6, what


def golden_for(spec, model32, model, image):
    names = [n for n, _ in blocks_of(model)]
    nb = len(names)
    mid = names.index("layer3.0")
    x0 = load_input(os.path.join(REPO, image), spec["mean"], spec["std"])
    H, W = x0.shape[2], x0.shape[3]
    x = x0.clone().requires_grad_()
    logits, outs = run(model, x)

    # self-checks: functional forward (state dict), float32 model
    sd = {k: v for k, v in model.state_dict().items() if v.is_floating_point()}
    with torch.no_grad():
        lf, of = forward_functional(sd, spec, x0)
        l32 = model32(x0.float())[0].double()
    d_fun = max((lf - logits).abs().max().item(),
                max((a - b).abs().max().item() for a, b in zip(of, outs)))
    d32 = (l32 - logits).abs().max().item()
    print(f"  self-check functional forward vs torchvision {d_fun:.1e}, float32 model logits "
          f"vs float64 {d32:.1e}")
    assert d_fun < 1e-10 and d32 < 1e-4 * max(1.0, logits.abs().max().item())

    lg = logits.detach().numpy()
    top = int(lg.argmax())
    srt = np.sort(lg)
    assert srt[-1] - srt[-2] > 1e-2, "top class too close to the runner-up"
    cam_blocks = [mid, nb - 1]
    grads = torch.autograd.grad(logits[top], [x] + [outs[b] for b in cam_blocks],
                                retain_graph=True)
    gx, gA = grads[0], grads[1:]

    # finite-difference checks of dy_c/dx and dy_c/dA (block `mid`)
    rng = np.random.default_rng(5)
    flat = gx.abs().flatten()
    ent = flat.topk(2).indices.tolist() + rng.choice(flat.numel(), 2, replace=False).tolist()
    check_fd("dy_c/dx", lambda xx: model(xx)[0, top], x0, gx, ent)

    def y_with(delta):  # y_c with `delta` added to block mid's output
        blk = blocks_of(model)[mid][1]
        h = blk.register_forward_hook(lambda m, i, o: o + delta)
        y = model(x0)[0, top]
        h.remove()
        return y

    A_shape = outs[mid].shape
    flat = gA[0].abs().flatten()
    ent = flat.topk(2).indices.tolist() + rng.choice(flat.numel(), 2, replace=False).tolist()
    check_fd("dy_c/dA layer3.0", lambda d: y_with(d.view(A_shape)),
             torch.zeros(A_shape, dtype=torch.float64), gA[0], ent)

    blocks = []
    for name, o in zip(names, outs):
        _, C, h, w = o.shape
        blocks.append({"name": name, "channels": C, "height": h, "width": w,
                       "values": g10(o.detach()[0].numpy())})
    grad_cam = []
    for b, g in zip(cam_blocks, gA):
        A, g = outs[b].detach()[0].numpy(), g[0].numpy()  # [C, h, w]
        alpha = g.mean(axis=(1, 2))  # [C]
        cam = np.maximum((alpha[:, None, None] * A).sum(0), 0.0)
        grad_cam.append({"block": b, "class": top, "height": A.shape[1], "width": A.shape[2],
                         "values": g10(cam)})
    input_gradient = {"class": top, "height": H, "width": W,
                      "values": g10(gx[0].abs().sum(0).numpy())}
    receptive = []
    for b, where in ((1, "middle"), (mid, "corner")):
        _, C, h, w = outs[b].shape
        r, c = (h // 2, w // 2) if where == "middle" else (0, 0)
        (g,) = torch.autograd.grad(outs[b][0, :, r, c].sum(), x, retain_graph=True)
        rf = g[0].abs().sum(0).numpy()
        receptive.append({"block": b, "col": c, "row": r, "height": H, "width": W,
                          "values": g10(rf)})
        nz = np.argwhere(rf > 0)
        print(f"  receptive field block {b} ({names[b]}) at (col {c}, row {r}) of {w}x{h}: "
              f"support rows {nz[:, 0].min()}..{nz[:, 0].max()}, "
              f"cols {nz[:, 1].min()}..{nz[:, 1].max()}")
    (g,) = torch.autograd.grad(outs[1][0, :, receptive[0]["row"], receptive[0]["col"]].sum(), x)
    check_fd("d(sum_k z_1[k,r,c])/dx",
             lambda xx: run(model, xx)[1][1][0, :, receptive[0]["row"], receptive[0]["col"]].sum(),
             x0, g, (g.abs().flatten().topk(3).indices.tolist()))

    for c in grad_cam:
        assert max(c["values"]) > 0, "an all-zero Grad-CAM map tests little"

    # what float32 PyTorch gets (the C++ side's precision): max |difference| / max |golden|
    x32 = x0.float().requires_grad_()
    l32, o32 = run(model32, x32)
    g32 = torch.autograd.grad(l32[top], [x32] + [o32[b] for b in cam_blocks], retain_graph=True)
    def off(a, ref):
        a, ref = np.asarray(a, np.float64).ravel(), np.asarray(ref)
        return float(np.abs(a - ref).max() / np.abs(ref).max())

    err = {"blocks": max(off(o.detach()[0].numpy(), bb["values"]) for o, bb in zip(o32, blocks))}
    err["grad_cam"] = max(
        off(np.maximum((gg[0].double().mean((1, 2))[:, None, None]
                        * o32[b].detach()[0].double()).sum(0).numpy(), 0), c["values"])
        for b, gg, c in zip(cam_blocks, g32[1:], grad_cam))
    err["input_gradient"] = off(g32[0][0].abs().sum(0).numpy(), input_gradient["values"])
    err["receptive_field"] = max(
        off(torch.autograd.grad(o32[r["block"]][0, :, r["row"], r["col"]].sum(), x32,
                                retain_graph=True)[0][0].abs().sum(0).numpy(), r["values"])
        for r in receptive)
    print("  float32 PyTorch vs golden (of max |value|): "
          + ", ".join(f"{k} {v:.1e}" for k, v in err.items()))
    assert max(err.values()) < 1e-4

    act = [float(o.detach().std()) for o in outs]
    print(f"  logits {np.round(lg, 4).tolist()} top {top}; block output std "
          f"{act[0]:.2f} .. {act[-1]:.2f} (min {min(act):.2f}, max {max(act):.2f})")
    return {"model": spec["name"], "image": image, "width": W, "height": H,
            "logits": [float(v) for v in lg], "top_class": top, "blocks": blocks,
            "grad_cam": grad_cam, "input_gradient": input_gradient,
            "receptive_field": receptive}


# --------------------------------------------------------------------------------------------
# CKA (float64, numpy)
# --------------------------------------------------------------------------------------------
def cka_gram(X, Y):
    """Kornblith et al. 2019 eq. 3-4 through the n x n Grams: HSIC(K, L) = tr(K H L H)."""
    n = X.shape[0]
    Hc = np.eye(n) - np.ones((n, n)) / n
    K, L = Hc @ (X @ X.T) @ Hc, Hc @ (Y @ Y.T) @ Hc
    return float((K * L).sum() / np.sqrt((K * K).sum() * (L * L).sum()))


def cka_features(X, Y):
    X = X - X.mean(0)
    Y = Y - Y.mean(0)
    return float(np.linalg.norm(Y.T @ X) ** 2
                 / (np.linalg.norm(X.T @ X) * np.linalg.norm(Y.T @ Y)))


def hsic1(K, L):
    """Song et al. 2012's unbiased HSIC estimator."""
    n = K.shape[0]
    Kt, Lt = K - np.diag(np.diag(K)), L - np.diag(np.diag(L))
    one = np.ones(n)
    return ((np.trace(Kt @ Lt) + (one @ Kt @ one) * (one @ Lt @ one) / ((n - 1) * (n - 2))
             - 2.0 / (n - 2) * (one @ Kt @ Lt @ one)) / (n * (n - 3)))


def cka_minibatch(X, Y, batches=CKA_BATCHES, centre=True):
    """Nguyen, Raghu & Kornblith 2021: sums of HSIC_1 over minibatches, K = X X^T, L = Y Y^T.
    HSIC_1 of linear Grams does not change when a constant row is subtracted from X or Y, so
    the features are centred within each batch first (centre=True): the same value, without
    the uncentred form's cancellation (its terms are up to ~1e9 times the result here)."""
    kl = kk = ll = 0.0
    for idx in batches:
        x, y = X[idx], Y[idx]
        if centre:
            x, y = x - x.mean(0), y - y.mean(0)
        K, L = x @ x.T, y @ y.T
        kl += hsic1(K, L)
        kk += hsic1(K, K)
        ll += hsic1(L, L)
    assert kk > 0 and ll > 0
    return float(kl / math.sqrt(kk * ll))


def cka_tables(A, B):
    full = [[cka_gram(x, y) for y in B] for x in A]
    # the feature form on the 12 pairs of smallest width (its p x p products are slow in numpy)
    pairs = sorted(((i, j) for i in range(len(A)) for j in range(len(B))),
                   key=lambda ij: (max(A[ij[0]].shape[1], B[ij[1]].shape[1]), ij))[:12]
    worst = max(abs(cka_features(A[i], B[j]) - full[i][j]) for i, j in pairs)
    print(f"  self-check CKA Gram form vs feature form on {len(pairs)} pairs: {worst:.1e}")
    assert worst < 1e-10
    mb = [[cka_minibatch(x, y) for y in B] for x in A]
    raw = [[cka_minibatch(x, y, centre=False) for y in B] for x in A]
    worst = np.abs(np.array(mb) - np.array(raw)).max()
    print(f"  self-check minibatch CKA, features centred per batch vs uncentred: {worst:.1e}")
    assert worst < 1e-5
    return full, mb


def resnet_features(model, spec, paths):
    """-> per block, an 8 x (C*h*w) float64 array."""
    rows = []
    with torch.no_grad():
        for p in paths:
            _, outs = run(model, load_input(p, spec["mean"], spec["std"]))
            rows.append([o[0].reshape(-1).numpy() for o in outs])
    return [np.stack([r[b] for r in rows]) for b in range(len(rows[0]))]


def vit_features(paths):
    """make_golden's timm_f32 (read back with its parser) in float64: per block, the output
    tokens (all T, before the final LayerNorm) of each image flattened, 8 x (T*D)."""
    spec = next(s for s in mg.MODELS if s["name"] == VIT_MODEL)
    W, _ = mg.read_safetensors(os.path.join(mg.DATA, VIT_MODEL, "model.safetensors"))
    P = mg.from_named(spec, W)

    def to64(v):
        if isinstance(v, dict):
            return {k: to64(u) for k, u in v.items()}
        if isinstance(v, list):
            return [to64(u) for u in v]
        return v.double() if torch.is_tensor(v) else v

    P64 = to64(P)
    assert 48 % mg.PATCH == 0
    rows = []
    with torch.no_grad():
        for p in paths:
            img = load_input(p, spec["mean"], spec["std"])
            out = mg.forward(spec, P64, img)
            out32 = mg.forward(spec, P, img.float())
            assert (out["hidden"] - out32["hidden"].double()).abs().max() < 1e-4
            rows.append([h.reshape(-1).numpy() for h in out["hidden"]])
    return [np.stack([r[b] for r in rows]) for b in range(len(rows[0]))], spec


# --------------------------------------------------------------------------------------------
README_TEXT = """# CNN (ResNet) test checkpoints and golden files

Made by `tests/cnn/make_resnet_golden.py` (run `/usr/bin/python3 tests/cnn/make_resnet_golden.py`
from the repository root; torch 1.13, torchvision 0.14, numpy, PIL; a few seconds on 1 core;
deterministic). Do not edit by hand: change the script and run it again. CI never runs Python;
the C++ tests read these files.

## Models (random weights, torchvision's code)

Both are `torchvision.models.resnet.ResNet` with a narrow stem: conv1 (3 -> w, 7x7, stride 2,
padding 3, no bias), bn1, ReLU, max pool (3x3, stride 2, padding 1, padding counts as -inf),
layer1..layer4 made by torchvision's `_make_layer` (planes w, 2w, 4w, 8w; stride 1, 2, 2, 2 on
the first block of a stage), global average pool, fc. Blocks are torchvision's own:

* `BasicBlock`: out = ReLU(bn2(conv2(ReLU(bn1(conv1(x))))) + identity); conv1 3x3 with the
  block's stride, padding 1; conv2 3x3, stride 1, padding 1.
* `Bottleneck` (ResNet v1.5): conv1 1x1 -> bn1 -> ReLU -> conv2 3x3 **with the stride**, padding 1
  -> bn2 -> ReLU -> conv3 1x1 (4x the planes) -> bn3; out = ReLU(that + identity).
* identity = x, or downsample(x) = downsample.1(downsample.0(x)) with downsample.0 a 1x1 conv of
  the block's stride (padding 0, no bias) and downsample.1 a BatchNorm, on the first block of a
  stage whose stride is 2 or whose channel count changes (all four stages of the Bottleneck
  model; stages 2-4 of the BasicBlock model).
* BatchNorm in eval mode: y = (x - running_mean) / sqrt(running_var + 1e-5) * weight + bias.
* Output size of a conv / pool: floor((n + 2 * padding - kernel) / stride) + 1. On 61 x 45:
  stem 31 x 23, max pool 16 x 12, stages 16 x 12, 8 x 6, 4 x 3, 2 x 2 (width x height).
* Logits: fc(mean over h x w of layer4's output).

| folder | file | block | layers | w | stage channels | classes | mean / std (config.json) |
| --- | --- | --- | --- | --- | --- | --- | --- |
{model_rows}

Tensor names (torchvision = timm): `conv1.weight`,
`bn1.{{weight,bias,running_mean,running_var,num_batches_tracked}}`,
`layer{{s}}.{{i}}.conv{{1,2[,3]}}.weight`, `layer{{s}}.{{i}}.bn{{1,2[,3]}}.*`,
`layer{{s}}.0.downsample.0.weight`, `layer{{s}}.0.downsample.1.*`, `fc.weight` [5, F],
`fc.bias` [5] (F = `num_features`: 64 and 256). Every BatchNorm has
`num_batches_tracked`, an int64 0-dim tensor (in the .pth a LongStorage; in the safetensors
dtype "I64", shape [], 8 bytes): a reader must skip it. The .pth is
`torch.save(model.state_dict())` of the float32 model (zip format, the state dict an
OrderedDict with `_metadata`); the safetensors tensors are F32 (and the I64 ones) in state-dict
order, header padded with spaces to a multiple of 8, `__metadata__` {{"format": "pt"}} first.

Weights: torch.manual_seed per model; convolutions kaiming_normal_ (fan_out, relu) then scaled,
in forward order, to output standard deviation 1 (0.5 for a residual branch's last conv) on a
fixed random batch; BatchNorm weight ~ U(0.5, 1.5), bias ~ N(0, 0.1^2), running_mean ~
N(0, 0.1^2), running_var ~ U(0.5, 1.5), num_batches_tracked 1000 + 37 k (k the BatchNorm's index
in module order), eps 1e-5; fc torch's default init times 4.

`config.json` (timm hub style): `architecture` ("resnet18" / "resnet50": the widths are the
tensors', not the names'), `num_classes`, `num_features` (fc's input width), `pretrained_cfg`
{{`input_size` [3, 48, 48], `mean`, `std`, `crop_pct` 0.95}}, `label_names`. The two models use
different mean/std: a loader that ignores config.json fails the tests.

## Inputs

`tests/vit/data/safari_48x48.png` and `tests/vit/data/safari_61x45.png` (made by
tests/vit/make_golden.py): x = (RGB uint8 / 255 - mean) / std per channel with the model's
config.json values, shape 1 x 3 x H x W, **no resizing or cropping** (61 x 45 stays 61 x 45).

## Golden files: `golden/<model>__<image stem>.json` (4 = 2 models x 2 images)

Computed in float64: the model converted with `.double()` from the float32 weights (what a
float32 reader holds), the input normalised in float64, gradients by float64 autograd. Values
are written rounded to 10 significant digits (relative error <= 5e-10). The float32 PyTorch
model agrees with every array here to within ~1e-6 of the array's largest |value| (printed by
the script, asserted < 1e-4): compare with a tolerance relative to the array's maximum.

* `model`, `image` (path from the repository root), `width`, `height` (the input's).
* `logits`: 5 floats (before softmax); `top_class`: their argmax (the runner-up is more than
  0.01 below).
* `blocks`: one entry per residual block in forward order (block 0 = layer1.0, ..., through
  layer4; the stem is not a block): `name` ("layer1.0"), `channels` C, `height` h, `width` w,
  `values` C*h*w floats in (c, y, x) order: the block's output after its final ReLU.
* `grad_cam`: two entries, block b = the first block of layer3 (index 4 for resnet18, 7 for
  resnet50) then the last block (7, 15): Grad-CAM (Selvaraju et al. 2017) for `class` =
  top_class: A = block b's output [C, h, w], g = dy_c/dA (y_c the class's logit, before
  softmax), alpha_k = mean over the h*w positions of g_k, map = ReLU(sum_k alpha_k A_k), raw (not
  normalised, not resized); `block`, `class`, `height`, `width`, `values` (h*w, row after row).
* `input_gradient`: {{`class` top_class, `height` H, `width` W, `values` H*W}}: sum over the 3
  colour channels of |dy_c/dx|, x the normalised input.
* `receptive_field`: two entries {{`block` b, `col` c, `row` r, `height` H, `width` W, `values`
  H*W}}: sum over colour of |d(sum_k z_b[k, r, c]) / dx|, z_b block b's output [C, h, w]: first
  b = 1 (layer1.1) at (row h // 2, col w // 2) of its feature map, then b = the first block of
  layer3 at (0, 0), a corner (its support is clipped by the padding).

Max pool ties: where a whole window is zero after the stem's ReLU the gradient is zero through
either element (the ReLU's gradient at 0 is 0), so the choice of argmax among equal zeros does
not matter; ReLU'(0) = 0 as in PyTorch.

## CKA

`cka_images/crop_0.png` ... `crop_7.png`: 48 x 48 crops of `assets/safari.jpg` (RGB, no
resizing) with top-left corners (left, top) = {offsets}, PNG (lossless: the C++ side reads the
same pixels).

Features: for each model and image, each residual block's output flattened (C*h*w) on the crop
normalised with that model's own mean/std; one example per image (n = 8). For the ViT,
`tests/vit/data/timm_f32` (make_golden.py's; patch 8, so 48 x 48 is a 6 x 6 grid and its 4 x 4
position embedding is resampled, timm's bicubic antialias rule): each block's output tokens (all
T = 37 tokens x D = 48, flattened, the residual stream before the final LayerNorm), computed in
float64 by make_golden.forward on the weights read from its file.

* `cka`: linear CKA (Kornblith et al. 2019) over the 8 images: with X (n x p1), Y (n x p2) and
  their columns centred over the rows, CKA = ||Y^T X||_F^2 / (||X^T X||_F ||Y^T Y||_F); computed
  in numpy float64 as HSIC of the centred n x n Grams, sum(K' * L') / sqrt(sum(K' * K') sum(L' *
  L')), K' = H X X^T H, H = I - 11^T/n, and checked against the feature form.
* `cka_minibatch` (Nguyen, Raghu & Kornblith 2021): `batches` [[0, 1, 2, 3], [4, 5, 6, 7]];
  per batch K = X X^T, L = Y Y^T (4 x 4 linear Grams of the uncentred features), HSIC_1 (Song et
  al. 2012) with Kt, Lt the Grams with zero diagonals and n = 4:
  HSIC_1(K, L) = [tr(Kt Lt) + (1^T Kt 1)(1^T Lt 1) / ((n-1)(n-2)) - 2/(n-2) 1^T Kt Lt 1] / (n(n-3));
  CKA_mb = sum_b HSIC_1(K, L) / sqrt(sum_b HSIC_1(K, K) * sum_b HSIC_1(L, L)).
  HSIC_1 of linear Grams is unchanged when a constant row is subtracted from the features, so
  the script centres each batch's features (over its 4 rows) before forming K and L: the same
  value, without the uncentred form's cancellation (there its terms reach ~1e9 times the result;
  float32 Grams of uncentred features move CKA_mb by ~6e-5, of centred ones by ~1e-6). A C++
  implementation should centre too, or accumulate the Grams in double. Values can be negative
  (the estimator is unbiased, and n = 4 is small).

Files:

* `golden/cka_resnet18_narrow__resnet50_narrow.json`: `rows` (resnet18's 8 block names),
  `cols` (resnet50's 16), `images` (the 8 PNG paths from the repository root), `batches`, `cka`
  (rows x cols), `cka_minibatch` (rows x cols), `cka_self` (resnet18 vs itself, full CKA, 8 x 8,
  symmetric, ones on the diagonal).
* `golden/cka_timm_f32__resnet18_narrow.json`: `rows` "L0".."L2" (timm_f32's blocks), `cols`
  resnet18's block names, `images`, `batches`, `cka`, `cka_minibatch`.

CKA values are written at full float64 precision.
"""


def write_readme(rows):
    model_rows = "\n".join(rows)
    offs = ", ".join(f"({l}, {t})" for l, t in CKA_OFFSETS)
    with open(os.path.join(DATA, "README.md"), "w") as f:
        f.write(README_TEXT.format(model_rows=model_rows, offsets=offs))


# --------------------------------------------------------------------------------------------
def main():
    torch.set_num_threads(1)
    os.makedirs(GOLDEN, exist_ok=True)
    cka_paths = make_cka_images()
    readme_rows, feats = [], {}
    for spec in MODELS:
        print(spec["name"])
        folder = os.path.join(DATA, spec["name"])
        os.makedirs(folder, exist_ok=True)
        model32 = build(spec)
        state = model32.state_dict()
        path = os.path.join(folder, spec["file"])
        if spec["file"].endswith(".pth"):
            torch.save(state, path)
            back = torch.load(path)
            assert list(back) == list(state) and hasattr(back, "_metadata")
        else:
            write_safetensors(path, state)
            back, dtypes = read_safetensors(path)
            assert list(back) == list(state)
            for k, t in state.items():
                assert dtypes[k] == ("I64" if t.dtype == torch.int64 else "F32"), k
        for k, t in state.items():
            assert back[k].dtype == t.dtype and back[k].shape == t.shape, k
            assert torch.equal(back[k], t), k
        n_nbt = sum(1 for k in state if k.endswith("num_batches_tracked"))
        assert all(back[k].dim() == 0 and back[k].dtype == torch.int64
                   for k in state if k.endswith("num_batches_tracked"))
        # the float64 model from the weights as read back from the file
        model = NarrowResNet(spec["block"], spec["layers"], spec["width"], spec["classes"])
        model.load_state_dict(back)
        model = model.double().eval()
        feats_n = 8 * spec["width"] * spec["block"].expansion
        cfg = {"architecture": spec["arch"], "num_classes": spec["classes"],
               "num_features": feats_n,
               "pretrained_cfg": {"input_size": INPUT_SIZE, "mean": spec["mean"],
                                  "std": spec["std"], "crop_pct": CROP_PCT},
               "label_names": spec["labels"]}
        with open(os.path.join(folder, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
            f.write("\n")
        n_params = sum(t.numel() for k, t in state.items() if t.is_floating_point())
        print(f"  {rel(path)}: {len(state)} tensors ({n_nbt} num_batches_tracked), "
              f"{n_params} float parameters, read back equal")
        chans = ", ".join(str(spec["width"] * m * spec["block"].expansion) for m in (1, 2, 4, 8))
        readme_rows.append(
            f"| `{spec['name']}` | `{spec['file']}` | {spec['block'].__name__} | "
            f"{spec['layers']} | {spec['width']} | {chans} | {spec['classes']} | "
            f"{spec['mean']} / {spec['std']} |")
        for image in IMAGES:
            print(f" {image}")
            g = golden_for(spec, model32, model, image)
            stem = os.path.splitext(os.path.basename(image))[0]
            mg.write_json(os.path.join(GOLDEN, f"{spec['name']}__{stem}.json"), g)
        feats[spec["name"]] = (resnet_features(model, spec, cka_paths),
                               [n for n, _ in blocks_of(model)])

    # CKA
    images = [rel(p) for p in cka_paths]
    (A, an), (B, bn) = feats["resnet18_narrow"], feats["resnet50_narrow"]
    full, mb = cka_tables(A, B)
    self_full = np.array([[cka_gram(x, y) for y in A] for x in A])
    assert np.abs(self_full - self_full.T).max() < 1e-12
    assert np.abs(np.diag(self_full) - 1).max() < 1e-12
    mg.write_json(os.path.join(GOLDEN, "cka_resnet18_narrow__resnet50_narrow.json"),
                  {"rows": an, "cols": bn, "images": images, "batches": CKA_BATCHES,
                   "cka": full, "cka_minibatch": mb, "cka_self": self_full.tolist()})
    print("CKA resnet18_narrow (rows) x resnet50_narrow (cols):")
    print(np.array(full).round(3))
    print("minibatch CKA:")
    print(np.array(mb).round(3))
    V, vspec = vit_features(cka_paths)
    vfull, vmb = cka_tables(V, A)
    mg.write_json(os.path.join(GOLDEN, f"cka_{VIT_MODEL}__resnet18_narrow.json"),
                  {"rows": [f"L{l}" for l in range(vspec["depth"])], "cols": an,
                   "images": images, "batches": CKA_BATCHES, "cka": vfull,
                   "cka_minibatch": vmb})
    print(f"CKA {VIT_MODEL} (rows) x resnet18_narrow (cols):")
    print(np.array(vfull).round(3))
    write_readme(readme_rows)

    total = 0
    print("files:")
    for root, _, files in sorted(os.walk(DATA)):
        for f in sorted(files):
            size = os.path.getsize(os.path.join(root, f))
            total += size
            print(f"  {rel(os.path.join(root, f))}: {size} bytes")
    print(f"wrote {rel(DATA)}: {total / 1e6:.2f} MB")


if __name__ == "__main__":
    sys.exit(main())
