#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_idx into tests/fuzz/corpus/idx/.

Each seed is what fuzz_idx reads: one byte (bit 0: the training split, else the test split;
bit 1: the harness gzips the images file; bit 2: it gzips the labels file), the images file
(IDX: 0 0 0x08 3, then N, 28, 28 as big-endian 32-bit numbers, then N·784 bytes), the line
"\\n--next-file--\\n", the labels file (0 0 0x08 1, N, then N labels). Some are gzip-compressed
already (as Debian ships them), some truncated or otherwise broken. No package needed.
Run it from anywhere: python3 tests/fuzz/corpus/make_idx_seeds.py
"""
import gzip
import os
import struct

from seed_files import write_seeds

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "idx")
SEP = b"\n--next-file--\n"
TRAIN, GZ_IMAGES, GZ_LABELS = 1, 2, 4


def images(n, rows=28, cols=28):
    return bytes([0, 0, 8, 3]) + struct.pack(">III", n, rows, cols) + bytes((i * 7 + 3) % 256 for i in range(n * rows * cols))


def labels(n, first=0):
    return bytes([0, 0, 8, 1]) + struct.pack(">I", n) + bytes((first + i) % 10 for i in range(n))


def seed(flags, img, lab=None):
    return bytes([flags]) + img + (SEP + lab if lab is not None else b"")


def gz(b):
    return gzip.compress(b, mtime=0)


SEEDS = {
    "train_2.idx": seed(TRAIN, images(2), labels(2)),
    "train_3_harness_gzip.idx": seed(TRAIN | GZ_IMAGES | GZ_LABELS, images(3), labels(3, 7)),
    "train_1_gzipped.idx": seed(TRAIN, gz(images(1)), gz(labels(1, 9))),
    "test_1000_gzipped.idx": seed(0, gz(images(1000)), gz(labels(1000))),
    "test_too_few.idx": seed(0, images(3), labels(3)),
    "train_truncated_values.idx": seed(TRAIN, images(2)[:-100], labels(2)),
    "train_truncated_header.idx": seed(TRAIN, images(2)[:10], labels(2)),
    "train_truncated_gzip.idx": seed(TRAIN, gz(images(2))[:-9], labels(2)),
    "train_label_10.idx": seed(TRAIN, images(2), labels(2, 9)[:-1] + b"\x0a"),
    "train_count_mismatch.idx": seed(TRAIN, images(2), labels(3)),
    "train_not_28.idx": seed(TRAIN, images(2, 5, 4), labels(2)),
    "train_wrong_type.idx": seed(TRAIN, bytes([0, 0, 9, 3]) + images(1)[4:], labels(1)),
    "train_huge_count.idx": seed(TRAIN, bytes([0, 0, 8, 3]) + struct.pack(">III", 0xFFFFFFFF, 28, 28), labels(1)),
    "train_no_labels.idx": seed(TRAIN, images(1)),
}


def main():
    write_seeds(OUT, SEEDS)


if __name__ == "__main__":
    main()
