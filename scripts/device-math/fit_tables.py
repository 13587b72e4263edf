"""Fits the H200 SFU segment tables from the device dumps and prints them as the C table
block of kernels-host/runtime/simtwin_sfu.cpp.

    python3 fit_tables.py DUMP_DIR [DUMP_DIR2] > tables.inc

DUMP_DIR holds the windows of dump.cu (rcp_m, rsq_m, sqrt_m, ex2_gp, lg2_e0, lg2_em1,
sin_*/cos_*); DUMP_DIR2 those of verify.cu (tanh_e119 .. tanh_e129). Each table row
{A, B, C} gives, for a segment of the operand, the integer V = A + B*u + C*sq17(u) with u
the operand's low 17 bits (16 for rcp) and sq17 the unit's truncated squarer; every
segment's constraints come from every input of it (the dumps are exhaustive over the
operand bits that matter), so any integers that meet them reproduce the H200 exactly.
The structure (segment counts, u widths, shifts, fixed-point formats) was found by the
experiments in reports/device-math/README.md.
"""
import sys
import numpy as np
from scipy.optimize import linprog
import h200data

SQ_BITS = 17


def sq17(x):
    """The unit's squarer: each partial product of the 17-bit operand truncated."""
    res = np.zeros_like(x)
    for i in range(SQ_BITS):
        res += np.where((x >> i) & 1, x >> (18 - i), 0)
    return res >> 1


def search_integers(u, S, lo, hi, b0, c0, search):
    """Integers (A, B, C) near B = b0, C = c0 meeting every constraint exactly, or None."""
    for db in range(-search, search + 1):
        for dc in range(-search, search + 1):
            B, C = b0 + db, c0 + dc
            t = B * u + C * S
            alo, ahi = int((lo - t).max()), int((hi - t).min())
            if alo <= ahi:
                return (alo + ahi) // 2, B, C
    return None


def fit_segment(u, S, lo, hi, search=3):
    """Integers (A, B, C) with lo <= A + B*u + C*S <= hi for every point, or None. First
    the least-squares fit of the interval midpoints, rounded, and its neighbourhood; if
    that fails, the linear program's most central real point."""
    U = np.stack([np.ones_like(u), u, S], 1).astype(np.float64)
    ref = lo[0]
    lo_f, hi_f = (lo - ref).astype(float), (hi - ref).astype(float)
    base = np.linalg.lstsq(U, (lo_f + hi_f) / 2, rcond=None)[0]
    r = search_integers(u, S, lo, hi, int(round(base[1])), int(round(base[2])), search)
    if r is not None:
        return r
    off = U @ base
    n = len(lo)
    A = np.vstack([np.hstack([-U, np.ones((n, 1))]), np.hstack([U, np.ones((n, 1))])])
    b = np.concatenate([-(lo_f - off), hi_f - off])
    c = np.zeros(4)
    c[-1] = -1
    res = linprog(c, A_ub=A, b_ub=b, bounds=[(None, None)] * 4, method="highs")
    if res.x is None:
        return None
    p = res.x[:3] + base
    return search_integers(u, S, lo, hi, int(round(p[1])), int(round(p[2])), search)


def fit_table(q, lo, hi, ubits, nseg, sqfun, shift):
    """One row per segment (q >> ubits) such that lo <= V >> shift <= hi."""
    rows = []
    for k in range(nseg):
        sel = (q >> ubits) == k
        u = q[sel] & ((1 << ubits) - 1)
        r = fit_segment(u, sqfun(u), lo[sel] << shift, (hi[sel] << shift) + (1 << shift) - 1)
        if r is None:
            raise SystemExit(f"segment {k} has no fit")
        rows.append(r)
    return rows


def mantissa24(o):
    """The 24-bit significand of float results in [2^e, 2^(e+1)) (1.0 -> 2^24 for rcp/rsq)."""
    return (o & 0x7FFFFF) | 0x800000


