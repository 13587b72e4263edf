"""Reads the fit19 probe's files: sections [name 16 bytes][u64 length][bytes]."""
import struct, numpy as np
def read(path):
    out = {}
    with open(path, 'rb') as f:
        while True:
            h = f.read(24)
            if len(h) < 24: break
            name = h[:16].rstrip(b'\0').decode(); n = struct.unpack('<Q', h[16:])[0]
            out[name] = f.read(n)
    return out
def undelta(b):
    d = np.frombuffer(b, dtype=np.int16).reshape(-1, 256)
    return np.cumsum(d.astype(np.int64), axis=1).astype(np.int64)  # [pair = a*256 + j][w]
