"""Per format: the common grid of the two planes' sums (E or S reference, g bits), mode, final."""
import itertools, sys
import cases as C, model as M, records as R
data = {}
for name, gen in C.ALL.items():
    recs = [r for r in gen() if C.is_plain(r)]
    data[name] = (recs, R.device(name))
for prec in ['f32', 'half']:
    names = [n for n in data if ('half' in n) == (prec == 'half')]
    for grid, g, mode, final in itertools.product(['S'], range(0, 20), ['trunc', 'floor', 'rna', 'rne', 'jam', 'ceil'], ['rna']):
        bad = {}
        for name in names:
            recs, dev = data[name]
            if not any(len(set(p for _, w, p in r.terms if w)) > 1 for r in recs):
                continue
            n = sum(M.combine_sum(r.terms, r.prec, grid=grid, g=g, mode=mode, final=final) != dev[r.index] for r in recs)
            if n:
                bad[name] = n
        print(prec, sum(bad.values()), grid, g, mode, final, bad, flush=True)
