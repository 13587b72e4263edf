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
for grid, g, mode, final in itertools.product(['E', 'S'], range(10, 16), ['trunc', 'floor', 'rna', 'jam'], ['rnu', 'rna']):
    fn = lambda r: M.combine_sum(r.terms, r.prec, grid=grid, g=g, mode=mode, final=final)
    bad = score(fn)
    print(sum(bad.values()), grid, g, mode, final, bad, flush=True)
