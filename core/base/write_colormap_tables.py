#!/usr/bin/python3
"""Wrote core/base/colormap_tables.inc, the colormap tables of core/base/colormap.cpp, from Debian's
python3-colorcet (2.0.2). Run once by hand when a map is added; the build never runs it.

The tables are Peter Kovesi's perceptually uniform CET maps as packaged by colorcet
(CC-BY 4.0, https://colorcet.com; P. Kovesi, "Good Colour Maps: How to Design Them",
arXiv:1509.03700). The .inc file is committed as data with that source and licence.
Usage: /usr/bin/python3 core/base/write_colormap_tables.py core/base/colormap_tables.inc
"""
import sys

try:
    import colorcet
except ImportError:
    sys.exit("write_colormap_tables.py: python3-colorcet is missing (apt-get install python3-colorcet)")

# (name shown in the app, colorcet attribute). Order = the Colormap enum in core/base/colormap.hpp.
MAPS = [
    ("heat", "linear_kry_0_97_c73"),  # CET-L4, the default: its top is a saturated yellow, not white
    ("fire", "linear_kryw_0_100_c71"),  # CET-L3
    ("bmy", "linear_bmy_10_95_c78"),  # CET-L8
    ("kbgyw", "linear_kbgyw_5_98_c62"),  # CET-L16
    ("blue", "linear_kbc_5_95_c73"),  # CET-L6
    ("gray", "linear_grey_0_100_c0"),  # CET-L1
    ("cb-blue-yellow", "linear_protanopic_deuteranopic_kbjyw_5_95_c25"),  # CET-CBL1
    ("cb-red-cyan", "linear_tritanopic_krjcw_5_98_c46"),  # CET-CBTL1
]

lines = ["// Colormap tables: Peter Kovesi's perceptually uniform CET colour maps, 256 RGB entries",
         "// each in [0,1], as packaged by colorcet 2.0.2 (Debian's python3-colorcet).",
         "// Source: https://colorcet.com; P. Kovesi, 'Good Colour Maps: How to Design Them', arXiv:1509.03700.",
         "// Licence: Creative Commons Attribution 4.0 International (CC-BY 4.0).",
         "// Written by core/base/write_colormap_tables.py; included by core/base/colormap.cpp. Order: enum Colormap."]
for name, attr in MAPS:
    table = getattr(colorcet, attr)
    if len(table) != 256:
        sys.exit(f"write_colormap_tables.py: {attr} has {len(table)} entries, expected 256")
    lines.append(f"    {{  // {name} ({attr})")
    for k in range(0, 256, 4):  # four RGB entries per line
        lines.append("        " + ", ".join(f"{float(c):.6f}f" for rgb in table[k:k + 4] for c in rgb) + ",")
    lines.append("    },")
lines += [""]
with open(sys.argv[1], "w") as out:
    out.write("\n".join(lines))
