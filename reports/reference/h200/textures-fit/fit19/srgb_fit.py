"""Exact model of the NVIDIA H200 texture unit's linear filtering of sRGB 8-bit texels
(uchar4, cudaTextureDesc.sRGB = 1, cudaReadModeNormalizedFloat, cudaFilterModeLinear).

Fitted on fit19's h200/srgb.bin (see srgb-fit.md). Run `python3 srgb_fit.py` to verify.

Model (per rgb channel; alpha is separate):
  1. Decode: texel byte v -> (SRGB_EXP[v], SRGB_MANT[v]): linear value SRGB_MANT[v] * 2^(SRGB_EXP[v]-7),
     an 8-bit mantissa (< 256) with an exponent that is a step function of v. For v >= 32 the
     exponent steps at v = 32, 48, 64, 96, 136, 184, 248, so a few values at the top of a binade
     (v = 32,33, 48,49, 64..70, 96..98, 136, 184..187, 248..254) are held "denormalised", with a
     7-bit mantissa (< 128) under the next exponent. The value itself is the point-sampled result
     (SRGB_H200 of emu-driver/src/texture/format.rs).
  2. Shared exponent per channel: E = max SRGB_EXP over the footprint's texels whose weight is
     non-zero (texels of weight 0 do not count).
  3. Each texel's mantissa is aligned to E by truncation: m = SRGB_MANT >> (E - SRGB_EXP).
  4. S = sum(weight_i * m_i) exactly (8-bit weights summing to 256; S < 2^16).
  5. Result = S * 2^(E-15) rounded to half precision (11 significant bits, half subnormal quantum
     2^-24 below 2^-14), rounding ties UP (round half up, not to even); returned as that float.
Alpha (8-bit unorm, not decoded): (sum(weight_i * v_i * 257) + 128) >> 8, read as k / 65535.
Weights: 1D w1 = round-half-up(frac * 256), w0 = 256 - w1; 2D w11 = (a*b + 128) >> 8,
w10 = a - w11, w01 = b - w11, w00 = 256 - a - b + w11 (as in sample.rs).
"""
import os, sys
import numpy as np

SRGB_EXP = [
    -126, -12, -11, -11, -10, -10, -10, -9, -9, -9, -9, -9, -9, -8, -8, -8,
    -8, -8, -8, -8, -8, -8, -7, -7, -7, -7, -7, -7, -7, -7, -7, -7,
    -6, -6, -6, -6, -6, -6, -6, -6, -6, -6, -6, -6, -6, -6, -6, -6,
    -5, -5, -5, -5, -5, -5, -5, -5, -5, -5, -5, -5, -5, -5, -5, -5,
    -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4,
    -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4,
    -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3,
    -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3, -3,
    -3, -3, -3, -3, -3, -3, -3, -3, -2, -2, -2, -2, -2, -2, -2, -2,
    -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2,
    -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2,
    -2, -2, -2, -2, -2, -2, -2, -2, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0,
]
SRGB_MANT = [
    0, 160, 160, 240, 160, 200, 240, 140, 160, 180, 200, 220, 240, 132, 144, 156,
    170, 184, 198, 214, 230, 246, 131, 140, 150, 159, 169, 180, 190, 201, 213, 224,
    118, 125, 131, 138, 145, 152, 159, 166, 174, 182, 190, 198, 206, 215, 224, 233,
    121, 126, 131, 136, 141, 146, 151, 156, 162, 168, 173, 179, 185, 191, 197, 204,
    105, 108, 112, 115, 118, 122, 125, 129, 133, 136, 140, 144, 148, 152, 156, 160,
    164, 169, 173, 177, 182, 186, 191, 195, 200, 205, 209, 214, 219, 224, 229, 234,
    120, 122, 125, 128, 130, 133, 136, 139, 142, 145, 148, 151, 154, 157, 160, 163,
    166, 169, 172, 176, 179, 182, 186, 189, 192, 196, 199, 203, 206, 210, 214, 217,
    221, 225, 229, 232, 236, 240, 244, 248, 126, 128, 130, 132, 134, 136, 138, 141,
    143, 145, 147, 149, 152, 154, 156, 158, 161, 163, 165, 168, 170, 173, 175, 178,
    180, 182, 185, 188, 190, 193, 195, 198, 200, 203, 206, 209, 211, 214, 217, 219,
    222, 225, 228, 231, 234, 237, 240, 242, 123, 124, 126, 127, 129, 130, 132, 133,
    135, 137, 138, 140, 141, 143, 145, 146, 148, 150, 151, 153, 155, 156, 158, 160,
    161, 163, 165, 167, 169, 170, 172, 174, 176, 178, 179, 181, 183, 185, 187, 189,
    191, 193, 195, 197, 199, 201, 203, 205, 207, 209, 211, 213, 215, 217, 219, 221,
    223, 225, 227, 229, 232, 234, 236, 238, 120, 121, 122, 123, 125, 126, 127, 128,
]

