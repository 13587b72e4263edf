"""Exact models of the texture unit's float filter sums (integers throughout).

A term is (value, weight, plane); weights are integers summing to 256. `filter_sum`
evaluates one candidate rule, given as keyword options, and returns the result as f32
bits (half results widened to f32, as the unit returns them)."""
import math
import struct

PREC = {'f32': (24, -126, 127), 'half': (11, -14, 15)}
GUARD = 4


def lead(v):
    return math.frexp(v)[1] - 1


def cut(n, sh, mode):
    """n / 2^sh (sh >= 0) to an integer: 'trunc' (towards zero), 'floor', 'ceil',
    'rna' (nearest, ties away), 'rne' (nearest, ties even), 'rnu' (nearest, ties up),
    'jam' (towards zero, the sticky bit ORed into the lowest kept bit)."""
    if sh <= 0:
        return n << (-sh)
    neg = n < 0
    m = -n if neg else n
    q, rem = m >> sh, m & ((1 << sh) - 1)
    half = 1 << (sh - 1)
    if mode == 'trunc':
        pass
    elif mode == 'floor':
        q += neg and rem != 0
    elif mode == 'ceil':
        q += (not neg) and rem != 0
    elif mode == 'rna':
        q += rem >= half
    elif mode == 'rne':
        q += rem > half or (rem == half and q & 1)
    elif mode == 'rnu':
        q += rem > half or (rem == half and not neg)
    elif mode == 'jam':
        q |= rem != 0
    else:
        raise ValueError(mode)
    return -q if neg else q


def to_bits(mag_neg_exp, prec):
    mag, neg, exp = mag_neg_exp
    P, emin, emax = PREC[prec]
    if mag == 0:
        return 0x80000000 if neg else 0
    if exp + mag.bit_length() - 1 > emax:
        return 0xFF800000 if neg else 0x7F800000
    v = math.ldexp(mag, exp)
    return struct.unpack('<I', struct.pack('<f', -v if neg else v))[0]


def round_to(n, exp, prec, mode='rna'):
    """n * 2^exp rounded to the format's precision (subnormal range kept)."""
    P, emin, emax = PREC[prec]
    if n == 0:
        return (0, False, 0)
    neg = n < 0
    top = exp + abs(n).bit_length() - 1
    keep = max(top - (P - 1), emin - (P - 1))
    if keep > exp:
        q = cut(n, keep - exp, mode)
        exp = keep
    else:
        q = n
    return (abs(q), neg, exp)


def plane_sums(terms, prec, guard=GUARD, align='own'):
    """Each plane's sum as (integer, exponent of its unit, E_p): texels with a non-zero
    weight aligned to the plane's largest exponent E_p with P-1+guard bits below it,
    truncated towards zero, times the weights, summed exactly. The unit of the sum is
    2^(E_p - (P-1) - guard - 8). With align='all' every plane is aligned to the largest
    exponent of all the terms (one block)."""
    P = PREC[prec][0]
    emin = PREC[prec][1]
    if prec == 'f32':
        # float subnormal texels read 0
        terms = [(0.0 if abs(v) < 2.0 ** -126 else v, w, p) for v, w, p in terms]
    live = [(v, w, p) for v, w, p in terms if w and v != 0.0]
    if not live:
        return []
    planes = sorted({p for _, _, p in live})
    emax_all = max(max(lead(v), emin) for v, _, _ in live)
    out = []
    for p in planes:
        E = max(max(lead(v), emin) for v, _, q in live if q == p) if align == 'own' else emax_all
        lsb = E - (P - 1) - guard
        s = 0
        for v, w, q in live:
            if q != p:
                continue
            t = math.floor(math.ldexp(abs(v), -lsb))
            s += (-t if v < 0 else t) * w
        out.append((s, lsb - 8, E))
    return out


def filter_sum(terms, prec, plane_cut=None, final='rna', align='own', combine='exact', guard=GUARD):
    """plane_cut: None (each plane's sum exact) or (ref, width, mode): the plane's sum
    cut to `width` bits, counted from its own leading bit (ref 'own') or from bit E_p + k
    of its largest texel (ref ('E', k)), by `mode` (see cut()).
    combine: 'exact', or ('align', g, mode): the plane sum of smaller magnitude aligned
    to the larger's leading bit with width bits... (see below)."""
    P = PREC[prec][0]
    ps = plane_sums(terms, prec, guard=guard, align=align)
    if not ps:
        neg = all(v != v or (v == 0.0 and math.copysign(1, v) < 0) for v, w, p in terms if w)
        return 0x80000000 if neg and any(w for _, w, _ in terms) else 0
    cuts = []
    for s, ue, E in ps:
        if plane_cut is not None and s != 0:
            ref, width, mode = plane_cut
            if ref == 'own':
                keep = ue + abs(s).bit_length() - width
            else:
                keep = E + ref[1] + 1 - width
            if keep > ue:
                s = cut(s, keep - ue, mode)
                ue = keep
        cuts.append((s, ue))
    if combine != 'exact' and len(cuts) == 2 and all(s for s, _ in cuts):
        # the smaller (by leading bit) aligned to the larger's leading bit less width-1,
        # cut by mode
        _, width, mode = combine
        tops = [ue + abs(s).bit_length() - 1 for s, ue in cuts]
        big = 0 if tops[0] >= tops[1] else 1
        keep = tops[big] - (width - 1)
        s, ue = cuts[1 - big]
        if keep > ue:
            cuts[1 - big] = (cut(s, keep - ue, mode), keep)
    lo = min(ue for _, ue in cuts)
    n = sum(s << (ue - lo) for s, ue in cuts)
    if n == 0:
        return 0
    return to_bits(round_to(n, lo, prec, final), prec)


