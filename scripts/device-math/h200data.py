"""Reads the H200 dumps made by dump.cu + pack.py (windows and samples) here."""
import io, lzma, os
import numpy as np

DATA = os.environ.get("SFU_DATA", "/tmp/dm/data")


def window(name):
    raw = lzma.decompress(open(os.path.join(DATA, f"{name}.npz.xz"), "rb").read())
    z = np.load(io.BytesIO(raw))
    d = z["d8"].astype(np.int64)
    idx, val = z["idx"].astype(np.int64), z["val"].astype(np.int64)
    d[idx] = 0
    c = np.cumsum(d)
    # out[i] = val[k] + (c[i] - c[idx[k]]) for the last escape k <= i
    seg = np.searchsorted(idx, np.arange(d.size), side="right") - 1
    base = np.where(seg >= 0, val[seg] - c[idx[np.maximum(seg, 0)]], 0)
    return (base + c).astype(np.uint32)


def samples(samples_in=None):
    """(op, x, y, lo, out_hi, out_lo) arrays."""
    si = np.fromfile(samples_in or os.path.join(DATA, "samples_in.bin"), dtype=np.uint32).reshape(-1, 4)
    so = np.fromfile(os.path.join(DATA, "samples_out.bin"), dtype=np.uint32).reshape(-1, 2)
    return si[:, 0], si[:, 1], si[:, 2], si[:, 3], so[:, 0], so[:, 1]
