"""The inputs of the conformance cases texf_cube3d_f32, texf_mip_blend_{f32,half},
texf_mip_pairs_{f32,half}, texf_mip_blend_point_f32 and ptx_texx_mip (op 3),
reconstructed from the case code (emu-driver/conformance/src/cases/texture/texfit.rs)
and the sampler's footprint and weight rules (emu-driver/src/texture/sample.rs): every
query as its filter terms (texel value, 8-bit weight, plane), the plane being the
z-plane of a 3D footprint or the mip level (0 the finer, 1 the coarser)."""
import math
import struct

M64 = (1 << 64) - 1
FLOAT, HALF = 0x20, 0x10


class Rng:
    """emu-driver/conformance's xorshift64* (texfit.rs Rng)."""

    def __init__(self, seed):
        self.s = ((seed * 0x9E3779B97F4A7C15) & M64) | 1

    def next(self):
        s = self.s
        s ^= s >> 12
        s ^= (s << 25) & M64
        s ^= s >> 27
        self.s = s
        return ((s * 0x2545F4914F6CDD1D) & M64) >> 32

    def below(self, n):
        return self.next() % n

    def float_bits(self, lo, hi):
        e = lo + self.below(hi - lo + 1)
        sign = self.next() & 1
        return (sign << 31) | ((e + 127) << 23) | (self.next() & 0x7FFFFF)


def f32(bits):
    return struct.unpack('<f', struct.pack('<I', bits))[0]


def half(h):
    return struct.unpack('<e', struct.pack('<H', h))[0]


def to_f32(x):
    """x rounded to f32 (nearest even), as Rust's `as f32`."""
    return struct.unpack('<f', struct.pack('<f', x))[0]


def axis(u, n, normalized):
    """sample.rs axis() for a linear filter, then the clamp of the footprint."""
    if normalized:
        scale = float(1 << 21)
        t = to_f32(math.floor(u * scale) / scale * n)
    else:
        t = u
    b = to_f32(t - 0.5)
    i = math.floor(b)
    frac = b - i
    a = math.floor(frac * 256.0 + 0.5)
    if a >= 256:
        i, a = i + 1, 0
    return i, a


def clamp_footprint(i, a, n):
    if i < 0:
        return 0, 0
    if i >= n - 1:
        return n - 1, 0
    return i, a


def plane_weights(wz, a, b):
    x1 = (wz * a + 128) >> 8
    x0 = wz - x1
    w00 = (x0 * (256 - b) + 128) >> 8
    w11 = (x1 * b + 128) >> 8
    return [w00, x1 - w11, x0 - w00, w11]


def footprint2d(tex, w, h, u, v, normalized, off=(0, 0)):
    """The 4 texels (x fastest) and fractions of a clamped 2D footprint."""
    i, a = axis(u, w, normalized)
    j, b = axis(v, h, normalized)
    i += off[0]
    j += off[1]
    i, a = clamp_footprint(i, a, w)
    j, b = clamp_footprint(j, b, h)
    cl = lambda k, n: min(max(k, 0), n - 1)
    t = [tex[cl(j + dy, h)][cl(i + dx, w)] for dy in (0, 1) for dx in (0, 1)]
    return t, a, b


class Record:
    """One filtered result: terms [(value, weight, plane)], precision, device and
    emulated result bits (f32 words; half results widened)."""

    def __init__(self, terms, prec, index):
        self.terms, self.prec, self.index = terms, prec, index


def mip_levels(size, levels, gen):
    out = []
    w, h = size
    for l in range(levels):
        lw, lh = max(w >> l, 1), max(h >> l, 1)
        vals = [gen(l, k) for k in range(lw * lh)]
        out.append([vals[y * lw:(y + 1) * lw] for y in range(lh)])
    return out


def trilinear(levels, u, v, lod_k, m, normalized=True, off=(0, 0), prec='f32'):
    """Terms of a tex2DLod with linear filter and linear mip filter (lod = k + m/256)."""
    lv = levels[lod_k]
    h, w = len(lv), len(lv[0])
    t0, a0, b0 = footprint2d(lv, w, h, u, v, normalized, off)
    if m == 0 or lod_k + 1 >= len(levels):
        return [(x, wt, 0) for x, wt in zip(t0, plane_weights(256, a0, b0))]
    lv1 = levels[lod_k + 1]
    h1, w1 = len(lv1), len(lv1[0])
    t1, a1, b1 = footprint2d(lv1, w1, h1, u, v, normalized, off)
    return [(x, wt, 0) for x, wt in zip(t0, plane_weights(256 - m, a0, b0))] + \
           [(x, wt, 1) for x, wt in zip(t1, plane_weights(m, a1, b1))]


