"""Anisotropic level of detail (tex2DGrad, maxAnisotropy N >= 2) on GH100: fit 3, the determinant.

Run: python3 lod5_fit.py              -> fit 3 against every anisotropic result of lod3 (and lod5 if present)
     python3 lod5_fit.py --variants   -> also the near variants (VARIANTS) and fit 2, per section
     python3 lod5_fit.py --decode     -> how tightly each lod3 result pins the determinant (see lod5-fit.md)
Needs numpy; reads h200/lod3.bin.xz (and h200/lod5.bin.xz), decompressed once into the temp directory.

Fit 3 changes only the determinant det = ux*vy - uy*vx of fit 2 (aniso2_fit.py); the major,
LOG2 table, min(Lmin, Lmaj), ratio clamp and blend remap stay. With the components cut to
9 fraction bits (signed), each product |a|*|b| is
  1. the column-truncated multiplier of fit 2: bit products of weight < 2^-12 of the
     unnormalized [1, 4) significand product dropped, 7 * 2^-12 added (fit 2's constant,
     now per product), then
  2. cut (toward zero) to 9 fraction bits of its own normalized significand: a 10-bit float.
Then the smaller product is aligned to the larger one keeping one guard bit (bits below
2^(E_big - 10) dropped, E_big the larger's binade) and the two are added or subtracted
exactly (they subtract when the two products have the same sign). LOG2 reads 8 bits of that.
For one product this is fit 2 exactly (the cut to 9 bits is invisible to an 8-bit read)."""
import os, sys, lzma, tempfile, numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sections as S, lod3_fit as L3, aniso2_fit as A2
from aniso_fit import log2t, T

REMAP = {2: (6, 252), 4: (7, 378), 8: (8, 512), 16: (8, 512)}


def remap(lod, n, bias=0):
    """Blend remap of the aniso path; N = 2, 4 use c + a from the first bias (256ths) with
    a * bias >= c + a (lod5 bq: 43 and 55; lod4 had seen 1 (no) and 64 (yes))."""
    a, c = REMAP[n]
    if n < 8 and a * bias >= c + a:
        c += a
    return (lod >> 8) * 256 + np.clip(np.floor((a * (lod & 255) - c) / 4.0), 0, 256).astype(np.int64)


def cut(v, bits):
    """v >= 0 cut toward zero to `bits` fraction bits of its normalized significand (0 stays 0)."""
    m, e = np.frexp(v)
    return np.where(v > 0, np.ldexp(np.floor(m * 2.0 ** (bits + 1)), e - bits - 1), 0.0)


def mult(a, b, C=7, pbits=9):
    """One product of the determinant: |a|*|b| for 9-bit-significand values (float64, exact)."""
    xa, ea = A2.mant_exp(np.abs(a)); xb, eb = A2.mant_exp(np.abs(b))
    nz = (xa > 0) & (xb > 0)
    e = np.where(nz, ea + eb, 0)
    t = np.zeros(len(xa), np.int64)
    for i in range(10):      # one partial product per bit of a, cut at 2^-12 (64 units of 2^-18)
        t += (((xa >> i) & 1) * (xb << i)) >> 6
    p = np.where(nz, np.ldexp((t + C).astype(np.float64), e - 12), 0.0)
    return cut(p, pbits) if pbits else p


def det_y(t, guard=1, **kw):
    """t: the four cut signed components (ux, uy, vx, vy) -> the value LOG2 reads (0: det = 0).
    guard=None aligns the smaller product exactly."""
    p1, p2 = mult(t[0], t[3], **kw), mult(t[1], t[2], **kw)
    sub = (t[0] * t[3] > 0) == (t[1] * t[2] > 0)
    big, small = np.maximum(p1, p2), np.minimum(p1, p2)
    if guard is not None:
        g = np.ldexp(1.0, np.frexp(np.where(big > 0, big, 1.0))[1] - 1 - 9 - guard)
        small = np.floor(small / g) * g
    return np.where(sub, big - small, big + small)


