"""Anisotropic level of detail (tex2DGrad, maxAnisotropy N = 2, 4, 8, 16) on the H200, fit 2.

Run: python3 aniso2_fit.py             -> match counts per section and N (lod2.bin, lodb rnd16)
     python3 aniso2_fit.py --variants  -> also the counts of the near variants (see VARIANTS)

Changes against aniso_fit.py (fit 1, 95.45%):
  1. major = lod3_fit.footprint (the exact isotropic length, incl. the exact diagonal term D);
  2. each product of the determinant comes from a column-truncated multiplier: with the 9-bit
     mantissas x = 1.x1..x9, y = 1.y1..y9 (integers X, Y in 512..1023), every bit product
     x_i*y_j of weight below 2^-12 of the unnormalized [1,4) product is dropped, i.e.
     P = sum over bits i of X, j of Y with i + j >= 6 of 2^(i+j-18)   (times 2^(ea+eb)),
     and the constant 7*2^-12 (same scale) is added once to |det|;
     this alone makes an_ax and an_len exact for every N (fit 1's C*2^-9 bias was a stand-in);
  3. the minor is never longer than the major: Lmin = min(LOG2(Y) - Lmaj, Lmaj)
     (with A = B exactly the unclamped value can be 1/256 above Lmaj; the device returns Lmaj).
Everything else (LOG2 table, ratio clamp, blend remap) is fit 1's.
Still inexact: determinants made of two non-zero products (sumax, ang, perp, an_rot, an_ang, an_rnd):
+-1/256 misses near 8-bit boundaries of det, about 1-4% per section (see aniso2-fit.md)."""
import os, sys, numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lod3_fit as L3
from aniso_fit import log2t, remap, T   # LOG2 (unclamped, 8 truncated mantissa bits), blend remap

SECS = ['par_ax', 'par_ay', 'par_dir', 'sumax', 'npar', 'ang', 'perp',
        'an_ax', 'an_rot', 'an_ang', 'an_len', 'an_rnd']


def mant_exp(a):
    """a >= 0 with a 9-bit mantissa -> (X, e): a = X * 2^(e-9), X in 512..1023 (0 -> X = 0)."""
    m, e = np.frexp(a)
    X = np.round(m * 1024).astype(np.int64)
    e = (e - 1).astype(np.int64)
    nz = a > 0
    return np.where(nz, X, 0), np.where(nz, e, 0)


def tmul(a, b, k=12, grid_exp=None):
    """|a|*|b| (9-bit mantissas) from a column-truncated multiplier: bit products of weight
    below 2^grid_exp are dropped (default grid 2^(ea+eb-k): k fraction bits of the [1,4) product).
    Returns (value, ea+eb); value is exact in float64. 0 if either is 0."""
    xa, ea = mant_exp(np.abs(a)); xb, eb = mant_exp(np.abs(b))
    nz = (xa > 0) & (xb > 0)
    e = ea + eb
    ge = (e - k) if grid_exp is None else grid_exp
    ge = np.where(nz, ge, 0); e = np.where(nz, e, 0)
    g = np.ldexp(1.0, ge)
    acc = np.zeros(len(xa))
    for i in range(10):   # one partial product per bit of a's mantissa (the result is symmetric)
        term = np.ldexp(((xa >> i) & 1) * (xb << i).astype(np.float64), e - 18)
        acc += np.floor(term / g) * g
    return np.where(nz, acc, 0.0), e


def det_y(t, C=7, k=12, align='big'):
    """t: the four 9-bit-truncated signed texel components (ux, uy, vx, vy).
    Returns (|det|, Y = |det| + C*2^(e_big-k)), e_big = ea+eb of the product of larger magnitude.
    align='big': both products truncated on the larger product's grid (fits best);
    align='own': each product on its own grid (identical for one-product determinants)."""
    P1, e1 = tmul(t[0], t[3], k)
    P2, e2 = tmul(t[1], t[2], k)
    eb = np.where(P1 >= P2, e1, e2)
    if align == 'big':
        P1, _ = tmul(t[0], t[3], k, grid_exp=eb - k)
        P2, _ = tmul(t[1], t[2], k, grid_exp=eb - k)
    s1 = np.sign(t[0] * t[3]); s2 = np.sign(t[1] * t[2])
    det = np.abs(s1 * P1 - s2 * P2)
    return det, det + C * np.ldexp(1.0, eb - k)


def aniso_lod(g, n, W=4096, H=4096, minclamp=True, **kw):
    """Unremapped anisotropic lod*256, clamped to [0, 3072]. g: [k,4] gradients (dPdx.x, dPdx.y,
    dPdy.x, dPdy.y) in normalized coordinates."""
    g = g.astype(np.float64)
    ux, uy, vx, vy = g[:, 0] * W, g[:, 1] * H, g[:, 2] * W, g[:, 3] * H
    lmaj = log2t(L3.footprint(ux, uy, vx, vy))
    t = [L3.t9s(c) for c in (ux, uy, vx, vy)]
    det, Y = det_y(t, **kw)
    lmin = np.where(det > 0, log2t(np.where(det > 0, Y, 1.0)) - lmaj, -10**9)   # log2(det/major)
    if minclamp:
        lmin = np.minimum(lmin, lmaj)
    lod = np.maximum(lmin, lmaj - 256 * int(np.log2(n)))                       # ratio clamp
    return np.clip(lod, 0, 12 * 256)


def aniso_result(g, n, W=4096, H=4096, **kw):
    """tex2DGrad's return value *256 on the fit19 texture (level L holds L, linear mip filter)."""
    if n <= 1:
        return L3.lod_grad(g, W, H)
    return remap(aniso_lod(g, n, W, H, **kw), n)


VARIANTS = {
    'fitted (trunc. multiplier k=12, C=7, aligned to the larger product, min clamp)': {},
    'products on their own grids': {'align': 'own'},
    'no min(Lmin, Lmaj) clamp': {'minclamp': False},
    'k=12, C=6': {'C': 6}, 'k=12, C=8': {'C': 8},
    'k=11, C=3.5': {'k': 11, 'C': 3.5}, 'k=13, C=14': {'k': 13, 'C': 14},
}

if __name__ == '__main__':
    D = L3.load(os.path.join(HERE, 'h200', 'run2', 'lod2.bin'))
    Db = L3.load(os.path.join(HERE, 'h200', 'lodb.bin'))
    res = lambda d, k: np.round(d[k].astype(np.float64) * 256).astype(np.int64)
    variants = VARIANTS if '--variants' in sys.argv else dict(list(VARIANTS.items())[:1])
    for name, kw in variants.items():
        print('==', name)
        tot = n_all = 0
        for s in SECS:
            g = D[s + '_g']; row = []
            for n in (2, 4, 8, 16):
                row.append(int(np.sum(aniso_result(g, n, **kw) == res(D, s + '_a%d' % n))))
            tot += sum(row); n_all += 4 * len(g)
            print('%-8s %7d  N=2/4/8/16: %s' % (s, len(g), ' '.join('%7d' % x for x in row)))
        print('all lod2 aniso: %d / %d (%.3f%%)' % (tot, n_all, 100.0 * tot / n_all))
        r = res(Db, 'rnd16_r')
        print('lodb rnd16 (N=16): %d / %d' % (np.sum(aniso_result(Db['rnd16_g'], 16, **kw) == r), len(r)))
