"""Regenerates tri20.cu's inputs (splitmix64 draws, vectorized) and reads its results."""
import os
import struct
import numpy as np

G = np.uint64(0x9E3779B97F4A7C15)


def draws(seed, n):
    """The first n next() values (u32) of tri20.cu's Rng{seed}."""
    with np.errstate(over='ignore'):
        z = np.uint64(seed) + (np.arange(1, n + 1, dtype=np.uint64) * G)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(32)).astype(np.uint64)


def texel_bits(e, s, m, half):
    e = np.asarray(e, dtype=np.int64)
    if half:
        e = np.clip(e, -14, 15)
        return ((s & 1) << 15) | ((e + 15) << 10) | (m & 0x3FF)
    return ((s & 1) << 31) | ((e + 127) << 23) | (m & 0x7FFFFF)


def values(bits, half):
    bits = np.asarray(bits, dtype=np.uint64)
    if half:
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def pairs(half):
    n = 1024 * 1024
    d = draws(0x7070 + half, 8 * n).reshape(n, 8).astype(np.int64)
    e0 = -8 + d[:, 0] % 17
    gap = d[:, 1] % (16 if half else 32)
    e1 = np.where(d[:, 2] & 1, e0 - gap, e0 + gap)
    v0 = texel_bits(e0, d[:, 3], d[:, 4], half)
    v1 = texel_bits(e1, d[:, 5], d[:, 6], half)
    m = 1 + d[:, 7] % 255
    return dict(v0=v0, v1=v1, m=m)


def trilinear(half):
    d = draws(0x7272 + half, 3 * (512 * 512 + 256 * 256) + 3 * (1 << 20)).astype(np.int64)
    nt = 512 * 512 + 256 * 256
    t = d[:3 * nt].reshape(nt, 3)
    e = (-10 + t[:, 0] % 20) if half else (-6 + t[:, 0] % 13)
    bits = texel_bits(e, t[:, 1], t[:, 2], half)
    q = d[3 * nt:].reshape(-1, 3)
    return dict(l0=bits[:512 * 512].reshape(512, 512), l1=bits[512 * 512:].reshape(256, 256),
                u=q[:, 0] % 65536, v=q[:, 1] % 65536, m=1 + q[:, 2] % 255)


def cube(half):
    nt = 64 ** 3
    d = draws(0x3333 + half, 3 * nt + 3 * (1 << 19)).astype(np.int64)
    t = d[:3 * nt].reshape(nt, 3)
    e = (-10 + t[:, 0] % 20) if half else (-8 + t[:, 0] % 17)
    bits = texel_bits(e, t[:, 1], t[:, 2], half)
    q = d[3 * nt:].reshape(-1, 3) % 16384
    return dict(v=bits.reshape(64, 64, 64), x=q[:, 0], y=q[:, 1], z=q[:, 2])


def read_inputs(path):
    out = {}
    with open(path, 'rb') as f:
        while True:
            h = f.read(24)
            if len(h) < 24:
                break
            name = h[:16].rstrip(b'\0').decode()
            n = struct.unpack('<Q', h[16:])[0]
            out[name] = f.read(n)
    return out


def results(dirname, name):
    """The device's results of section `name` (u32 words), from DIR/tri20_NAME.bin or .bin.xz."""
    p = os.path.join(dirname, 'tri20_%s.bin' % name)
    if os.path.exists(p):
        return np.fromfile(p, dtype=np.uint32)
    import lzma
    with lzma.open(p + '.xz') as f:
        return np.frombuffer(f.read(), dtype=np.uint32)


if __name__ == '__main__':
    import sys
    inp = read_inputs(sys.argv[1])
    for half in (False, True):
        k = 'f16' if half else 'f32'
        p = pairs(half)
        q = np.frombuffer(inp['pp_%s_q' % k], dtype=np.float32).reshape(-1, 4)
        ok = (np.frombuffer(inp['pp_%s_v0' % k], dtype=np.uint32) == p['v0']).all() and \
             (np.frombuffer(inp['pp_%s_v1' % k], dtype=np.uint32) == p['v1']).all() and \
             (np.round(q[:, 3] * 256).astype(np.int64) == p['m']).all()
        t = trilinear(half)
        q = np.frombuffer(inp['tri_%s_q' % k], dtype=np.float32).reshape(-1, 4)
        ok2 = (np.frombuffer(inp['tri_%s_l0' % k], dtype=np.uint32) == t['l0'].ravel()).all() and \
              (np.frombuffer(inp['tri_%s_l1' % k], dtype=np.uint32) == t['l1'].ravel()).all() and \
              (q[:, 0].astype(np.float64) * 65536 == t['u']).all() and (q[:, 1].astype(np.float64) * 65536 == t['v']).all() and \
              (np.round(q[:, 3] * 256).astype(np.int64) == t['m']).all()
        c = cube(half)
        q = np.frombuffer(inp['c3_%s_q' % k], dtype=np.float32).reshape(-1, 4)
        ok3 = (np.frombuffer(inp['c3_%s_v' % k], dtype=np.uint32) == c['v'].ravel()).all() and \
              (q[:, 0].astype(np.float64) * 256 == c['x']).all() and (q[:, 2].astype(np.float64) * 256 == c['z']).all()
        print(k, 'pairs', ok, 'trilinear', ok2, 'cube', ok3)
