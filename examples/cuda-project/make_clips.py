#!/usr/bin/env python3
"""Writes the example project's test clips (deterministic 8-bit 4:2:0 pairs: a moving
gradient and the same with LCG noise) and clips.csv, the clip list `parity frames
--clips` reads.   usage: make_clips.py DIR"""
import os, sys

CLIPS = [("gradient-64x48", 64, 48, 4, 3), ("gradient-160x90", 160, 90, 3, 9)]


def frames(w, h, n, noise, seed):
    x = seed
    for f in range(n):
        ref, dis = bytearray(), bytearray()
        for j in range(h):
            for i in range(w):
                v = (i * 255 // max(w - 1, 1) + j + 3 * f) % 256
                x = (x * 1103515245 + 12345) & 0x7FFFFFFF
                d = min(255, max(0, v + (x >> 16) % (2 * noise + 1) - noise))
                ref.append(v)
                dis.append(d)
        chroma = bytes([128]) * (2 * ((w + 1) // 2) * ((h + 1) // 2))
        yield bytes(ref) + chroma, bytes(dis) + chroma


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "clips.csv"), "w") as csv:
    csv.write("name,reference,distorted,width,height,bitdepth\n")
    for k, (name, w, h, n, noise) in enumerate(CLIPS):
        with open(os.path.join(out, name + ".yuv"), "wb") as r, open(os.path.join(out, name + "-dis.yuv"), "wb") as d:
            for a, b in frames(w, h, n, noise, k + 1):
                r.write(a)
                d.write(b)
        csv.write(f"{name},{name}.yuv,{name}-dis.yuv,{w},{h},8\n")
