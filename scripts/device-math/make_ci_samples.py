"""Writes kernels-host/tests/data/sfu-h200-samples.bin, the H200 results that CI compares
the SFU models with (tests/sfu.rs): 512 records per form of six little-endian uint32
(form, x, y, x's low word, result, result's low word), taken from the dumps of dump.cu:
each form's first 280 sample inputs (zeros, infinities, NaNs, subnormals, extremes, the
powers of two and their neighbours of every exponent) and 232 others drawn at random
(fixed seed); the f16/bf16 forms from their exhaustive windows.

    python3 make_ci_samples.py DUMP_DIR OUT.bin"""
import sys
import numpy as np
import h200data

PER_FORM, FIRST = 512, 280
h200data.DATA = sys.argv[1]
rng = np.random.default_rng(7)
op, x, y, lo, o, ol = h200data.samples()
rec = np.stack([op, x, y, lo, o, ol], 1)
out = []
for k in np.unique(op):
    r = rec[op == k]
    pick = np.concatenate([np.arange(FIRST), FIRST + rng.choice(len(r) - FIRST, PER_FORM - FIRST, replace=False)])
    out.append(r[np.sort(pick)])
for k, name in ((19, "ex2h"), (20, "ex2bf"), (21, "tanhh"), (22, "tanhbf")):
    w = h200data.window(name)
    special = np.array([0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFFFF, 0x7F80, 0xFF80, 0x7FC0, 0x0001, 0x03FF, 0x8001,
                        0x0400, 0x3C00, 0xBC00, 0x4C00, 0xCC00, 0x7BFF, 0xFBFF, 0x007F, 0x0080, 0x3F80, 0xBF80])
    rest = rng.choice(np.setdiff1d(np.arange(65536), special), PER_FORM - special.size, replace=False)
    j = np.sort(np.concatenate([special, rest]))
    z = np.zeros_like(j)
    out.append(np.stack([np.full_like(j, k), j, z, z, w[j], z], 1))
allr = np.concatenate(out).astype("<u4")
allr.tofile(sys.argv[2])
print(f"{allr.shape[0]} records, {len(out)} forms")
