"""Level of detail from explicit gradients (tex2DGrad) on the H200: fitted model.
Run: python3 lod_fit.py  (verifies against h200/loda.bin and h200/lodb.bin)."""
import os, sys, numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sections as S

# LOG2_FRAC[j] = 8-bit fraction of log2(1 + j/256) as the device quantizes it (from `iso`).
LOG2_FRAC = np.array([0, 2, 4, 5, 6, 8, 9, 11, 12, 13, 15, 16, 18, 19, 20, 22, 23, 24, 26, 27, 28, 30, 31, 32, 34, 35, 36, 38, 39, 40, 42, 43, 44, 45, 47, 48, 49, 50, 52, 53, 54, 55, 57, 58, 59, 60, 62, 63, 64, 65, 66, 68, 69, 70, 71, 72, 74, 75, 76, 77, 78, 79, 81, 82, 83, 84, 85, 86, 88, 89, 90, 91, 92, 93, 94, 95, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133, 135, 136, 137, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 162, 163, 164, 165, 166, 167, 168, 169, 170, 171, 172, 173, 173, 174, 175, 176, 177, 178, 179, 180, 181, 181, 182, 183, 184, 185, 186, 187, 188, 188, 189, 190, 191, 192, 193, 194, 195, 195, 196, 197, 198, 199, 200, 200, 201, 202, 203, 204, 205, 205, 206, 207, 208, 209, 210, 210, 211, 212, 213, 214, 214, 215, 216, 217, 218, 218, 219, 220, 221, 222, 222, 223, 224, 225, 226, 226, 227, 228, 229, 229, 230, 231, 232, 233, 233, 234, 235, 236, 236, 237, 238, 239, 239, 240, 241, 242, 242, 243, 244, 245, 245, 246, 247, 248, 248, 249, 250, 251, 251, 252, 253, 253, 254, 255, 255], dtype=np.int64)

def trunc9(v):
    """|v| with its mantissa truncated to 9 fraction bits (1.m9); 0 stays 0."""
    m, e = np.frexp(np.abs(v))
    return np.ldexp(np.floor(m * 1024.0) / 1024.0, e)

def ulp9(v):
    return np.ldexp(1.0, np.frexp(np.abs(v))[1] - 10)

def vec_len(x, y):
    """Approximate |(x, y)|: X + (11*N + 4*ulp(N))/32 with X, N = max/min of |x|, |y|
    each truncated to 9 mantissa bits (ulp(N) = N's own 9-bit ulp). Exact in float64."""
    x = np.abs(x); y = np.abs(y)
    mx = np.maximum(x, y); mn = np.minimum(x, y)
    X = trunc9(mx); N = trunc9(mn)
    return X + np.where(mn > 0, (11.0 * N + 4.0 * ulp9(mn)) / 32.0, 0.0)

def footprint(g, W, H):
    """g: [n,4] float32 gradients (dPdx.x, dPdx.y, dPdy.x, dPdy.y), normalized coords."""
    g = g.astype(np.float64)
    ux, uy, vx, vy = g[:, 0] * W, g[:, 1] * H, g[:, 2] * W, g[:, 3] * H   # texel space, per axis
    la, lb = vec_len(ux, uy), vec_len(vx, vy)
    # diagonal estimate (best found, not exact: see lod-fit.md)
    t = [trunc9(c) * np.sign(c) for c in (ux, uy, vx, vy)]
    ls, ld = vec_len(t[0] + t[2], t[1] + t[3]), vec_len(t[0] - t[2], t[1] - t[3])
    return np.maximum(np.maximum(la, lb), np.maximum(ls, ld) * 0.6875)

def lod256(length, levels=13):
    """lod * 256 as the device quantizes it: exponent*256 + LOG2_FRAC[8 truncated mantissa bits],
    clamped to [0, (levels-1)*256]; length 0 -> 0."""
    m, e = np.frexp(length)                     # length = m * 2^e, m in [0.5, 1)
    j = np.clip(np.floor(m * 512.0).astype(np.int64) - 256, 0, 255)
    l = (e.astype(np.int64) - 1) * 256 + LOG2_FRAC[j]
    l = np.where(length > 0, l, 0)
    return np.clip(l, 0, (levels - 1) * 256)

def load(path):
    d = {}
    for k, v in S.read(path).items():
        d[k] = np.frombuffer(v, dtype=np.float32)
        if k.endswith('_g'): d[k] = d[k].reshape(-1, 4)
    return d

if __name__ == '__main__':
    here = os.path.dirname(os.path.abspath(__file__))
    D = {}
    D.update(load(os.path.join(here, 'h200', 'loda.bin'))); D.update(load(os.path.join(here, 'h200', 'lodb.bin')))
    res = lambda n: np.round(D[n + '_r'].astype(np.float64) * 256).astype(np.int64)
    # explicit lod: truncated to 1/256
    l = D['lod_l'].astype(np.float64)
    p = np.clip(np.floor(l * 256), 0, 12 * 256).astype(np.int64)
    print('%-8s %7d / %7d' % ('lod', np.sum(p == res('lod')), len(p)))
    for name, W, H in [('iso', 4096, 4096), ('axis', 4096, 4096), ('dir', 4096, 4096),
                       ('rnd', 4096, 4096), ('rndrect', 4096, 1024), ('rnd16', 4096, 4096)]:
        r = res(name)
        p = lod256(footprint(D[name + '_g'], W, H))
        note = '  (maxAnisotropy 16 not modelled)' if name == 'rnd16' else ''
        print('%-8s %7d / %7d%s' % (name, np.sum(p == r), len(r), note))
