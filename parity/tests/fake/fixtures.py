#!/usr/bin/env python3
"""Fake `fixtures` binary for the demo test: `make-set -o DIR [--only NAME]...` writes
two small clip pairs (NAME.yuv and NAME-dis.yuv) and prints their paths."""
import os, sys
args = sys.argv[1:]
if not args or args[0] != "make-set" or "-o" not in args:
    sys.stderr.write("fake fixtures: usage: make-set -o DIR\n"); sys.exit(2)
d = args[args.index("-o") + 1]
os.makedirs(d, exist_ok=True)
for name in ("banded-16x16-8", "textured-16x8-10"):
    w, h, depth = (16, 16, 8) if name.startswith("banded") else (16, 8, 10)
    size = (w * h + 2 * (w // 2) * (h // 2)) * (1 if depth == 8 else 2) * 5
    for suffix in ("", "-dis"):
        p = os.path.join(d, name + suffix + ".yuv")
        with open(p, "wb") as f:
            f.write(bytes(size))
        print(p)
