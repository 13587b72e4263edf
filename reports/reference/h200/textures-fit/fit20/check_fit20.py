"""Fit 20's rule (model.coarse_sum) against every conformance record (check_baseline's
cases) and every tri20 result."""
import sys
import numpy as np
import cases as C, model as M, records as R

def conformance(fn):
    tot = 0
    for name, gen in C.ALL.items():
        recs = [r for r in gen() if C.is_plain(r)]
        dev = R.device(name)
        bad = [r.index for r in recs if fn(r.terms, r.prec) != dev[r.index]]
        tot += len(bad)
        print('  %-28s %5d records, %d wrong %s' % (name, len(recs), len(bad), bad[:8]))
    return tot

def tri20(fn, sections):
    import tri20_fit as TF, lzma, struct
    b = lzma.open(TF.os.path.join(TF.HERE, 'gh100', 'tri20_diff.bin.xz')).read()
    o = 0; diff = {}
    while o < len(b):
        name = b[o:o+16].rstrip(b'\0').decode(); n, k = struct.unpack('<II', b[o+16:o+24])
        idx = np.frombuffer(b[o+24:o+24+4*k], dtype=np.uint32); w = np.frombuffer(b[o+24+4*k:o+24+8*k], dtype=np.uint32)
        diff[name] = dict(zip(idx.tolist(), w.tolist())); o += 24 + 8*k
    tot = 0
    for name in sections:
        bad = 0; n = 0
        for i, (t, p) in enumerate(TF.records(name)):
            n += 1
            want = diff[name].get(i)
            got = fn(t, p)
            if want is None:
                want = M.filter_sum(t, p)
            bad += got != want
        tot += bad
        print('  %-8s %8d results, %d wrong' % (name, n, bad))
    return tot

if __name__ == '__main__':
    step = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    extra = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    fn = lambda t, p: M.coarse_sum(t, p, step=step, extra=extra)
    print('fit 20 rule, step %d, extra %d' % (step, extra))
    print('conformance records:'); a = conformance(fn)
    if '--tri20' in sys.argv:
        print('tri20:'); a += tri20(fn, sys.argv[sys.argv.index('--tri20') + 1].split(','))
    print('total wrong:', a)
