"""tri20 pairs: today's rule (each plane exact, added exactly, rounded once, ties away)
against the device; the misses listed with their planes."""
import sys, math
import numpy as np
import tri20_gen as T, model as M

DEV = sys.argv[1] if len(sys.argv) > 1 else 'h200'


def parts(bits, half):
    """(signed integer significand, exponent of its lowest bit, E) of a texel."""
    bits = int(bits)
    if half:
        s, e, m = bits >> 15, (bits >> 10) & 31, bits & 0x3FF
        E = max(e, 1) - 15
        sig = (m | (1 << 10)) if e else m
        return (-sig if s else sig), E - 10, E
    s, e, m = bits >> 31, (bits >> 23) & 255, bits & 0x7FFFFF
    sig = m | (1 << 23)
    return (-sig if s else sig), e - 127 - 23, e - 127


def plane_sums_pairs(p, half, i):
    s0, l0, E0 = parts(p['v0'][i], half)
    s1, l1, E1 = parts(p['v1'][i], half)
    m = int(p['m'][i])
    return [(s0 * (256 - m), l0 - 8, E0), (s1 * m, l1 - 8, E1)]


def exact(ps, prec):
    lo = min(u for _, u, _ in ps)
    n = sum(s << (u - lo) for s, u, _ in ps)
    return 0 if n == 0 else M.to_bits(M.round_to(n, lo, prec, 'rna'), prec)


if __name__ == '__main__':
    for half in (False, True):
        prec = 'half' if half else 'f32'
        p = T.pairs(half)
        dev = T.results(DEV, 'pp_f16' if half else 'pp_f32')
        bad = []
        for i in range(len(dev)):
            ps = plane_sums_pairs(p, half, i)
            if exact(ps, prec) != dev[i]:
                bad.append(i)
        print(prec, 'pairs:', len(bad), 'of', len(dev), 'differ from the exact blend rounded once')
        for i in bad[:40]:
            ps = plane_sums_pairs(p, half, i)
            P = M.PREC[prec][0]
            lo = min(u for _, u, _ in ps)
            n = sum(s << (u - lo) for s, u, _ in ps)
            top = lo + abs(n).bit_length() - 1
            ulp = top - (P - 1)
            import struct
            f = lambda b: struct.unpack('<f', struct.pack('<I', int(b)))[0]
            d = f(dev[i]) / 2.0 ** ulp
            print('  %7d m=%3d x=%.4f dev=%.1f  ' % (i, p['m'][i], n / 2.0 ** (ulp - lo), d) +
                  '  '.join('E%d %+.4f' % (E, s * 2.0 ** (u - ulp)) for s, u, E in ps))
