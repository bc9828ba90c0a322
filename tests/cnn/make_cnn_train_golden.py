#!/usr/bin/python3
"""Golden file for Attention Lab's CNN trainer (core/cnn/cnn_train.cpp, the Train tab's run "a
CNN"): PyTorch autograd's gradients and torch.optim.AdamW's steps on torchvision's own ResNet,
written once; tests/cnn/test_cnn_train.cpp compares with them.

The model is torchvision.models.resnet.ResNet's forward (ResNet._forward_impl) and its
BasicBlock, with a narrow stem (ResNet's __init__ fixes 64 channels; `NarrowResNet` sets
`width`) and `norm_layer` a per-channel learned bias in place of BatchNorm2d: the network the
C++ trainer trains, a ResNet whose batch norms are folded. The loss is F.cross_entropy with
label_smoothing, the clipping torch.nn.utils.clip_grad_norm_, the optimizer torch.optim.AdamW
with timm's weight-decay groups (none on 1-D tensors), the rate a linear warm-up then a cosine
set per step. Nothing is shared with the C++ code.

Everything runs in float64 and is rounded to float32 only when written. The initial parameters
are random with spreads large enough that no ReLU is dead and no gradient near zero (the C++
trainer's own init, zero_init_residual, would leave conv1's first gradients at zero); they are
part of the file, and the C++ test loads them.

    /usr/bin/python3 tests/cnn/make_cnn_train_golden.py      # from the repository root, ~2 s
    (needs Debian's python3-torch and python3-torchvision)

Writes tests/cnn/data/cnn_train_golden.safetensors with:
  init/NAME, grad/NAME (the batch-mean loss's gradient at init), step3/NAME (after three AdamW
  steps on the same batch) for every parameter in torchvision's names (a bias as "bnX.bias"),
  loss (1,), grad_norms (3,) (before clipping), logits (B, classes) at init, images (B, 3, S, S),
  labels (B,); "__metadata__" holds the settings as JSON under "settings".
"""
import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.models.resnet import BasicBlock, ResNet

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "vit"))
from make_golden import set_safetensors_metadata, write_safetensors  # noqa: E402

torch.set_default_dtype(torch.float64)

SETTINGS = dict(image=28, width=4, layers=[1, 1, 1, 1], classes=10, batch=5,
                lr=1e-2, min_lr=0.0, beta1=0.9, beta2=0.999, adam_eps=1e-8, weight_decay=0.05,
                warmup_steps=2, total_steps=4, clip_norm=0.5, label_smoothing=0.1)


class Bias(nn.Module):
    """norm_layer: a learned per-channel bias (what a folded batch norm leaves)."""

    def __init__(self, channels):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(channels))

    def forward(self, x):
        return x + self.bias.view(1, -1, 1, 1)


class NarrowResNet(ResNet):
    """torchvision's ResNet with stem width w and a bias for each batch norm."""

    def __init__(self, layers, width, num_classes):
        nn.Module.__init__(self)
        self._norm_layer = Bias
        self.inplanes = width
        self.dilation = 1
        self.groups = 1
        self.base_width = 64
        self.conv1 = nn.Conv2d(3, width, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = Bias(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(BasicBlock, width, layers[0])
        self.layer2 = self._make_layer(BasicBlock, 2 * width, layers[1], stride=2)
        self.layer3 = self._make_layer(BasicBlock, 4 * width, layers[2], stride=2)
        self.layer4 = self._make_layer(BasicBlock, 8 * width, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8 * width, num_classes)


def lr_at(c, step):
    if step < c["warmup_steps"]:
        return c["lr"] * (step + 1) / c["warmup_steps"]
    t = min(1.0, (step - c["warmup_steps"]) / max(1, c["total_steps"] - c["warmup_steps"]))
    return c["min_lr"] + (c["lr"] - c["min_lr"]) * 0.5 * (1 + math.cos(math.pi * t))


def main():
    c = SETTINGS
    gen = torch.Generator().manual_seed(50)
    model = NarrowResNet(c["layers"], c["width"], c["classes"])
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(".weight") and p.ndim == 4:  # half He's variance (no batch norm to tame it)
                fan_in = p.shape[1] * p.shape[2] * p.shape[3]
                p.copy_(torch.randn(p.shape, generator=gen) * math.sqrt(1.0 / fan_in))
            else:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.2)
    init = {k: v.detach().clone() for k, v in model.named_parameters()}
    images = torch.randn(c["batch"], 3, c["image"], c["image"], generator=gen)
    labels = torch.tensor([3, 7, 0, 9, 3])
    with torch.no_grad():
        logits0 = model(images)
    params = dict(model.named_parameters())
    decay = [p for p in params.values() if p.ndim >= 2]
    no_decay = [p for p in params.values() if p.ndim < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": c["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=c["lr"], betas=(c["beta1"], c["beta2"]), eps=c["adam_eps"])
    out, norms, loss0 = {}, [], None
    for step in range(3):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(images), labels, label_smoothing=c["label_smoothing"])
        loss.backward()
        if step == 0:
            loss0 = loss.item()
            for k, p in params.items():
                out[f"grad/{k}"] = p.grad.detach().clone()
        norms.append(float(torch.nn.utils.clip_grad_norm_(list(params.values()), c["clip_norm"])))
        for g in opt.param_groups:
            g["lr"] = lr_at(c, step)
        opt.step()
    for k, p in params.items():
        out[f"init/{k}"] = init[k]
        out[f"step3/{k}"] = p.detach().clone()
    out["loss"] = torch.tensor([loss0])
    out["grad_norms"] = torch.tensor(norms)
    out["logits"] = logits0
    out["images"] = images
    out["labels"] = labels.double()
    print(f"loss {loss0:.6f}, gradient norms {', '.join(f'{n:.4f}' for n in norms)} (clip {c['clip_norm']})")
    path = os.path.join(HERE, "data", "cnn_train_golden.safetensors")
    write_safetensors(path, [(k, v.float()) for k, v in out.items()], "F32")
    set_safetensors_metadata(path, {"format": "pt", "settings": json.dumps(c)})
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