def mip_blend(fmt):
    """texf_mip_blend_f32 / _half: 16x16, 5 levels, random texels, 4096 tex2DLod."""
    r = Rng(60 + fmt)
    r2 = Rng(61 + fmt)

    def gen(l, k):
        if fmt == FLOAT:
            return f32(r2.float_bits(-6, 6))
        s = r2.next() & 1
        e = 5 + r2.below(20)
        mnt = r2.next() & 0x3FF
        return half((s << 15) | (e << 10) | mnt)

    levels = mip_levels((16, 16), 5, gen)
    out = []
    for q in range(4096):
        u = r.below(1024) / 1024.0
        v = r.below(1024) / 1024.0
        lod = r.below(4 * 256)
        out.append(Record(trilinear(levels, u, v, lod >> 8, lod & 255), 'f32' if fmt == FLOAT else 'half', q))
    return out


def mip_pairs(fmt):
    """texf_mip_pairs_f32 / _half: 64x64, 7 levels each one value; lod k + j/256."""
    f32s = [0.1, 3.3, -7.77, 1234.567, 1.0e-3, 65504.0, -0.0]
    halves = [0x2E66, 0x4299, 0xC7C5, 0x64D2, 0x1419, 0x7BFF, 0x8000]
    vals = [to_f32(x) for x in f32s] if fmt == FLOAT else [half(h) for h in halves]
    levels = mip_levels((64, 64), 7, lambda l, k: vals[l])
    out = []
    lods = [(k, j) for k in range(6) for j in range(256)] + [(1, j) for j in range(256)]
    for q, (k, j) in enumerate(lods):
        out.append(Record(trilinear(levels, 0.5, 0.5, k, j), 'f32' if fmt == FLOAT else 'half', q))
    return out


def cube3d():
    """texf_cube3d_f32: 8x8x8 float texels (every 11th from 3 zero), 4096 tex3D at
    unnormalized coordinates on a 1/1024 grid, clamp."""
    r = Rng(30 + FLOAT + 1)
    vals = [0.0 if k % 11 == 3 else f32(r.float_bits(-8, 8)) for k in range(512)]
    tex = lambda x, y, z: vals[z * 64 + y * 8 + x]
    out = []
    for q in range(4096):
        c = [r.below(8 * 1024) / 1024.0 for _ in range(3)]
        ix = [clamp_footprint(*axis(c[k], 8, False), 8) for k in range(3)]
        (i, a), (j, b), (l, cc) = ix
        cl = lambda k: min(max(k, 0), 7)
        terms = []
        for p, wz in ((0, 256 - cc), (1, cc)):
            ws = plane_weights(wz, a, b)
            tx = [tex(cl(i + dx), cl(j + dy), cl(l + p)) for dy in (0, 1) for dx in (0, 1)]
            terms += [(x, w, p) for x, w in zip(tx, ws)]
        out.append(Record(terms, 'f32', q))
    return out


def texx_mip():
    """ptx_texx_mip op 3: tex.level.2d with texel offsets on an 8x8 float mipmap of 3
    levels (texel l*10 + k/4), 512 queries."""
    r = Rng(70 + 1)
    r2 = Rng(71)
    levels = mip_levels((8, 8), 3, lambda l, k: float(l * 10) + r2.below(8) * 0.25)
    out = []
    for q in range(512):
        u = r.below(1024) / 1024.0
        v = r.below(1024) / 1024.0
        lod = r.below(3 * 64)  # lod/64
        ox = r.below(16) - 8
        oy = r.below(16) - 8
        k, m = lod // 64, (lod % 64) * 4
        k = min(k, 2)
        rec = Record(trilinear(levels, u, v, k, m, off=(ox, oy)), 'f32', q)
        rec.query = (u, v, lod / 64.0, ox, oy)
        out.append(rec)
    return out


