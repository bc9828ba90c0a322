#!/usr/bin/python3
"""Writes the colormap tables of core/colormap.cpp from Debian's python3-colorcet.

The tables are Peter Kovesi's perceptually uniform CET maps as packaged by colorcet
(CC-BY 4.0); nothing of them is stored in this repository, they are read at build time.
Usage: gen_colormaps.py OUT.cpp
"""
import sys

try:
    import colorcet
except ImportError:
    sys.exit("gen_colormaps.py: python3-colorcet is missing (run ./setup.sh or apt-get install python3-colorcet)")

# (name shown in the app, colorcet attribute). Order = the Colormap enum in core/colormap.hpp.
MAPS = [
    ("fire", "linear_kryw_0_100_c71"),  # CET-L3, the default
    ("bmy", "linear_bmy_10_95_c78"),  # CET-L8
    ("kbgyw", "linear_kbgyw_5_98_c62"),  # CET-L16
    ("blue", "linear_kbc_5_95_c73"),  # CET-L6
    ("gray", "linear_grey_0_100_c0"),  # CET-L1
    ("cb-blue-yellow", "linear_protanopic_deuteranopic_kbjyw_5_95_c25"),  # CET-CBL1
    ("cb-red-cyan", "linear_tritanopic_krjcw_5_98_c46"),  # CET-CBTL1
]

lines = ["// Generated at build time by core/gen_colormaps.py from python3-colorcet; do not edit.",
         '#include "core/colormap.hpp"', "", "namespace attnlab::detail {",
         "extern const float kColormapTables[][256 * 3];", "const float kColormapTables[][256 * 3] = {"]
for name, attr in MAPS:
    table = getattr(colorcet, attr)
    if len(table) != 256:
        sys.exit(f"gen_colormaps.py: {attr} has {len(table)} entries, expected 256")
    values = ", ".join(f"{float(c):.6f}f" for rgb in table for c in rgb)
    lines.append(f"    {{{values}}},  // {name}")
lines += ["};", "}  // namespace attnlab::detail", ""]
with open(sys.argv[1], "w") as out:
    out.write("\n".join(lines))
