import itertools, sys
import cases as C, model as M, records as R
data = {}
for name, gen in C.ALL.items():
    recs = [r for r in gen() if C.is_plain(r)]
    if any(len(set(p for _, w, p in r.terms if w)) > 1 for r in recs):
        data[name] = (recs, R.device(name))
for prec in ['f32', 'half']:
    names = [n for n in data if ('half' in n) == (prec == 'half')]
    P = M.PREC[prec][0]
    for k, mode, which in itertools.product(range(0, 16), ['trunc', 'floor', 'rna', 'rne', 'jam'], ['both', 'small', 'large']):
        bad = {}
        for name in names:
            recs, dev = data[name]
            n = sum(M.own_cut_sum(r.terms, r.prec, P + k, mode=mode, which=which) != dev[r.index] for r in recs)
            if n:
                bad[name] = n
        print(prec, sum(bad.values()), 'P+%d' % k, mode, which, bad, flush=True)
