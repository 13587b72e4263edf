"""Candidates of the form: each plane's sum as today; the sums cut to a common grid
(lsb = the larger reference - (P-1) - g) by a mode, added exactly, rounded once."""
import itertools, sys
import cases as C, model as M, records as R

data = {}
for name, gen in C.ALL.items():
    recs = [r for r in gen() if C.is_plain(r)]
    data[name] = (recs, R.device(name))

def score(fn):
    bad = {}
    for name, (recs, dev) in data.items():
        n = sum(fn(r) != dev[r.index] for r in recs)
        if n:
            bad[name] = n
    return bad

res = []
for grid, g, mode, final, which in itertools.product(['E', 'S'], range(8, 22), ['trunc', 'floor', 'rna', 'rne', 'jam'], ['rna', 'rne'], ['both']):
    fn = lambda r: M.combine_sum(r.terms, r.prec, grid=grid, g=g, mode=mode, final=final, which=which)
    bad = score(fn)
    tot = sum(bad.values())
    res.append((tot, grid, g, mode, final, which, bad))
    print(tot, grid, g, mode, final, which, bad, flush=True)