SRGB_EXP_A = np.array(SRGB_EXP, dtype=np.int64)
SRGB_MANT_A = np.array(SRGB_MANT, dtype=np.int64)


def decode_point(v):
    """Point-sampled value of sRGB byte(s) v (equals format.rs SRGB_H200)."""
    v = np.asarray(v)
    return np.ldexp(SRGB_MANT_A[v].astype(np.float64), SRGB_EXP_A[v] - 7).astype(np.float32)


def round_half_up_to_half(S, E):
    """S * 2^(E-15) (S >= 0 integer) rounded to an IEEE half value, ties up; float32 result."""
    S = np.asarray(S, dtype=np.int64)
    E = np.asarray(E, dtype=np.int64)
    nb = np.frexp(S.astype(np.float64))[1].astype(np.int64)      # bit length (0 for S = 0)
    shift = np.maximum(np.maximum(nb - 11, -9 - E), 0)           # normal: 11 bits; subnormal: 2^-24
    half = np.where(shift > 0, np.left_shift(1, np.maximum(shift - 1, 0)), 0)
    R = np.left_shift(np.right_shift(S + half, shift), shift)
    return np.ldexp(R.astype(np.float64), E - 15).astype(np.float32)


def filter_srgb(vals, weights):
    """vals, weights: integer arrays [..., k] (texel bytes of one rgb channel, weights summing
    to 256). Returns the H200's filtered float32 result [...]."""
    vals = np.asarray(vals, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.int64)
    ex = np.where(weights > 0, SRGB_EXP_A[vals], -1000)
    E = ex.max(axis=-1)
    E = np.where(E < -200, 0, E)                                 # no weighted texel: irrelevant
    m = np.right_shift(SRGB_MANT_A[vals], np.maximum(E[..., None] - SRGB_EXP_A[vals], 0))
    m = np.where(weights > 0, m, 0)
    S = (weights * m).sum(axis=-1)
    return round_half_up_to_half(S, E)


def filter_unorm8(vals, weights):
    """Alpha (8-bit unorm, not sRGB-decoded): 16-bit fixed point v*257, (sum + 128) >> 8, / 65535."""
    vals = np.asarray(vals, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.int64)
    k = ((weights * vals * 257).sum(axis=-1) + 128) >> 8
    return (k.astype(np.float32) / np.float32(65535.0)).astype(np.float32)


def weight8(frac):
    """8-bit weight of one axis: round-half-up(frac * 256), 0..256."""
    return np.floor(np.asarray(frac, dtype=np.float64) * 256 + 0.5).astype(np.int64)


def bilinear(a, b):
    """Weights of texels (i0,j0), (i1,j0), (i0,j1), (i1,j1) for 8-bit fractions a (x), b (y)."""
    a = np.asarray(a, dtype=np.int64); b = np.asarray(b, dtype=np.int64)
    w11 = (a * b + 128) >> 8
    return np.stack([256 - a - b + w11, a - w11, b - w11, w11], axis=-1)


