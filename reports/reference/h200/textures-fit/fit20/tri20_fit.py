"""tri20 (fit20): today's rule against every device result of the probe, and the device
data kept as differences from it.

Each section's 2^20 (c3: 2^19) results are rebuilt as (texel, weight, plane) terms from
the regenerated inputs (tri20_gen.py) with the sampler's footprint and weight rules
(cases.py: axis, clamped footprints, plane_weights) and evaluated with today's rule
(model.filter_sum: each plane aligned to its own largest texel with 4 guard bits,
truncated, the two planes' sums added exactly, rounded once, ties away).

  python3 tri20_fit.py --write DEVDIR   scores the raw device files in DEVDIR and writes
                                        gh100/tri20_diff.bin.xz: per section the indices
                                        where the device differs from today's rule and the
                                        device's words there
  python3 tri20_fit.py                  rebuilds the device results from the model and
                                        gh100/tri20_diff.bin.xz and scores them
"""
import lzma, os, struct, sys
import numpy as np
import cases as C, model as M, tri20_gen as T

HERE = os.path.dirname(os.path.abspath(__file__))
SECTIONS = ['pp_f32', 'pp_f16', 'tri_f32', 'tri_f16', 'c3_f32', 'c3_f16']


def vals(bits, half):
    return [float(x) for x in T.values(bits, half)]


def records(name):
    """The terms of every query of a section, in query order."""
    half = name.endswith('f16')
    prec = 'half' if half else 'f32'
    if name.startswith('pp'):
        p = T.pairs(half)
        v0, v1 = vals(p['v0'], half), vals(p['v1'], half)
        for a, b, m in zip(v0, v1, p['m'].tolist()):
            yield [(a, w, 0) for w in C.plane_weights(256 - m, 128, 128)] + [(b, w, 1) for w in C.plane_weights(m, 128, 128)], prec
    elif name.startswith('tri'):
        t = T.trilinear(half)
        l0 = np.array(vals(t['l0'].ravel(), half)).reshape(512, 512).tolist()
        l1 = np.array(vals(t['l1'].ravel(), half)).reshape(256, 256).tolist()
        levels = [l0, l1]
        for u, v, m in zip(t['u'].tolist(), t['v'].tolist(), t['m'].tolist()):
            yield C.trilinear(levels, u / 65536.0, v / 65536.0, 0, m), prec
    else:
        c = T.cube(half)
        v = np.array(vals(c['v'].ravel(), half)).reshape(64, 64, 64).tolist()
        cl = lambda k: min(max(k, 0), 63)
        for x, y, z in zip(c['x'].tolist(), c['y'].tolist(), c['z'].tolist()):
            (i, a), (j, b), (l, cc) = [C.clamp_footprint(*C.axis(q / 256.0, 64, False), 64) for q in (x, y, z)]
            terms = []
            for pl, wz in ((0, 256 - cc), (1, cc)):
                ws = C.plane_weights(wz, a, b)
                tx = [v[cl(l + pl)][cl(j + dy)][cl(i + dx)] for dy in (0, 1) for dx in (0, 1)]
                terms += [(t_, w, pl) for t_, w in zip(tx, ws)]
            yield terms, prec


def model_words(name):
    return np.array([M.filter_sum(t, p) for t, p in records(name)], dtype=np.uint32)


def main():
    diffs = {}
    if len(sys.argv) > 2 and sys.argv[1] == '--write':
        out = bytearray()
        for name in SECTIONS:
            dev = T.results(sys.argv[2], name)
            mod = model_words(name)
            idx = np.nonzero(dev != mod)[0].astype(np.uint32)
            diffs[name] = (len(dev), idx, dev[idx])
            nm = name.encode().ljust(16, b'\0')
            out += nm + struct.pack('<II', len(dev), len(idx)) + idx.tobytes() + dev[idx].astype(np.uint32).tobytes()
        with lzma.open(os.path.join(HERE, 'gh100', 'tri20_diff.bin.xz'), 'wb', preset=9) as f:
            f.write(bytes(out))
    else:
        with lzma.open(os.path.join(HERE, 'gh100', 'tri20_diff.bin.xz')) as f:
            b = f.read()
        o = 0
        while o < len(b):
            name = b[o:o + 16].rstrip(b'\0').decode()
            n, k = struct.unpack('<II', b[o + 16:o + 24])
            idx = np.frombuffer(b[o + 24:o + 24 + 4 * k], dtype=np.uint32)
            w = np.frombuffer(b[o + 24 + 4 * k:o + 24 + 8 * k], dtype=np.uint32)
            diffs[name] = (n, idx, w)
            o += 24 + 8 * k
    for name in SECTIONS:
        n, idx, _ = diffs[name]
        print('%-8s %8d results; today\'s rule differs from the device on %d' % (name, n, len(idx)))


if __name__ == '__main__':
    main()
