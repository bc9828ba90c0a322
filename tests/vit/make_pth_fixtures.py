#!/usr/bin/python3
"""PyTorch-checkpoint twins of the safetensors test checkpoints, and hostile files.

Writes tests/vit/data/pth/ (the C++ tests and the fuzz_pytorch seeds read these files; CI never
runs this script):

  timm_f32/timm_f32.pth        timm_f32's tensors (tests/vit/data/timm_f32, written by
                               make_golden.py) as an OrderedDict state dict with `_metadata`
                               (as nn.Module.state_dict() returns it), F32, saved by
                               torch.save; its config.json copied. Two tensors are views that
                               are not contiguous (qkv weights saved as the transpose of a
                               transposed copy) and cls_token / pos_embed share one storage at
                               different offsets, so strides, offsets and shared storages are
                               read as PyTorch reads them.
  dino_f16/checkpoint.pth      timm_reg_ls_f16's tensors in DINO's release format:
                               {"teacher": {"backbone.NAME": ..., "head.mlp.0.weight": ...},
                                "student": {"module.backbone.NAME": ...}, "epoch": 3}, F16
                               (the student a single tensor, so that only the teacher loads).
  hf_bf16/pytorch_model.bin    hf_model_bf16's tensors, BF16, Hugging Face names, with its
                               config.json and no model.safetensors.
  hostile/*.pth                files the reader must refuse with one line (see HOSTILE below).

and tests/fuzz/corpus/pytorch/*.pkl: each zip's data.pkl alone, seeds of fuzz_pytorch.

    /usr/bin/python3 tests/vit/make_pth_fixtures.py     # from the repository root; torch 1.13

The safetensors files are read by make_golden.py's own parser (numpy only), so the twins hold
exactly the values of the files they copy.
"""
import collections
import io
import json
import os
import pickle
import shutil
import struct
import sys
import zipfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
try:
    import PIL.Image  # noqa: F401  make_golden.py imports it; its safetensors parser needs no PIL
except ImportError:
    import types
    sys.modules["PIL"] = types.ModuleType("PIL")
    sys.modules["PIL"].Image = None
import make_golden  # noqa: E402  (read_safetensors)

DATA = os.path.join(HERE, "data")
OUT = os.path.join(DATA, "pth")
DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def twin(name):
    """The named tensors of data/NAME/model.safetensors in their stored dtype, header order."""
    values, dtypes = make_golden.read_safetensors(os.path.join(DATA, name, "model.safetensors"))
    return collections.OrderedDict((k, v.to(DTYPES[dtypes[k]])) for k, v in values.items())


