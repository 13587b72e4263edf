"""Device results several ulps below today's rule (tri20 trilinear and 3D sections): the
grids 2^k at which flooring the exact sum (two's complement) and then rounding (ties away)
gives the device's word, against the planes' exponents."""
import lzma, struct, sys
import numpy as np
from fractions import Fraction as F
import tri20_fit as TF, model as M

b = lzma.open('gh100/tri20_diff.bin.xz').read()
o = 0
diff = {}
while o < len(b):
    name = b[o:o+16].rstrip(b'\0').decode(); n, k = struct.unpack('<II', b[o+16:o+24])
    idx = np.frombuffer(b[o+24:o+24+4*k], dtype=np.uint32); w = np.frombuffer(b[o+24+4*k:o+24+8*k], dtype=np.uint32)
    diff[name] = dict(zip(idx.tolist(), w.tolist())); o += 24 + 8*k
name = sys.argv[1]; minulps = int(sys.argv[2]); diff = diff[name]
unit = 8192 if name.endswith('f16') else 1
for i, (t, p) in enumerate(TF.records(name)):
    if i not in diff:
        continue
    mw = M.filter_sum(t, p); dw = diff[i]
    if abs(dw - mw) < minulps * unit:
        continue
    ps = M.plane_sums(t, p)
    lo = min(u for _, u, _ in ps)
    n = sum(s << (u - lo) for s, u, _ in ps)
    ks = []
    for k in range(lo, lo + 80):
        q = M.cut(n, k - lo, 'floor') if k > lo else n
        r = 0 if q == 0 else M.to_bits(M.round_to(q, k, p, 'rna'), p)
        if r == dw:
            ks.append(k)
    Es = [E for _, _, E in ps]
    leads = [u + abs(s).bit_length() - 1 for s, u, _ in ps]
    P = M.PREC[p][0]
    kr = (min(ks) - max(Es) + (P - 1), max(ks) - max(Es) + (P - 1)) if ks else None
    print(i, 'abs k in', (min(ks), max(ks)) if ks else None, 'ulps', (dw - mw) // unit, 'Es', Es, 'leads', leads, 'k-(Emax-(P-1)) in', kr, 'k-(maxlead-(P-1)) in', (min(ks) - max(leads) + P - 1, max(ks) - max(leads) + P - 1) if ks else None)
