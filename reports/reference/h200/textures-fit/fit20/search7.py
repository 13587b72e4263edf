"""Texel alignment variants for two planes: per plane ('own') or to the largest of all
('all'), with `guard` bits; sums exact; one rounding."""
import itertools
import cases as C, model as M, records as R
data = {}
for name, gen in C.ALL.items():
    recs = [r for r in gen() if C.is_plain(r)]
    if any(len(set(p for _, w, p in r.terms if w)) > 1 for r in recs):
        data[name] = (recs, R.device(name))
for align, guard in itertools.product(['own', 'all'], range(2, 20)):
    bad = {}
    for name, (recs, dev) in data.items():
        n = sum((M.filter_sum(r.terms, r.prec, align=align, guard=guard) if len(set(p for _, w, p in r.terms if w)) > 1 else dev[r.index]) != dev[r.index] for r in recs)
        if n:
            bad[name] = n
    print(sum(bad.values()), align, guard, bad, flush=True)