def fit2_y(t, **kw):
    det, Y = A2.det_y(t)
    return np.where(det > 0, Y, 0.0)


def aniso_lod(g, n, W=4096, H=4096, ydet=det_y, **kw):
    """Unremapped anisotropic lod*256, not yet clamped (the bias is added first: lod5 rnd/par
    at N = 16 with bias 1/2, whose unbiased lod is below 0); g: [k,4] normalized gradients."""
    g = g.astype(np.float64)
    ux, uy, vx, vy = g[:, 0] * W, g[:, 1] * H, g[:, 2] * W, g[:, 3] * H
    lmaj = log2t(L3.footprint(ux, uy, vx, vy))
    Y = ydet([L3.t9s(c) for c in (ux, uy, vx, vy)], **kw)
    lmin = np.where(Y > 0, np.minimum(log2t(np.where(Y > 0, Y, 1.0)) - lmaj, lmaj), -10**9)
    return np.maximum(lmin, lmaj - 256 * int(np.log2(n)))


def result(g, n, bias=0, **kw):
    """tex2DGrad's value *256 on the fit19 texture (bias in 256ths, added before the remap)."""
    if n <= 1:
        return np.clip(L3.lod_grad(g, 4096, 4096) + bias, 0, 3072)
    lod = aniso_lod(g, n, **kw)
    return remap(np.clip(lod + bias, 0, 3072), n, bias)


def load(name):
    """h200/NAME.bin.xz -> {section: array} (text sections info/tex kept as str)."""
    raw = os.path.join(tempfile.gettempdir(), 'fit19-' + name + '.bin')
    if not os.path.exists(raw):
        open(raw, 'wb').write(lzma.decompress(open(os.path.join(HERE, 'h200', name + '.bin.xz'), 'rb').read()))
    d = {}
    for k, v in S.read(raw).items():
        if k in ('info', 'tex'):
            d[k] = v.decode()
            continue
        d[k] = np.frombuffer(v, dtype=np.float32)
        if k.endswith('_g'):
            d[k] = d[k].reshape(-1, 4)
    return d


res = lambda d, k: np.round(d[k].astype(np.float64) * 256).astype(np.int64)
LOD3_SECS = ['prod0', 'prod1', 'prod2', 'prod3', 'prod4', 'sum', 'dif', 'cancel']
LOD3_TEX = [('a2', 2, 0), ('a4', 4, 0), ('a16', 16, 0), ('b4', 4, 128), ('b16', 16, 128)]
VARIANTS = {
    'fit 3 (10-bit products, one guard bit)': {},
    'products not cut to 9 bits': {'pbits': 0},
    'products cut to 10 bits': {'pbits': 10},
    'products cut to 8 bits': {'pbits': 8},
    'no guard bit (smaller product cut at the larger\'s 9th bit)': {'guard': 0},
    'two guard bits': {'guard': 2},
    'smaller product aligned exactly': {'guard': None},
    'constant 6 per product': {'C': 6},
    'constant 8 per product': {'C': 8},
    'fit 2 (aniso2_fit.py)': {'ydet': fit2_y},
}


def score_lod3(D, kw, per_tex=False):
    tot = n_all = 0
    for s in LOD3_SECS:
        g = D[s + '_g']; row = []
        for name, n, b in LOD3_TEX:
            row.append(int(np.sum(result(g, n, b, **kw) == res(D, s + '_' + name))))
        tot += sum(row); n_all += len(row) * len(g)
        if per_tex:
            print('  %-7s %7d | %s' % (s, len(g), ' '.join('%s %7d' % (t[0], x) for t, x in zip(LOD3_TEX, row))))
        else:
            print('  %-7s %8d / %8d' % (s, sum(row), len(row) * len(g)))
    print('  all lod3 anisotropic results: %d / %d' % (tot, n_all))