def trunc_interval(o, units):
    """[lo, hi] of a positive fixed-point value (units of 2^-units) that the unit truncated
    to the float magnitudes o."""
    o = o.astype(np.int64) & 0x7FFFFFFF
    e = o >> 23
    M = mantissa24(o)
    sh = e - 150 + units
    val = np.where(e == 0, 0, np.where(sh >= 0, M << np.clip(sh, 0, 62), M >> np.clip(-sh, 0, 62)))
    ulp = np.where(e == 0, 1, 1 << np.clip(sh, 0, 62))
    return val, val + ulp - 1


def main():
    d1 = sys.argv[1]
    d2 = sys.argv[2] if len(sys.argv) > 2 else None
    h200data.DATA = d1
    W = h200data.window
    tables = {}
    # rcp: [1,2), result in (1/2, 1] as Y = value * 2^24
    r = W("rcp_m").astype(np.int64)
    Y = np.where(((r >> 23) & 0xFF) == 127, 1 << 24, mantissa24(r))
    q = np.arange(Y.size)
    tables["RCP"] = fit_table(q, Y, Y, 16, 128, lambda u: sq17(u << 1), 15)
    # rsqrt: [1,4), index = exponent parity + 6 mantissa bits; 1.0 is exact, left out
    r = W("rsq_m").astype(np.int64)
    Y = np.where(((r >> 23) & 0xFF) == 127, 1 << 24, mantissa24(r))
    q = np.arange(Y.size)
    keep = q != 0
    tables["RSQ"] = fit_table(q[keep], Y[keep], Y[keep], 17, 128, sq17, 16)
    # sqrt: as rsqrt
    r = W("sqrt_m").astype(np.int64)
    Y = mantissa24(r)
    tables["SQRT"] = fit_table(np.arange(Y.size), Y, Y, 17, 128, sq17, 18)
    # ex2: grid k * 2^-23 of [0,1), result in [1,2)
    r = W("ex2_gp").astype(np.int64)
    Y = mantissa24(r)
    tables["EX2"] = fit_table(np.arange(Y.size), Y, Y, 17, 64, sq17, 15)
    # lg2: L(m) in units 2^-36 from x in [1,2) (result L, truncated) and [1/2,1) (result
    # -(1 - L) as the one's complement of L - 1, truncated); 1.0 itself is special-cased
    lo0, hi0 = trunc_interval(W("lg2_e0"), 36)
    v1, h1 = trunc_interval(W("lg2_em1"), 36)
    one = np.int64(1) << 36
    lo1, hi1 = one - 1 - h1, one - 1 - v1
    lo, hi = np.maximum(lo0, lo1), np.minimum(hi0, hi1)
    lo[0], hi[0] = lo1[0], hi1[0]
    tables["LG2"] = fit_table(np.arange(lo.size), lo, hi, 17, 64, sq17, 2)
    # sin/cos: every 23-bit quarter-period position f from the sin and cos windows
    tables["SIN"] = fit_sin(W)
    if d2:
        h200data.DATA = d2
        tables["TANH"], meta = fit_tanh(h200data.window)
    print_tables(tables, meta if d2 else None)


def rz_revolutions(xb):
    """RZ(x * 1/(2 pi)) as single bits (normal results), as sin.approx computes it."""
    x = xb.astype(np.uint32).view(np.float32).astype(np.float64)
    p = x * np.float64(np.uint32(0x3E22F983).view(np.float32))
    pb = p.view(np.int64)
    s, E, m = (pb >> 63) & 1, (pb >> 52) & 0x7FF, pb & ((1 << 52) - 1)
    return (s << 31) | ((E - 1023 + 127) << 23) | (m >> 29)