def combine_sum(terms, prec, grid='E', g=12, mode='trunc', final='rna', which='both', guard=GUARD):
    """Plane sums as plane_sums(); then each plane's sum (which='both') or only the sum
    of the plane with the smaller reference (which='small') cut to a common grid and
    added exactly, the result rounded once by `final`.
    grid 'E': lsb = max_p E_p - (P-1) - g (E_p the plane's largest texel exponent);
    grid 'S': lsb = max_p lead(S_p) - (P-1) - g (the leading bit of the larger partial sum)."""
    P = PREC[prec][0]
    ps = plane_sums(terms, prec, guard=guard)
    if not ps:
        return filter_sum(terms, prec)
    if grid == 'E':
        refs = [E for _, _, E in ps]
    else:
        refs = [ue + abs(s).bit_length() - 1 if s else -10**6 for s, ue, _ in ps]
    top = max(refs)
    lsb = top - (P - 1) - g
    cuts = []
    for (s, ue, E), ref in zip(ps, refs):
        if ue < lsb and (which == 'both' or ref < top or len(ps) == 1 and False):
            s, ue = cut(s, lsb - ue, mode), lsb
        cuts.append((s, ue))
    lo = min(ue for _, ue in cuts)
    n = sum(s << (ue - lo) for s, ue in cuts)
    if n == 0:
        return 0
    return to_bits(round_to(n, lo, prec, final), prec)


def small_sum(terms, prec, grid='E', g=12, mode='floor', final='rna', order='E', guard=GUARD):
    """Plane sums as plane_sums(); the larger plane (by its largest texel's exponent,
    order 'E', or by its sum's leading bit, order 'S') kept exact, the other's sum cut to
    the grid lsb = ref(larger) - (P-1) - g (ref: E_p or the leading bit of the larger's
    sum), by `mode`; added exactly, rounded once by `final`."""
    P = PREC[prec][0]
    ps = plane_sums(terms, prec, guard=guard)
    if len(ps) < 2:
        return filter_sum(terms, prec, final=final)
    key = (lambda t: t[2]) if order == 'E' else (lambda t: t[1] + abs(t[0]).bit_length())
    (s0, u0, e0), (s1, u1, e1) = sorted(ps, key=key, reverse=True)
    ref = e0 if grid == 'E' else u0 + abs(s0).bit_length() - 1
    lsb = ref - (P - 1) - g
    if u1 < lsb:
        s1, u1 = cut(s1, lsb - u1, mode), lsb
    lo = min(u0, u1)
    n = (s0 << (u0 - lo)) + (s1 << (u1 - lo))
    if n == 0:
        return 0
    return to_bits(round_to(n, lo, prec, final), prec)


def own_cut_sum(terms, prec, width, mode='floor', final='rna', which='both', guard=GUARD):
    """With two live planes: each plane's sum (which='both'; 'small'/'large': only the
    plane with the smaller/larger sum) cut to `width` bits from its own leading bit by
    `mode`, added exactly and rounded once. One plane: today's rule."""
    ps = plane_sums(terms, prec, guard=guard)
    if len(ps) < 2:
        return filter_sum(terms, prec, final=final)
    tops = [ue + abs(s).bit_length() for s, ue, _ in ps]
    cuts = []
    for k, (s, ue, E) in enumerate(ps):
        sel = which == 'both' or (which == 'small') == (tops[k] < tops[1 - k] or (tops[k] == tops[1 - k] and k == 1))
        if sel and s:
            keep = ue + abs(s).bit_length() - width
            if keep > ue:
                s, ue = cut(s, keep - ue, mode), keep
        cuts.append((s, ue))
    lo = min(ue for _, ue in cuts)
    n = sum(s << (ue - lo) for s, ue in cuts)
    if n == 0:
        return 0
    return to_bits(round_to(n, lo, prec, final), prec)

BIAS = {'f32': 127, 'half': 15}


def coarse_sum(terms, prec, step=4, extra=12, mode='floor', final='rna', guard=GUARD):
    """Fit 20: each plane's sum as plane_sums(); the two planes' sums added in two's
    complement on the grid 2^(E' - (P-1) - extra), E' the largest texel exponent with the
    low bits of its biased value cleared (a multiple of `step`), the bits below floored;
    then rounded once (ties away). One plane: its own grid is never finer, so today's rule."""
    P = PREC[prec][0]
    ps = plane_sums(terms, prec, guard=guard)
    if not ps:
        return filter_sum(terms, prec)
    emax = max(E for _, _, E in ps)
    b = BIAS[prec]
    ec = ((emax + b) // step) * step - b
    k = ec - (P - 1) - extra
    lo = min(u for _, u, _ in ps)
    n = sum(s << (u - lo) for s, u, _ in ps)
    if lo < k:
        n, lo = cut(n, k - lo, mode), k
    if n == 0:
        return 0
    return to_bits(round_to(n, lo, prec, final), prec)
