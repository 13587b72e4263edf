#!/usr/bin/env python3
"""Picks the device records the emulator's unit test holds (fit21.md):
emu-driver/src/texture/fit21-records.txt, from device2.txt (or device2.txt.zst).

    make_records.py DEVICE2.txt > emu-driver/src/texture/fit21-records.txt

Per format and address mode (the .s32 reads; the .u32 ones are the same words on the
device), up to 13 lines: the first two, each channel's largest and smallest result, a
footprint holding the format's minimum and maximum with non-zero weights, a texel centre,
a border tap (border mode), a coordinate outside [0, 1) (wrap), and one line each where a
failing candidate (fit.py's cands) disagrees with the rule.
"""
import sys
from fit import parse, footprint, info, val, cands, sx, f32, M32
def main(path):
    tex, pts, _, _ = parse(path)
    print('# Fit 21 device records (GH100, an H100 80GB HBM3; driver 580.159.04): element-type reads')
    print('# with linear filtering, tex2D<int4>, picked by reports/reference/h200/textures-fit/fit21/make_records.py')
    print('# from device2.txt (sha256 in data-sha256.txt). FORMAT MODE X-BITS Y-BITS WORD0..WORD3 (hex).')
    for key, rows in pts.items():
        name, mode, rt = key
        if rt != 's32': continue
        bits, sgn, C = info(name); t = tex[name]
        lo = -(1 << (bits - 1)) if sgn else 0; hi = (1 << (bits - 1)) - 1 if sgn else (1 << bits) - 1
        cs = cands(bits, sgn)
        rule = cs['floor_nobias'] if bits == 32 else cs['floor']
        alts = [k for k in ('floor', 'trunc0', 'rhaz', 'raw_unsigned', 'floor_zx', 'floor_nobias', 'acc32', 'f32') if cs[k] is not rule]
        pick = [0, 1]
        def signed(r): return sx(r, 32) if sgn else r
        for c in range(C):
            pick.append(max(range(len(rows)), key=lambda k: signed(rows[k][2][c])))
            pick.append(min(range(len(rows)), key=lambda k: signed(rows[k][2][c])))
        found = set()
        for k, (xb, yb, r) in enumerate(rows):
            fp = footprint(name, mode, xb, yb)
            for c in range(C):
                vs = [val(name, t, i, c, C, bits, sgn, mode) for i, _ in fp]
                ws = [w for _, w in fp]
                assert rule(vs, ws) == r[c]
                sv = [sx(v, bits) if sgn else v for v, (i, _) in zip(vs, fp) if i is not None]
                nz = [v for v, (i, w) in zip(sv, fp) if w]
                tags = []
                if lo in nz and hi in nz: tags.append('extremes')
                if k % 16 == 0: tags.append('centre')
                if any(i is None and w for i, w in fp): tags.append('border')
                if mode == 'wrap' and not (0 <= f32(xb) < 1 and 0 <= f32(yb) < 1): tags.append('outside')
                for a in alts:
                    if cs[a](vs, ws) != r[c]: tags.append(a)
                for tag in tags:
                    if tag not in found:
                        found.add(tag); pick.append(k)
        for k in sorted(set(pick)):
            xb, yb, r = rows[k]
            print(name, mode, '%08x %08x' % (xb, yb), ' '.join('%x' % v for v in r))
if __name__ == '__main__':
    main(sys.argv[1])
