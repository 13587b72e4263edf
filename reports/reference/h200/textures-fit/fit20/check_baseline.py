"""Today's model (one exact partial sum per plane, added exactly, rounded once with ties
away) over every record: differences from the device (and, for listed known
differences, from the emulated line recorded in known-differences.txt)."""
import cases as C, model as M, records as R

KNOWN = {'texf_cube3d_f32.c0': 'texf_cube3d_f32.c0', 'texf_mip_blend_f32.c0': 'texf_mip_blend_f32.c0',
         'texf_mip_blend_half.c0': 'texf_mip_blend_half.c0', 'texf_mip_pairs_half.c0': 'texf_mip_pairs_half.c0',
         'ptx_texx_mip.op3.c0': 'ptx_texx_mip.op3.c0@ptx'}
if __name__ == '__main__':
    for name, gen in C.ALL.items():
        recs = gen()
        dev = R.device(name)
        emu = R.known(KNOWN[name]) if name in KNOWN else dev
        plain = [r for r in recs if C.is_plain(r)]
        got = {r.index: M.filter_sum(r.terms, r.prec) for r in plain}
        ne = sum(got[i] != emu[i] for i in got)
        nd = [i for i in got if got[i] != dev[i]]
        print(f'{name}: {len(recs)} records ({len(plain)} finite); vs emulated line: {ne} differ; vs device: {len(nd)} differ {nd[:10]}')
