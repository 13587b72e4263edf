"""Candidates: each plane's sum (as today) cut to P + k bits counted from its own leading
bit ('own') or from its largest texel's exponent E_p + j ('E'), by a mode; the cut sums
added exactly and rounded once (ties away, or even)."""
import itertools
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

for ref, k, mode, final in itertools.product(['own', ('E', 0), ('E', 1)], range(0, 14), ['trunc', 'floor', 'rna', 'rne', 'jam'], ['rna']):
    fn = lambda r: M.filter_sum(r.terms, r.prec, plane_cut=(ref, M.PREC[r.prec][0] + k, mode), final=final)
    bad = score(fn)
    print(sum(bad.values()), ref, k, mode, final, bad, flush=True)
