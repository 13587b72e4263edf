"""Scores combine rules on the tri20 pairs: argv: DEVDIR g mode [final]."""
import sys
import numpy as np
import tri20_gen as T, model as M
from pp_look import plane_sums_pairs, exact


def combine(ps, prec, g, mode, final='rna', rel='E'):
    P = M.PREC[prec][0]
    ref = max(E for _, _, E in ps) if rel == 'E' else max(u + abs(s).bit_length() - 1 for s, u, _ in ps if s)
    lsb = ref - (P - 1) - g
    cuts = [(M.cut(s, lsb - u, mode), lsb) if u < lsb else (s, u) for s, u, _ in ps]
    lo = min(u for _, u in cuts)
    n = sum(s << (u - lo) for s, u in cuts)
    return 0 if n == 0 else M.to_bits(M.round_to(n, lo, prec, final), prec)


if __name__ == '__main__':
    dev_dir, g, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    final = sys.argv[4] if len(sys.argv) > 4 else 'rna'
    for half in (False, True):
        prec = 'half' if half else 'f32'
        p = T.pairs(half)
        dev = T.results(dev_dir, 'pp_f16' if half else 'pp_f32')
        bad = [i for i in range(len(dev)) if combine(plane_sums_pairs(p, half, i), prec, g, mode, final) != dev[i]]
        print(prec, 'g=%d %s %s:' % (g, mode, final), len(bad), 'of', len(dev), 'wrong', bad[:12])