def decode(D, s):
    """The 8-bit codes of Y (binade*256 + 8 bits) consistent with every anisotropic result of a
    lod3 query, given the exact major: (lo, hi) code per query, hi < lo where none fits; the search
    spans +-80 codes around fit 3's Y, and a range touching that edge is open (not bounded)."""
    g = D[s + '_g'].astype(np.float64) * 4096
    lmaj = log2t(L3.footprint(*g.T))
    Y = det_y([L3.t9s(c) for c in g.T])
    m, e = np.frexp(np.where(Y > 0, Y, 1.0))
    c0 = (e.astype(np.int64) - 1) * 256 + np.floor(m * 512).astype(np.int64) - 256
    C = c0[:, None] + np.arange(-80, 81)[None, :]
    V = (C >> 8) * 256 + T[C & 255]
    ok = np.ones(C.shape, bool)
    for name, n, b in LOD3_TEX:
        lm = lmaj[:, None]
        lod = np.clip(np.maximum(np.minimum(V - lm, lm), lm - 256 * int(np.log2(n))), 0, 3072)
        ok &= remap(np.clip(lod + b, 0, 3072), n, b) == res(D, s + '_' + name)[:, None]
    lo, hi = np.argmax(ok, 1), 160 - np.argmax(ok[:, ::-1], 1)
    bounded = ok.any(1) & (lo > 0) & (hi < 160)
    return bounded, hi - lo + 1, ok.sum(1) == hi - lo + 1


def lod5_report(D5):
    tex = [l.split() for l in D5['tex'].splitlines()]
    print('lod5 rnd/par (fit 3 / fit 2):')
    for s in ('rnd', 'par'):
        g = D5[s + '_g']
        for suf, n, b in tex:
            if not suf.startswith(s + '_'):
                continue
            n, b = int(n), int(round(float(b) * 256))
            r = res(D5, suf)
            print('  %-10s %6d / %6d   fit 2 %6d' % (suf, np.sum(result(g, n, b) == r), len(r),
                                                   np.sum(result(g, n, b, ydet=fit2_y) == r)))
    print('lod5 bq (one product): queries that blend as c (the remap of lod4 without a bias) / as c + a:')
    g = D5['bq_g']
    for suf, n, b in tex:
        if not suf.startswith('bq_'):
            continue
        n, bias = int(n), float(b) * 256
        bi = int(np.trunc(bias))
        lod = np.clip(aniso_lod(g, n) + bi, 0, 3072)
        r = res(D5, suf)
        a, c = REMAP[n]
        base = (lod >> 8) * 256 + np.clip(np.floor((a * (lod & 255) - c) / 4.0), 0, 256).astype(np.int64)
        low = (lod >> 8) * 256 + np.clip(np.floor((a * (lod & 255) - c - a) / 4.0), 0, 256).astype(np.int64)
        print('  %-10s bias %8.3f/256: c %6d  c+a %6d  (differ on %d)  of %d' % (
            suf, bias, np.sum(base == r), np.sum(low == r), np.sum(base != low), len(r)))


if __name__ == '__main__':
    D = load('lod3')
    variants = VARIANTS if '--variants' in sys.argv else dict(list(VARIANTS.items())[:1])
    for i, (name, kw) in enumerate(variants.items()):
        print('==', name)
        score_lod3(D, kw, per_tex=(i == 0))
    if '--decode' in sys.argv:
        for s in ['sum', 'dif', 'cancel']:
            b, w, contig = decode(D, s)
            print('decode %-7s %6d queries: %6d pin Y to a range of codes (%d to one code, %d to two), %d open' % (
                s, len(b), b.sum(), np.sum(b & (w == 1)), np.sum(b & (w == 2)), np.sum(~b)))
    if os.path.exists(os.path.join(HERE, 'h200', 'lod5.bin.xz')):
        lod5_report(load('lod5'))