def sample2d(texels, x, y):
    """Bilinear sRGB sample of texels [h][w][4] (uint8) at unnormalised coords x, y (inside the
    texture, clamp not needed). Returns float32 [..., 4]."""
    x = np.asarray(x, np.float64) - 0.5; y = np.asarray(y, np.float64) - 0.5
    i = np.floor(x).astype(np.int64); j = np.floor(y).astype(np.int64)
    a = weight8(x - i); b = weight8(y - j)
    # a or b == 256 moves to the next texel with weight 0
    i = i + (a >> 8); a = a & 255; j = j + (b >> 8); b = b & 255
    W = bilinear(a, b)
    t = np.asarray(texels, dtype=np.int64)
    V = np.stack([t[j, i], t[j, np.minimum(i + 1, t.shape[1] - 1)],
                  t[np.minimum(j + 1, t.shape[0] - 1), i],
                  t[np.minimum(j + 1, t.shape[0] - 1), np.minimum(i + 1, t.shape[1] - 1)]], axis=-2)
    out = [filter_srgb(V[..., c], W) for c in range(3)] + [filter_unorm8(V[..., 3], W)]
    return np.stack(out, axis=-1)


def _verify(path):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import sections as S
    d = S.read(path)
    red = (S.undelta(d['srgb_pairs_d']) & 0xffff).astype(np.uint16).reshape(256, 256, 256)
    alpha = (S.undelta(d['srgb_alpha_d']) & 0xffff).reshape(256, 256, 256)
    assert len(d['srgb_odd']) == 0

    # Point table = format.rs SRGB_H200 (its bits, for the record).
    pt = decode_point(np.arange(256)).view(np.uint32)
    print('decode table: w = 0 column equals the point values for every a:',
          bool(np.all(red[:, :, 0].view(np.float16).astype(np.float32) == decode_point(np.arange(256))[:, None])))

    a = np.arange(256)[:, None, None]; j = np.arange(256)[None, :, None]; w = np.arange(256)[None, None, :]
    n_red = n_al = 0
    for a0 in range(0, 256, 32):                                  # chunks to bound memory
        sl = slice(a0, a0 + 32)
        A = np.broadcast_to(a[sl], (32, 256, 256)); J = np.broadcast_to(j, (32, 256, 256))
        Wt = np.broadcast_to(w, (32, 256, 256))
        vals = np.stack([A, J], -1); wts = np.stack([256 - Wt, Wt], -1)
        r = filter_srgb(vals, wts).astype(np.float16).view(np.uint16)
        n_red += int((r == red[sl]).sum())
        al = filter_unorm8(vals, wts)
        n_al += int((al == alpha[sl].astype(np.float32) / np.float32(65535.0)).sum())
    print(f'1D red  (sRGB): {n_red} / {red.size}')
    print(f'1D alpha      : {n_al} / {alpha.size}')

    tex = np.frombuffer(d['srgb2d_texels'], np.uint8).reshape(16, 16, 4)
    q = np.frombuffer(d['srgb2d_coords'], np.float32).reshape(-1, 2)
    res = np.frombuffer(d['srgb2d_res'], np.float32).reshape(-1, 4)
    out = sample2d(tex, q[:, 0], q[:, 1])
    ok = out == res
    print(f'2D bilinear   : r {ok[:, 0].sum()}, g {ok[:, 1].sum()}, b {ok[:, 2].sum()}, a {ok[:, 3].sum()} '
          f'of {len(res)} each; all four: {ok.all(1).sum()}')
    return n_red == red.size and n_al == alpha.size and bool(ok.all())


if __name__ == '__main__':
    here = os.path.dirname(os.path.abspath(__file__))
    p = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, 'h200', 'srgb.bin')
    print('ALL MATCH' if _verify(p) else 'MISMATCHES REMAIN')
