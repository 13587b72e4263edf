"""tex2DGrad level of detail on the H200, maxAnisotropy 0/1: the complete isotropic model
(lod_fit.py steps 1, 2, 4 + the exact step 3, the way the two gradients combine).

Run: python3 lod3_fit.py              -> match counts for every section (all must be exact)
     python3 lod3_fit.py --variants   -> also the counts for near-miss variants of step 3
All arithmetic is exact in float64 (every intermediate value has few bits)."""
import os, sys, numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sections as S
from lod_fit import LOG2_FRAC, lod256          # step 4: 8 truncated mantissa bits -> LOG2_FRAC table


def _ulp(v, bits):
    """ulp of |v| when its mantissa keeps `bits` fraction bits (1.b...b * 2^E -> 2^(E-bits))."""
    return np.ldexp(1.0, np.frexp(np.abs(v))[1] - 1 - bits)


def _trunc(v, bits):
    """|v| with the mantissa truncated to `bits` fraction bits (0 stays 0)."""
    u = _ulp(v, bits)
    return np.floor(np.abs(v) / u) * u


def vec_len(x, y):
    """Step 2 (lod_fit.py): one gradient's length, X + (11*N + 4*ulp9(N))/32,
    X = trunc9(max(|x|,|y|)), N = trunc9(min(|x|,|y|))."""
    ax, ay = np.abs(x), np.abs(y)
    mx, mn = np.maximum(ax, ay), np.minimum(ax, ay)
    return _trunc(mx, 9) + np.where(mn > 0, (11 * _trunc(mn, 9) + 4 * _ulp(mn, 9)) / 32, 0.0)


def t9s(c):
    """A component truncated (toward zero) to 9 mantissa fraction bits, sign kept."""
    return np.sign(c) * _trunc(c, 9)


def add_g(a, b, guard_bits=10):
    """a + b as the diagonal adder does it: the operand of smaller magnitude is first truncated
    (toward zero) to the grid of the larger one's 10-fraction-bit ulp (one guard bit beyond the
    9-bit inputs), then the sum is exact. Only subtractions of magnitudes can differ from a + b
    after the later 9-bit truncation (the result is rounded *up* there)."""
    big = np.where(np.abs(a) >= np.abs(b), a, b)
    small = np.where(np.abs(a) >= np.abs(b), b, a)
    g = _ulp(big, guard_bits)
    return big + np.sign(small) * np.floor(np.abs(small) / g) * g


def diag_len(Sx, Sy, cX=4, cN=32, truncA=True):
    """Length of a diagonal vector S = u +- v, scaled by 11/16 (~1/sqrt2):
    (11*trunc9(X) + 4*ulp9(X))/16, truncated to 9 bits, plus (121*trunc9(N) + 32*ulp9(N))/512,
    X = max(|Sx|,|Sy|), N = min(|Sx|,|Sy|)."""
    ax, ay = np.abs(Sx), np.abs(Sy)
    X, N = np.maximum(ax, ay), np.minimum(ax, ay)
    A = np.where(X > 0, (11 * _trunc(X, 9) + cX * _ulp(X, 9)) / 16, 0.0)
    if truncA:
        A = _trunc(A, 9)
    B = np.where(N > 0, (121 * _trunc(N, 9) + cN * _ulp(N, 9)) / 512, 0.0)
    return A + B


def footprint(ux, uy, vx, vy, guard_bits=10, **kw):
    """Texel-space gradients u = dPdx*(W,H), v = dPdy*(W,H) -> the length that goes into log2."""
    la, lb = vec_len(ux, uy), vec_len(vx, vy)
    t = [t9s(c) for c in (ux, uy, vx, vy)]
    if guard_bits is None:
        add = lambda a, b: a + b
    else:
        add = lambda a, b: add_g(a, b, guard_bits)
    dp = diag_len(add(t[0], t[2]), add(t[1], t[3]), **kw)      # u + v
    dm = diag_len(add(t[0], -t[2]), add(t[1], -t[3]), **kw)    # u - v
    return np.maximum(np.maximum(la, lb), np.maximum(dp, dm))


def lod_grad(g, W, H, levels=13, **kw):
    """g: [n,4] float32 (dPdx.x, dPdx.y, dPdy.x, dPdy.y) normalized -> lod*256 (clamped)."""
    g = g.astype(np.float64)
    return lod256(footprint(g[:, 0] * W, g[:, 1] * H, g[:, 2] * W, g[:, 3] * H, **kw), levels)


def load(path):
    d = {}
    for k, v in S.read(path).items():
        if k == 'info':
            continue
        d[k] = np.frombuffer(v, dtype=np.float32)
        if k.endswith('_g'):
            d[k] = d[k].reshape(-1, 4)
    return d


SECTIONS = [  # (file, section, W, H)
    ('loda.bin', 'iso', 4096, 4096), ('loda.bin', 'axis', 4096, 4096), ('lodb.bin', 'dir', 4096, 4096),
    ('lodb.bin', 'rnd', 4096, 4096), ('lodb.bin', 'rndrect', 4096, 1024),
    ('run2/lod2.bin', 'par_ax', 4096, 4096), ('run2/lod2.bin', 'par_ay', 4096, 4096),
    ('run2/lod2.bin', 'par_dir', 4096, 4096), ('run2/lod2.bin', 'sumax', 4096, 4096),
    ('run2/lod2.bin', 'npar', 4096, 4096), ('run2/lod2.bin', 'ang', 4096, 4096),
    ('run2/lod2.bin', 'perp', 4096, 4096),
]

VARIANTS = {
    'fitted (guard 10, cX 4, cN 32)': {},
    'no guard-bit step (plain a+b)': {'guard_bits': None},
    'guard 9': {'guard_bits': 9},
    'guard 11': {'guard_bits': 11},
    'cN 31': {'cN': 31},
    'cN 33': {'cN': 33},
    'cX 3': {'cX': 3},
    'cX 5': {'cX': 5},
    'A not truncated to 9 bits': {'truncA': False},
}

if __name__ == '__main__':
    files = {}
    def get(fn):
        if fn not in files:
            files[fn] = load(os.path.join(HERE, 'h200', fn))
        return files[fn]
    variants = VARIANTS if '--variants' in sys.argv else {'fitted (guard 10, cX 4, cN 32)': {}}
    for vname, kw in variants.items():
        print('==', vname)
        tot = ok = 0
        for fn, name, W, H in SECTIONS:
            D = get(fn)
            r = np.round(D[name + '_r'].astype(np.float64) * 256).astype(np.int64)
            p = lod_grad(D[name + '_g'], W, H, **kw)
            m = int(np.sum(p == r))
            extra = ''
            if name + '_a1' in D:
                a1 = np.round(D[name + '_a1'].astype(np.float64) * 256).astype(np.int64)
                extra = '  (_a1 == _r: %d)' % int(np.sum(a1 == r))
            print('%-8s %7d / %7d%s' % (name, m, len(r), extra))
            tot += len(r); ok += m
        print('%-8s %7d / %7d' % ('all', ok, tot))
