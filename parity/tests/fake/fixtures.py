#!/usr/bin/env python3
"""Fake `fixtures` binary for the demo test: `make-set -o DIR [--only NAME]...` writes
two small clip pairs (NAME.yuv and NAME-dis.yuv) and prints their paths; `clip --width W
--height H --bitdepth B --frames N [--kind K] [--distort D] -o PATH` writes one clip."""
import os, sys
args = sys.argv[1:]

def opt(name, default=None):
    return args[args.index(name) + 1] if name in args else default

def frame_bytes(w, h, depth):
    return (w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)) * (1 if depth == 8 else 2)

if args and args[0] == "clip" and "-o" in args:
    w, h, depth, n = int(opt("--width")), int(opt("--height")), int(opt("--bitdepth", "8")), int(opt("--frames", "1"))
    with open(opt("-o"), "wb") as f:
        f.write(bytes([1 if opt("--distort") else 0]) * (frame_bytes(w, h, depth) * n))
    sys.exit(0)
if not args or args[0] != "make-set" or "-o" not in args:
    sys.stderr.write("fake fixtures: usage: make-set -o DIR | clip ... -o PATH\n"); sys.exit(2)
d = opt("-o")
os.makedirs(d, exist_ok=True)
for name in ("banded-16x16-8", "textured-16x8-10"):
    w, h, depth = (16, 16, 8) if name.startswith("banded") else (16, 8, 10)
    size = frame_bytes(w, h, depth) * 5
    for suffix in ("", "-dis"):
        p = os.path.join(d, name + suffix + ".yuv")
        with open(p, "wb") as f:
            f.write(bytes(size))
        print(p)