def save(obj, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save(obj, path)  # the zip format, pickle protocol 2: torch.save's defaults


def timm_f32():
    sd = twin("timm_f32")
    out = collections.OrderedDict()
    for k, v in sd.items():
        if k.endswith("attn.qkv.weight"):
            v = v.t().contiguous().t()  # same values, strides (1, rows): not contiguous
            assert not v.is_contiguous()
        out[k] = v
    # cls_token and pos_embed as views of one storage (cls first, pos at an offset).
    cls, pos = sd["cls_token"], sd["pos_embed"]
    shared = torch.cat([cls.flatten(), pos.flatten()])
    out["cls_token"] = shared[: cls.numel()].view(cls.shape)
    out["pos_embed"] = shared[cls.numel():].view(pos.shape)
    assert out["pos_embed"].storage_offset() == cls.numel()
    out._metadata = collections.OrderedDict([("", {"version": 1}), ("blocks.0", {"version": 1})])
    folder = os.path.join(OUT, "timm_f32")
    save(out, os.path.join(folder, "timm_f32.pth"))
    shutil.copy(os.path.join(DATA, "timm_f32", "config.json"), folder)


def dino_f16():
    sd = twin("timm_reg_ls_f16")
    teacher = collections.OrderedDict(("backbone." + k, v) for k, v in sd.items())
    g = torch.Generator().manual_seed(3)
    teacher["head.mlp.0.weight"] = torch.randn(8, 64, generator=g).half()  # DINO's projection head
    teacher["head.last_layer.weight_g"] = torch.ones(16, 1).half()
    # DINO's student is DistributedDataParallel's (module.); here only a part of it, so that
    # picking it instead of the teacher fails.
    student = collections.OrderedDict([("module.backbone.cls_token", torch.zeros_like(sd["cls_token"]))])
    save({"student": student, "teacher": teacher, "epoch": 3}, os.path.join(OUT, "dino_f16", "checkpoint.pth"))


def hf_bf16():
    folder = os.path.join(OUT, "hf_bf16")
    save(twin("hf_model_bf16"), os.path.join(folder, "pytorch_model.bin"))
    shutil.copy(os.path.join(DATA, "hf_model_bf16", "config.json"), folder)


# ---- hostile files: a torch-style zip (archive/data.pkl, archive/data/KEY) around a pickle
# written opcode by opcode ----

def torch_zip(path, pkl, storages=(), compress=False, prefix="archive/"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w") as z:
        def put(name, data):
            info = zipfile.ZipInfo(prefix + name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            z.writestr(info, data)
        put("data.pkl", pkl)
        for key, data in storages:
            put("data/" + key, data)
        put("version", b"3\n")


def s(text):
    b = text.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def i(v):
    if 0 <= v < 256:
        return b"K" + bytes([v])
    if -2**31 <= v < 2**31:
        return b"J" + struct.pack("<i", v)
    b = pickle.encode_long(v)
    return b"\x8a" + bytes([len(b)]) + b


def tup(items):
    return b"(" + b"".join(items) + b"t"


def tensor_pickle(size, stride, offset, numel, storage="FloatStorage", name="w"):
    """{name: _rebuild_tensor_v2(storage '0', offset, size, stride, False, OrderedDict())}."""
    pid = tup([s("storage"), b"ctorch\n" + storage.encode() + b"\n", s("0"), s("cpu"), i(numel)])
    args = tup([pid + b"Q", i(offset), tup([i(v) for v in size]), tup([i(v) for v in stride]), b"\x89",
                b"ccollections\nOrderedDict\n)R"])
    return b"\x80\x02}" + s(name) + b"ctorch._utils\n_rebuild_tensor_v2\n" + args + b"Rs."


def frame(body):
    """Protocol 4's FRAME opcode around `body`."""
    return b"\x95" + struct.pack("<Q", len(body)) + body


def floats(n):
    return struct.pack("<%df" % n, *[float(k) for k in range(n)])


HOSTILE = {
    # name: (pickle, storages, compress) -- expected refusals are in tests/reference/test_pytorch_checkpoint.cpp
    "os_system": (b"\x80\x02cos\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03.", [], False),
    "posix_system": (b"\x80\x02cposix\nsystem\n" + s("ls") + b"\x85R.", [], False),
    "builtins_eval": (b"\x80\x04" + frame(b"\x8c\x08builtins\x94\x8c\x04eval\x94\x93\x94" + s("1") + b"\x85R."), [], False),
    "newobj": (b"\x80\x02ccollections\nOrderedDict\n)\x81.", [], False),
    "short_storage": (tensor_pickle((4, 4), (4, 1), 0, 16), [("0", floats(8))], False),
    "overflow_shape": (tensor_pickle((2**40, 2**40), (1, 1), 0, 16), [("0", floats(16))], False),
    "outside_storage": (tensor_pickle((4, 4), (4, 1), 8, 16), [("0", floats(16))], False),
    "negative_stride": (tensor_pickle((4, 4), (-4, 1), 0, 16), [("0", floats(16))], False),
    "int64": (tensor_pickle((2,), (1,), 0, 2, storage="LongStorage"), [("0", struct.pack("<2q", 1, 2))], False),
    "huge_memo": (b"\x80\x02}r\xf0\xff\xff\xff.", [], False),
    "unread_memo": (b"\x80\x02j\x05\x00\x00\x00.", [], False),
    "deep_marks": (b"\x80\x02" + b"(" * 1000 + b".", [], False),
    "deep_lists": (b"\x80\x02" + b"]" * 200 + b"a" * 199 + b".", [], False),
    "unknown_opcode": (b"\x80\x02\xff.", [], False),
    "truncated_pickle": (tensor_pickle((4,), (1,), 0, 4)[:40], [("0", floats(4))], False),
    "compressed": (tensor_pickle((4,), (1,), 0, 4), [("0", floats(4))], True),
    "not_a_dict": (b"\x80\x02]" + i(1) + b"a.", [], False),
}


def hostile():
    folder = os.path.join(OUT, "hostile")
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    for name, (pkl, storages, compress) in HOSTILE.items():
        torch_zip(os.path.join(folder, name + ".pth"), pkl, storages, compress)
    # The hand-written pickle is what torch writes: torch.load reads a good one.
    good = os.path.join(folder, "..", "good_hand_written.pth")
    torch_zip(good, tensor_pickle((4, 4), (1, 4), 0, 16), [("0", floats(16))])
    t = torch.load(good)["w"]
    assert torch.equal(t, torch.arange(16, dtype=torch.float32).view(4, 4).t()), t
    # A zip cut in half (its central directory gone).
    whole = open(os.path.join(OUT, "hf_bf16", "pytorch_model.bin"), "rb").read()
    open(os.path.join(folder, "truncated_zip.pth"), "wb").write(whole[: len(whole) // 2])
    # No zip at all; and the legacy format (before torch 1.6).
    open(os.path.join(folder, "not_zip.pth"), "wb").write(b"this is not a checkpoint\n" * 4)
    buf = io.BytesIO()
    torch.save({"w": torch.zeros(2)}, buf, _use_new_zipfile_serialization=False)
    open(os.path.join(folder, "legacy.pth"), "wb").write(buf.getvalue())


def fuzz_seeds():
    """Each fixture's data.pkl alone: fuzz_pytorch wraps an input that is no zip as data.pkl."""
    folder = os.path.join(HERE, "..", "fuzz", "corpus", "pytorch")
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    for d, _, files in sorted(os.walk(OUT)):
        for f in sorted(files):
            path = os.path.join(d, f)
            if not zipfile.is_zipfile(path):
                continue
            with zipfile.ZipFile(path) as z:
                pkl = [n for n in z.namelist() if n.endswith("/data.pkl")]
                if pkl:
                    name = os.path.relpath(path, OUT).replace(os.sep, "__")
                    open(os.path.join(folder, name + ".pkl"), "wb").write(z.read(pkl[0]))


def main():
    timm_f32()
    dino_f16()
    hf_bf16()
    hostile()
    fuzz_seeds()
    # Each twin loads in torch with the safetensors file's values.
    for path, name, pick in [("timm_f32/timm_f32.pth", "timm_f32", None),
                             ("dino_f16/checkpoint.pth", "timm_reg_ls_f16", "teacher"),
                             ("hf_bf16/pytorch_model.bin", "hf_model_bf16", None)]:
        loaded = torch.load(os.path.join(OUT, path))
        if pick:
            loaded = {k[len("backbone."):]: v for k, v in loaded[pick].items() if k.startswith("backbone.")}
        ref = twin(name)
        assert set(loaded) == set(ref), path
        for k in ref:
            assert torch.equal(loaded[k], ref[k]), (path, k)
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(OUT) for f in fs)
    print("wrote", OUT, total, "bytes")


if __name__ == "__main__":
    main()
