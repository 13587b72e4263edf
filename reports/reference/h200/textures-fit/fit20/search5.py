"""Per format: the larger plane exact, the smaller's sum cut to a grid below the larger."""
import itertools, sys
import cases as C, model as M, records as R
data = {}
for name, gen in C.ALL.items():
    recs = [r for r in gen() if C.is_plain(r)]
    if any(len(set(p for _, w, p in r.terms if w)) > 1 for r in recs):
        data[name] = (recs, R.device(name))
for prec in ['f32', 'half']:
    names = [n for n in data if ('half' in n) == (prec == 'half')]
    for order, grid, g, mode in itertools.product(['E', 'S'], ['E', 'S'], range(0, 24), ['trunc', 'floor', 'rna', 'jam', 'ceil']):
        bad = {}
        for name in names:
            recs, dev = data[name]
            n = sum(M.small_sum(r.terms, r.prec, grid=grid, g=g, mode=mode, order=order) != dev[r.index] for r in recs)
            if n:
                bad[name] = n
        print(prec, sum(bad.values()), order, grid, g, mode, bad, flush=True)