def fit_sin(W):
    fs, os_ = [], []
    for name, start, stride in (("sin_e0", 0x3F800000, 1), ("sin_em1", 0x3F000000, 2), ("sin_e1", 0x40000000, 2),
                                ("sin_e2", 0x40800000, 1), ("cos_e0", 0x3F800000, 1), ("cos_em1", 0x3F000000, 2),
                                ("cos_e1", 0x40000000, 2), ("cos_e2", 0x40800000, 1)):
        w = W(name).astype(np.int64)
        r = rz_revolutions(start + stride * np.arange(w.size, dtype=np.int64))
        rf = np.abs((r & 0xFFFFFFFF).astype(np.uint32).view(np.float32).astype(np.float64))
        q = np.floor(rf * 2**25).astype(np.int64)
        quad = (q >> 23) & 3
        if name.startswith("cos"):
            quad = (quad + 1) & 3
        f = np.where(quad & 1, (~q) & 0x7FFFFF, q & 0x7FFFFF)
        fs.append(f)
        os_.append(w & 0x7FFFFFFF)
    f, o = np.concatenate(fs), np.concatenate(os_)
    u, idx = np.unique(f, return_index=True)
    if u.size != 1 << 23:
        raise SystemExit("sin/cos windows do not cover every quarter-period position")
    lo, hi = trunc_interval(o[idx], 37)
    return fit_table(u, lo, hi, 17, 64, sq17, 0)


TANH_OCTAVES = range(119, 130)  # x in [2^-8, 8): below it tanh = x, above it 1


def fit_tanh(W):
    """Per octave of x: the mantissa's top (17 + ib) bits, ib index bits; result truncated
    from units 2^-U. Rows are scaled to one shift (16)."""
    rows, meta = [], []
    for e in TANH_OCTAVES:
        w = W(f"tanh_e{e}").astype(np.int64)
        drop = 0
        while drop < 23 and (w == w[(np.arange(w.size) >> (drop + 1)) << (drop + 1)]).all():
            drop += 1
        ib = 23 - drop - 17
        w = w[:: 1 << drop]
        q = np.arange(w.size)
        units = 150 - int(((w >> 23) & 0xFF).min())
        lo, hi = trunc_interval(w, units)
        for sh in range(0, 17, 2):
            try:
                tab = fit_table(q, lo, hi, 17, 1 << ib, sq17, sh)
                break
            except SystemExit:
                continue
        else:
            raise SystemExit(f"tanh octave {e} has no fit")
        meta.append((len(rows), ib, units))
        rows += [(a << (16 - sh), b << (16 - sh), c << (16 - sh)) for a, b, c in tab]
    return rows, meta


DOCS = {
    "RCP": "rcp.approx: 128 segments of the mantissa, u = its low 16 bits, Y = (A + B*u + C*sq17(u << 1)) >> 15",
    "RSQ": "rsqrt.approx: 128 segments of exponent parity + 6 mantissa bits, u = low 17 bits, Y = (...) >> 16",
    "SQRT": "sqrt.approx: as rsqrt, Y = (...) >> 18",
    "EX2": "ex2.approx: 64 segments of the 23-bit fraction, u = low 17 bits, Y = (...) >> 15",
    "LG2": "lg2.approx: 64 segments of the mantissa, u = low 17 bits, L = (...) >> 2 in units of 2^-36",
    "SIN": "sin/cos.approx: 64 segments of the quarter period, u = low 17 bits, value in units of 2^-37",
    "TANH": "tanh.approx: per octave 2^(e-127), e = 119..129, 2^ib segments, u = the 17 mantissa bits below them, value (...) >> 16 in units of 2^-U",
}


def print_tables(tables, tanh_meta):
    for name, rows in tables.items():
        print(f"/* {DOCS[name]} */")
        print(f"SFU_TAB int64_t {name}[{len(rows)}][3] = {{")
        cells = [f"{{{int(a)}LL, {int(b)}, {int(c)}}}" for a, b, c in rows]
        for i in range(0, len(cells), 3):
            print("    " + ", ".join(cells[i:i + 3]) + ",")
        print("};")
    if tanh_meta:
        print("/* tanh.approx octaves e = 119..129: first row, index bits ib, units U */")
        print(f"SFU_TAB int TANH_OCTAVE[{len(tanh_meta)}][3] = {{")
        print("    " + ", ".join(f"{{{a}, {b}, {c}}}" for a, b, c in tanh_meta) + ",")
        print("};")


if __name__ == "__main__":
    main()
