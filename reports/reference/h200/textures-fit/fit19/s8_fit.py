"""Exact model of the H200's linear filtering of 8-bit signed normalized texels
(cudaReadModeNormalizedFloat, cudaFilterModeLinear), fitted to fit19's h200/s8.bin.

The texture unit blends the raw int8 values with the 8-bit integer weights (sum 256),
giving an exact 16-bit signed sum S, then scales S to the 16-bit snorm range:
    k = S + (((S >> 4) * 257 + 1024) >> 11)        (arithmetic shifts = floor)
    k = max(k, -32767);  result = k / 32767.0f
At a texel centre (S = 256 v) this is v*258 + floor((v + 64) / 128), the known widening.
"""
import os, sys
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def s16_of_sum(S):
    """The 16-bit snorm value of a weighted int8 sum S (weights summing to 256)."""
    S = np.asarray(S, dtype=np.int64)
    return np.maximum(S + (((S >> 4) * 257 + 1024) >> 11), -32767)


def blend_s8(texels_int8, weights):
    """k (result = k/32767.0f) of texels (..., n) int8 with integer weights (..., n) summing to 256."""
    t = np.asarray(texels_int8, dtype=np.int64)
    w = np.asarray(weights, dtype=np.int64)
    return s16_of_sum((t * w).sum(axis=-1))


def blend_s8_1d(a, b, w):
    """Two texels a (weight 256 - w) and b (weight w), w = 0..256."""
    a, b, w = (np.asarray(x, dtype=np.int64) for x in (a, b, w))
    return s16_of_sum(a * (256 - w) + b * w)


def bilinear_weights(fa, fb):
    """Weights of texels (i0,j0), (i1,j0), (i0,j1), (i1,j1) for 8-bit fractions fa (x), fb (y)."""
    fa = np.asarray(fa, dtype=np.int64); fb = np.asarray(fb, dtype=np.int64)
    w11 = (fa * fb + 128) >> 8
    return np.stack([256 + w11 - fa - fb, fa - w11, fb - w11, w11], axis=-1)


def blend_s8_2d(t00, t10, t01, t11, fa, fb):
    t = np.stack([np.asarray(x, dtype=np.int64) for x in (t00, t10, t01, t11)], axis=-1)
    return blend_s8(t, bilinear_weights(fa, fb))


def to_float(k):
    return (np.asarray(k, dtype=np.float32) / np.float32(32767.0)).astype(np.float32)


def main():
    import sections as S
    d = S.read(os.path.join(HERE, 'h200', 's8.bin'))
    assert len(d['s8_odd']) == 0
    # 1D: [a][j][w], texel A = a - 128 (weight 256 - w), B = j - 128 (weight w).
    K = S.undelta(d['s8_pairs_d']).reshape(256, 256, 256)
    v = np.arange(-128, 128, dtype=np.int64)
    w = np.arange(256, dtype=np.int64)
    pred = blend_s8_1d(v[:, None, None], v[None, :, None], w[None, None, :])
    ok1 = int((pred == K).sum())
    print(f"1D: {ok1} of {K.size} results reproduced ({K.size - ok1} differ)")

    # 2D: 16x16 texels, coords x = i + 0.5 + fx/256 (clamp addressing; i <= 14).
    tx = np.frombuffer(d['s82d_texels'], dtype=np.int8).astype(np.int64).reshape(16, 16)
    q = np.frombuffer(d['s82d_coords'], dtype=np.float32).reshape(-1, 2).astype(np.float64)
    res = np.frombuffer(d['s82d_res'], dtype=np.float32)
    px, py = q[:, 0] - 0.5, q[:, 1] - 0.5
    i, j = np.floor(px).astype(np.int64), np.floor(py).astype(np.int64)
    fa = np.round((px - i) * 256).astype(np.int64); fb = np.round((py - j) * 256).astype(np.int64)
    assert ((px - i) * 256 == fa).all() and ((py - j) * 256 == fb).all() and (fa < 256).all()
    i1, j1 = np.minimum(i + 1, 15), np.minimum(j + 1, 15)
    k = blend_s8_2d(tx[j, i], tx[j, i1], tx[j1, i], tx[j1, i1], fa, fb)
    got = to_float(k)
    ok2 = int((got.view(np.uint32) == res.view(np.uint32)).sum())
    print(f"2D: {ok2} of {res.size} results reproduced ({res.size - ok2} differ)")
    # The float conversion k/32767.0f (f32) and (f64 k/32767 rounded to f32) agree for every k:
    kk = np.arange(-32767, 32768)
    same = (to_float(kk) == (kk / 32767.0).astype(np.float32)).all()
    print("k/32767 in f32 == f64-then-f32 for every k:", bool(same))
    return ok1 == K.size and ok2 == res.size


if __name__ == '__main__':
    sys.exit(0 if main() else 1)
