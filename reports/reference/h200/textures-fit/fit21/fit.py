#!/usr/bin/env python3
"""Fit 21: compares probe2's device records with the emulator's and fits candidate rules.

    fit.py compare DEVICE2.txt EMULATED2.txt   line by line: differing words per
                                               (format, address mode, result type, word)
    fit.py fit DEVICE2.txt [FORMAT...]         each candidate rule's failures per
                                               (format, mode, result type), with the
                                               best failing candidate's first example

The model (footprint, 8-bit weights, bilinear split, clamp/border/wrap, 21-bit
normalized coordinates) reproduces every word of the emulator's probe2 output for the
filtered u8/u16 formats and the point-sampled others (checked on the simtwin of
2026-12-05), so candidate counts are the rule's, not the model's.
"""
import sys
import struct, math, collections
import numpy as np
def f32(b): return struct.unpack('<f', struct.pack('<I', b))[0]
def F(x): return float(np.float32(x))
def parse(path):
    tex, pts, creates, others = {}, collections.defaultdict(list), {}, []
    for line in open(path):
        p = line.split()
        if not p: continue
        if p[0] == 'texels':
            tex[p[1].rstrip(':')] = [int(v, 16) for v in p[2:]]
        elif p[0] == 'create':
            creates[(p[1], p[2])] = int(p[3])
        elif p[0] == 'run' or len(p) != 9:
            others.append(line.rstrip())
        else:
            pts[(p[0], p[1], p[2])].append((int(p[3], 16), int(p[4], 16), tuple(int(v, 16) for v in p[5:])))
    return tex, pts, creates, others
def axis(u, n, norm):
    if norm:
        s = float(1 << 21)
        t = F(math.floor(u * s) / s * n)
    else:
        t = u
    b = F(t - 0.5)
    i = math.floor(b)
    frac = F(b - i)
    a = math.floor(frac * 256 + 0.5)
    if a >= 256: return i + 1, 0
    return i, a
def bilinear(a, b):
    x1 = a; x0 = 256 - a
    w00 = (x0 * (256 - b) + 128) >> 8
    w11 = (x1 * b + 128) >> 8
    return [w00, x1 - w11, x0 - w00, w11]
W = H = 16
def footprint(fmt, mode, xb, yb):
    """list of (texel index or None for border, weight)"""
    norm = mode == 'wrap'
    idx = []
    for u, n in ((f32(xb), W), (f32(yb), H)):
        i, a = axis(u, n, norm)
        if mode == 'clamp':
            if i < 0: i, a = 0, 0
            elif i >= n - 1: i, a = n - 1, 0
        idx.append((i, a))
    (ix, a), (iy, b) = idx
    ws = bilinear(a, b)
    out = []
    for k in range(4):
        x, y = ix + (k & 1), iy + (k >> 1)
        if mode == 'wrap': x %= W; y %= H
        elif mode == 'clamp': x = min(max(x, 0), W - 1); y = min(max(y, 0), H - 1)
        if 0 <= x < W and 0 <= y < H: out.append(((y * W + x), ws[k]))
        else: out.append((None, ws[k]))
    return out
def info(name):
    f, c = name.split('x'); c = int(c)
    bits = int(f[1:]); sgn = f[0] == 's'
    return bits, sgn, c
def sx(v, bits):
    return v - (1 << bits) if v >> (bits - 1) & 1 else v
BORDER = [struct.unpack('<I', struct.pack('<f', v))[0] for v in (-1.5, 2.0, 0.25, 1.0)]
M32 = 0xffffffff
def val(name, t, i, c, C, bits, sgn, bordermode):
    if i is None:
        if bits == 32: return BORDER[c] if c < 4 else 0
        return 0
    v = t[i * C + c]
    return v
