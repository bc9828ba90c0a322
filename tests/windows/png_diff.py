#!/usr/bin/env python3
"""The largest per-channel difference (0..255) between two 8-bit RGB/RGBA PNGs of one size,
decoded with the standard library only (zlib and the PNG filters, as the PNG spec defines
them). Prints it; exits 1 when the sizes differ or a file is not such a PNG.
  png_diff.py A.png B.png"""
import struct
import sys
import zlib


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or color not in (2, 6) or interlace:
                raise SystemExit(f"{path}: only 8-bit RGB/RGBA non-interlaced PNGs are compared")
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, channels, rows


wa, ha, ca, ra = read_png(sys.argv[1])
wb, hb, cb, rb = read_png(sys.argv[2])
if (wa, ha) != (wb, hb):
    print(f"sizes differ: {wa}x{ha} and {wb}x{hb}")
    sys.exit(1)
worst = 0
for la, lb in zip(ra, rb):
    for x in range(wa):
        for k in range(3):
            worst = max(worst, abs(la[x * ca + k] - lb[x * cb + k]))
print(worst)