def float_pairs(r):
    """texfit.rs float_pairs (texels of texf_pairs_f32) as f32 values."""
    v = []
    for k in range(128):
        gap = k % 32
        e0 = r.below(21) - 10
        a = abs(f32(r.float_bits(e0, e0)))
        b = abs(f32(r.float_bits(e0 - gap, e0 - gap)))
        if (k // 32) & 1:
            b = -b
        if (k // 64) & 1:
            a = -a
        if k % 3 == 1:
            a, b = b, a
        special = {
            5: (1.5, -1.5), 9: (3.0, f32(0xC0400001)), 13: (0.0, -0.0), 17: (-0.0, -0.0),
            21: (f32(0x00000123), to_f32(1.0e-38)), 25: (f32(0x80400000), f32(0x00000001)),
            29: (math.inf, 1.0), 33: (-math.inf, math.inf), 37: (math.nan, 2.0),
            41: (f32(0x7F7FFFFF), f32(0x7F7FFFFF)), 45: (f32(0x7F7FFFFF), -f32(0x7F7FFFFF)),
            49: (1.0, f32(0x3F800001)), 53: (16777215.0, 16777216.0), 57: (math.nan, 1.0),
        }
        a, b = special.get(k, (a, b))
        v += [a, b]
    return v


def half_pairs(r):
    v = []
    for k in range(128):
        gap = k % 16
        e0 = 1 + r.below(30)
        a = ((r.next() & 1) << 15) | (e0 << 10) | (r.next() & 0x3FF)
        e1 = max(e0 - gap, 0)
        b = ((r.next() & 1) << 15) | (e1 << 10) | (r.next() & 0x3FF)
        special = {5: (0x3E00, 0xBE00), 13: (0x0000, 0x8000), 21: (0x0001, 0x03FF), 29: (0x7C00, 0x3C00),
                   37: (0x7E00, 0x4000), 41: (0x7BFF, 0x7BFF), 45: (0x7BFF, 0xFBFF), 57: (0x7D00, 0x3C00)}
        if k in special:
            a, b = special[k]
        elif k % 3 == 1:
            a, b = b, a
        v += [half(a), half(b)]
    return v


def pairs(fmt):
    """texf_pairs_f32 / _half: 128 texel pairs, 64 weights each (1D, linear)."""
    r = Rng(20 if fmt == FLOAT else 21)
    v = float_pairs(r) if fmt == FLOAT else half_pairs(r)
    out = []
    q = 0
    for k in range(128):
        for j in range(64):
            a = min(j * 4 + 1 + k % 4, 255)
            out.append(Record([(v[2 * k], 256 - a, 0), (v[2 * k + 1], a, 0)], 'f32' if fmt == FLOAT else 'half', q))
            q += 1
    return out


def quad(fmt):
    """texf_quad_f32 / _half: 16x16 random texels, 4096 tex2D (unnormalized)."""
    r = Rng(30 + fmt)
    if fmt == FLOAT:
        vals = [0.0 if k % 11 == 3 else f32(r.float_bits(-8, 8)) for k in range(256)]
    else:
        vals = []
        for k in range(256):
            s = r.next() & 1
            e = 1 + r.below(30)
            vals.append(half((s << 15) | (e << 10) | (r.next() & 0x3FF)))
    tex = [vals[y * 16:(y + 1) * 16] for y in range(16)]
    out = []
    for q in range(4096):
        x = r.below(16 * 1024) / 1024.0
        y = r.below(16 * 1024) / 1024.0
        t, a, b = footprint2d(tex, 16, 16, x, y, False)
        out.append(Record([(v, w, 0) for v, w in zip(t, plane_weights(256, a, b))], 'f32' if fmt == FLOAT else 'half', q))
    return out


def mip_blend_zero(zero):
    """texf_mip_blend_even0_f32 (zero 0) / _odd0_f32 (zero 1): every level of that parity 0.0."""
    r = Rng(60 + FLOAT)
    r2 = Rng(61 + FLOAT)

    def gen(l, k):
        if l % 2 == zero:
            r2.next()
            return 0.0
        return f32(r2.float_bits(-6, 6))

    levels = mip_levels((16, 16), 5, gen)
    out = []
    for q in range(4096):
        u = r.below(1024) / 1024.0
        v = r.below(1024) / 1024.0
        lod = r.below(4 * 256)
        out.append(Record(trilinear(levels, u, v, lod >> 8, lod & 255), 'f32', q))
    return out


def is_plain(rec):
    """No NaN or infinity among the weighted texels (their results do not depend on the
    rounding rule)."""
    return all(math.isfinite(v) for v, w, _ in rec.terms if w)


ALL = {
    'texf_cube3d_f32.c0': cube3d,
    'texf_mip_blend_f32.c0': lambda: mip_blend(FLOAT),
    'texf_mip_blend_half.c0': lambda: mip_blend(HALF),
    'texf_mip_pairs_f32.c0': lambda: mip_pairs(FLOAT),
    'texf_mip_pairs_half.c0': lambda: mip_pairs(HALF),
    'texf_mip_blend_even0_f32.c0': lambda: mip_blend_zero(0),
    'texf_mip_blend_odd0_f32.c0': lambda: mip_blend_zero(1),
    'ptx_texx_mip.op3.c0': texx_mip,
    'texf_pairs_f32.c0': lambda: pairs(FLOAT),
    'texf_pairs_half.c0': lambda: pairs(HALF),
    'texf_quad_f32.c0': lambda: quad(FLOAT),
    'texf_quad_half.c0': lambda: quad(HALF),
}