def cands(bits, sgn):
    def signed(v): return sx(v, bits) if sgn else v
    def ext(r):  # result to the register: sign-extend signed formats' result width
        return r & M32
    C = {}
    C['floor'] = lambda vs, ws: ((sum(signed(v) * w for v, w in zip(vs, ws)) + 128) >> 8) & M32
    C['trunc0'] = lambda vs, ws: int(math.trunc((sum(signed(v) * w for v, w in zip(vs, ws)) + 128) / 256)) & M32
    C['rhaz'] = lambda vs, ws: (lambda s: (int(math.copysign((abs(s) + 128) // 256, s))))(sum(signed(v) * w for v, w in zip(vs, ws))) & M32
    C['raw_unsigned'] = lambda vs, ws: ((sum(v * w for v, w in zip(vs, ws)) + 128) >> 8) & M32
    def rawu_sx(vs, ws):
        r = (sum(v * w for v, w in zip(vs, ws)) + 128) >> 8
        return (sx(r & ((1 << bits) - 1), bits) if bits < 32 else r) & M32
    C['raw_unsigned_sx'] = rawu_sx
    def trunc_res(vs, ws):
        r = (sum(signed(v) * w for v, w in zip(vs, ws)) + 128) >> 8
        return (r & ((1 << bits) - 1)) if bits < 32 else r & M32
    C['floor_zx'] = trunc_res
    # Added after the device run (fit21.md): no rounding bias (the 32-bit rule), and
    # 32-bit rules that are not exact: a 32-bit accumulator, f32 arithmetic.
    C['floor_nobias'] = lambda vs, ws: (sum(signed(v) * w for v, w in zip(vs, ws)) >> 8) & M32
    def acc32(vs, ws):
        s = sum(signed(v) * w for v, w in zip(vs, ws)) & M32
        return (sx(s, 32) >> 8 if sgn else s >> 8) & M32
    C['acc32'] = acc32
    def f32sum(vs, ws):
        s = 0.0
        for v, w in zip(vs, ws): s = F(s + F(F(signed(v)) * F(w / 256)))
        return math.floor(s) & M32
    C['f32'] = f32sum
    return C
def point_index(mode, xb, yb):
    norm = mode == 'wrap'
    ij = []
    for u, n in ((f32(xb), W), (f32(yb), H)):
        if norm:
            sc = float(1 << 21); u = F(math.floor(u * sc) / sc * n)
        i = math.floor(u)
        if mode == 'wrap': i %= n
        elif mode == 'clamp': i = min(max(i, 0), n - 1)
        elif not 0 <= i < n: return None
        ij.append(i)
    return ij[1] * W + ij[0]
def compare(argv):
    dt, dp, dc, do = parse(argv[0]); et, ep, ec, eo = parse(argv[1])
    assert dt == et, 'texels differ'
    print('creates differ:', {k: (dc[k], ec.get(k)) for k in dc if dc[k] != ec.get(k)})
    print('other lines differ:', [(a, b) for a, b in zip(do, eo) if a != b][:10])
    tot = diff = 0
    for k in dp:
        d, e = dp[k], ep.get(k, [])
        if len(d) != len(e): print(k, 'count', len(d), len(e)); continue
        per = [0] * 4
        for (x1, y1, r1), (x2, y2, r2) in zip(d, e):
            assert (x1, y1) == (x2, y2)
            for c in range(4):
                per[c] += r1[c] != r2[c]
        tot += 4 * len(d); diff += sum(per)
        print(k, len(d), 'diff per word', per)
    print('words', tot, 'differ', diff)
def fit(argv):
    tex, pts, cr, _ = parse(argv[0])
    only = argv[1:]
    for key, rows in sorted(pts.items()):
        name, mode, rt = key
        if only and name not in only: continue
        bits, sgn, Cn = info(name)
        t = tex[name]
        cs = cands(bits, sgn)
        res = {}
        bad = 0; ex = None
        for xb, yb, r in rows:
            i = point_index(mode, xb, yb)
            for c in range(Cn):
                v = val(name, t, i, c, Cn, bits, sgn, mode)
                g = (sx(v, bits) if sgn and bits < 32 else v) & M32
                if g != r[c]:
                    bad += 1
                    if ex is None: ex = (hex(xb), hex(yb), c, hex(r[c]), hex(g))
        res['point'] = (bad, ex)
        for cname, f in cs.items():
            bad = 0; ex = None
            for xb, yb, r in rows:
                fp = footprint(name, mode, xb, yb)
                for c in range(Cn):
                    vs = [val(name, t, i, c, Cn, bits, sgn, mode) for i, _ in fp]
                    ws = [w for _, w in fp]
                    g = f(vs, ws)
                    if g != r[c]:
                        bad += 1
                        if ex is None: ex = (hex(xb), hex(yb), c, [hex(v) for v in vs], ws, hex(r[c]), hex(g))
            res[cname] = (bad, ex)
        best = min(res, key=lambda k: res[k][0])
        print(key, len(rows) * Cn, {k: v[0] for k, v in res.items()})
        if res[best][0]: print('   best', best, 'example', res[best][1])

if __name__ == '__main__':
    if len(sys.argv) < 3 or sys.argv[1] not in ('compare', 'fit'):
        sys.exit(__doc__)
    {'compare': compare, 'fit': fit}[sys.argv[1]](sys.argv[2:])
