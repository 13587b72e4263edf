"""Anisotropic level of detail (tex2DGrad, maxAnisotropy N = 2, 4, 8, 16) on the H200: fitted model.
Run: python3 aniso_fit.py   (verifies against h200/run2/lod2.bin, prints match counts).
Builds on lod_fit.py (footprint length L, LOG2_FRAC table)."""
import os, sys, numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lod_fit as LF, sections as S

T = LF.LOG2_FRAC

def log2t(x):
    """lod*256 of a positive length, unclamped: exponent*256 + LOG2_FRAC[8 truncated mantissa bits]."""
    m, e = np.frexp(x)
    j = np.clip(np.floor(m * 512.0).astype(np.int64) - 256, 0, 255)
    return (e.astype(np.int64) - 1) * 256 + T[j]

# Blend-fraction remap of the anisotropic path: f' = clamp(floor((a*f - c)/4), 0, 256), f = lod & 255.
REMAP = {2: (6, 252), 4: (7, 378), 8: (8, 512), 16: (8, 512)}

def remap(lod, n):
    a, c = REMAP[n]
    f = lod & 255
    fp = np.clip(np.floor((a * f - c) / 4.0), 0, 256).astype(np.int64)
    return (lod >> 8) * 256 + fp

def aniso_lod(g, n, W=4096, H=4096, C=0.75, major_lod=None):
    """Unremapped anisotropic lod*256 (clamped to [0, 3072]).
    g: [k,4] gradients (dPdx.x, dPdx.y, dPdy.x, dPdy.y), normalized coords.
    major_lod: optional override of LOG2(major) (e.g. the device's isotropic lod) for diagnosis."""
    g = g.astype(np.float64)
    ux, uy, vx, vy = g[:, 0] * W, g[:, 1] * H, g[:, 2] * W, g[:, 3] * H
    lmaj = log2t(LF.footprint(g, W, H)) if major_lod is None else major_lod
    t = [LF.trunc9(x) * np.sign(x) for x in (ux, uy, vx, vy)]
    p1, p2 = t[0] * t[3], t[1] * t[2]
    det = np.abs(p1 - p2)
    # bias: C units of 2^-9 of the (unnormalized, [1,4)) mantissa product of the larger product's factors
    use1 = np.abs(p1) >= np.abs(p2)
    fa = np.where(use1, np.abs(t[0]), np.abs(t[1])); fb = np.where(use1, np.abs(t[3]), np.abs(t[2]))
    fa = np.where(fa > 0, fa, 1.0); fb = np.where(fb > 0, fb, 1.0)
    ea = np.frexp(fa)[1] - 1; eb = np.frexp(fb)[1] - 1
    Y = det + C * np.ldexp(1.0, ea + eb - 9)
    s = int(np.log2(n))
    lminor = np.where(det > 0, log2t(np.where(det > 0, Y, 1.0)) - lmaj, -10**9)   # log2(det/major)
    lod = np.maximum(lminor, lmaj - 256 * s)                                      # clamp ratio to N
    return np.clip(lod, 0, 12 * 256)

def aniso_result(g, n, W=4096, H=4096, **kw):
    """What tex2DGrad returns *256 on the fit19 texture (level L holds L, linear mip filter)."""
    if n <= 1:
        return LF.lod256(LF.footprint(g, W, H))
    return remap(aniso_lod(g, n, W, H, **kw), n)

def load(path):
    d = {}
    for k, v in S.read(path).items():
        if k == 'info': continue
        d[k] = np.frombuffer(v, dtype=np.float32)
        if k.endswith('_g'): d[k] = d[k].reshape(-1, 4)
    return d

if __name__ == '__main__':
    here = os.path.dirname(os.path.abspath(__file__))
    D = load(os.path.join(here, 'h200', 'run2', 'lod2.bin'))
    res = lambda k: np.round(D[k].astype(np.float64) * 256).astype(np.int64)
    secs = ['par_ax', 'par_ay', 'par_dir', 'sumax', 'npar', 'ang', 'perp',
            'an_ax', 'an_rot', 'an_ang', 'an_len', 'an_rnd']
    print('N=1 == N=0 (device):', all(np.array_equal(res(s + '_a1'), res(s + '_r')) for s in secs))
    print('%-8s %8s | %-36s | %s' % ('section', 'count', 'full model: N=2 4 8 16',
                                    'det part only (device iso lod as major, unclamped r0): N=2 4 8 16'))
    tot = [0, 0]; totn = 0
    for s in secs:
        g = D[s + '_g']; r0 = res(s + '_r'); use = (r0 > 0) & (r0 < 3072)
        full = []; hyb = []
        for n in (2, 4, 8, 16):
            r = res(s + '_a%d' % n)
            full.append(int(np.sum(aniso_result(g, n) == r)))
            ph = remap(aniso_lod(g, n, major_lod=r0), n)
            hyb.append('%d' % np.sum((ph == r) & use))
        tot[0] += sum(full); totn += 4 * len(g)
        print('%-8s %8d | %-36s | %s (of %d)' % (s, len(g), ' '.join(map(str, full)), ' '.join(hyb), use.sum()))
    print('all sections, all N: %d / %d (%.2f%%)' % (tot[0], totn, 100.0 * tot[0] / totn))
    # older file: rnd16
    try:
        Db = LF.load(os.path.join(here, 'h200', 'lodb.bin'))
        if 'rnd16_r' in Db:
            r = np.round(Db['rnd16_r'].astype(np.float64) * 256).astype(np.int64)
            p = aniso_result(Db['rnd16_g'], 16)
            print('lodb rnd16: %d / %d' % (np.sum(p == r), len(r)))
    except Exception as ex:
        print('lodb rnd16 skipped:', ex)
