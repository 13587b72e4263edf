"""Writes samples_in.bin: records (op, x, y, lo) as 4 little-endian uint32, the sample
inputs of every form (specials, every exponent with random mantissas, random patterns;
operand pairs for division). Deterministic (fixed seed)."""
import sys
import numpy as np

rng = np.random.default_rng(20251203)

F32_OPS = list(range(0, 15))
F64_OPS = [15, 16, 17]
X2_OPS = [23, 24, 25, 26]
DIV_OPS = [30, 31, 32, 33]


def f32_specials():
    s = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF,
         0x7FFFFFFF, 0xFFFFFFFF, 0xFF800001, 0x7FC00001, 1, 2, 3, 0x7FFFFF, 0x400000, 0x3FFFFF,
         0x80000001, 0x807FFFFF, 0x800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000,
         0xBF800000, 0x3F7FFFFF, 0x3F800001]
    s += list(rng.integers(1, 0x800000, 64))
    s += list(rng.integers(0x80000001, 0x80800000, 64))
    for e in range(1, 255):
        for sign in (0, 0x80000000):
            s += [sign | e << 23, sign | e << 23 | 0x7FFFFF, sign | e << 23 | 1]
    return np.array(s, dtype=np.uint64).astype(np.uint32)


def f32_per_exponent(n):
    e = np.repeat(np.arange(256, dtype=np.uint32), 2 * n)
    sign = np.tile(np.repeat(np.array([0, 0x80000000], dtype=np.uint32), n), 256)
    m = rng.integers(0, 0x800000, e.size, dtype=np.uint32)
    return sign | e << 23 | m


def f32_inputs():
    return np.concatenate([f32_specials(), f32_per_exponent(40),
                           rng.integers(0, 1 << 32, 4000, dtype=np.uint64).astype(np.uint32)])


def f64_hi_inputs():
    s = [0, 0x80000000, 0x7FF00000, 0xFFF00000, 0x7FF80000, 0xFFF80000, 0x7FF00001, 0x7FFFFFFF,
         1, 0xFFFFF, 0x80000001, 0x100000, 0x7FEFFFFF, 0x3FF00000, 0x3FEFFFFF, 0x3FF00001]
    e = np.repeat(np.arange(2048, dtype=np.uint32), 12)
    sign = np.tile(np.repeat(np.array([0, 0x80000000], dtype=np.uint32), 6), 2048)
    m = rng.integers(0, 0x100000, e.size, dtype=np.uint32)
    return np.concatenate([np.array(s, dtype=np.uint32), sign | e << 20 | m,
                           rng.integers(0, 1 << 32, 2000, dtype=np.uint64).astype(np.uint32)])


def div_pairs():
    sp = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF, 1,
                   0x80000005, 0x7FFFFF, 0x400000, 0x800000, 0x80800000, 0x800001, 0x7F7FFFFF,
                   0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x3FC00000, 0x40400000, 0x7E800000,
                   0x7E7FFFFF, 0x7E800001, 0x7F000000, 0x7EFFFFFF, 0xFE800001, 0x00FFFFFF,
                   0x01000000, 0x00800001, 0x34000000, 0x4B800000, 0x3EAAAAAB, 0x42F00000,
                   0x1F800000, 0x5F800000, 0x3DCCCCCD, 0xC1200000, 0x00000010],
                  dtype=np.uint32)
    xs, ys = np.meshgrid(sp, sp)
    x, y = [xs.ravel()], [ys.ravel()]
    x.append(f32_per_exponent(20)); y.append(rng.permutation(f32_per_exponent(20)))
    # divisors around the scaling thresholds 2^-126 and 2^126
    yt = np.concatenate([rng.integers(0x7E7F0000, 0x7F000100, 1500, dtype=np.uint32),
                         rng.integers(0x00700000, 0x00900000, 1500, dtype=np.uint32)])
    x.append(f32_per_exponent(6)[:3000]); y.append(yt)
    # quotients near the smallest normal (flush-to-zero boundary) and near overflow
    yq = rng.integers(0x3F800000, 0x40000000, 3000, dtype=np.uint32)
    yf = yq.view(np.float32).astype(np.float64)
    for scale in (2.0 ** -126, 2.0 ** 126 * 1.9):
        q = (yf * scale * (1 + rng.uniform(-1e-6, 1e-6, yf.size))).astype(np.float32)
        x.append(q.view(np.uint32)); y.append(yq)
    return np.concatenate(x), np.concatenate(y)


recs = []
for op in F32_OPS:
    xi = f32_inputs()
    recs.append(np.stack([np.full_like(xi, op), xi, np.zeros_like(xi), np.zeros_like(xi)], 1))
for op in F64_OPS:
    hi = f64_hi_inputs()
    lo = np.where(np.arange(hi.size) % 2 == 0, 0, rng.integers(0, 1 << 32, hi.size, dtype=np.uint64)).astype(np.uint32)
    recs.append(np.stack([np.full_like(hi, op), hi, np.zeros_like(hi), lo], 1))
for op in X2_OPS:
    h = np.concatenate([rng.integers(0, 1 << 32, 16000, dtype=np.uint64).astype(np.uint32)])
    recs.append(np.stack([np.full_like(h, op), h, np.zeros_like(h), np.zeros_like(h)], 1))
for op in DIV_OPS:
    x, y = div_pairs()
    recs.append(np.stack([np.full_like(x, op), x, y, np.zeros_like(x)], 1))
allr = np.concatenate(recs).astype(np.uint32)
allr.tofile(sys.argv[1])
print(f"{allr.shape[0]} records")
