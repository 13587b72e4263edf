"""lod3 probe (fit19), first look: aniso2_fit's model (fit 2) against the device's results.
Run: python3 lod3_first_look.py  (reads h200/lod3.bin.xz; numpy). Prints matches per section and
texture, then the b4 (bias 0.5, N=4) checks behind lod3-run.md."""
import sys, numpy as np
sys.path.insert(0, __import__('os').path.dirname(__import__('os').path.abspath(__file__)))
import lod3_fit as L3, aniso2_fit as A2
from aniso_fit import remap
import lzma, tempfile, os
HERE = os.path.dirname(os.path.abspath(__file__))
_raw = os.path.join(tempfile.gettempdir(), 'fit19-lod3.bin')
if not os.path.exists(_raw):
    open(_raw, 'wb').write(lzma.decompress(open(os.path.join(HERE, 'h200', 'lod3.bin.xz'), 'rb').read()))
D = L3.load(_raw)
res = lambda k: np.round(D[k].astype(np.float64) * 256).astype(np.int64)
TEX = [('r', 0, 0), ('a2', 2, 0), ('a4', 4, 0), ('a16', 16, 0), ('b4', 4, 128), ('b16', 16, 128)]
def model(g, n, bias, **kw):
    if n == 0:
        return L3.lod_grad(g, 4096, 4096)
    lod = A2.aniso_lod(g, n, **kw)
    return remap(np.clip(lod + bias, 0, 12*256), n) if bias else remap(lod, n)
for s in ['prod0','prod1','prod2','prod3','prod4','sum','dif','cancel']:
    g = D[s+'_g']; row = []
    for name, n, b in TEX:
        row.append('%s %d' % (name, np.sum(model(g, n, b) == res(s+'_'+name))))
    print('%-7s %7d | %s' % (s, len(g), ' | '.join(row)))
print('--- b4 variants')
from aniso_fit import REMAP
for s in ['prod0', 'sum']:
    g = D[s+'_g']; dev = res(s+'_b4'); lod = A2.aniso_lod(g, 4)
    best = []
    for B in range(0, 256, 8):
        best.append((np.sum(remap(np.clip(lod + B, 0, 3072), 4) == dev), B))
    print(s, sorted(best)[-3:])
    # remap(lod)+B
    print(s, 'after', max((np.sum(np.clip(remap(lod,4) + B,0,3072) == dev), B) for B in range(0,256,8)))
    # device b4 vs device a4 relation
    a4 = res(s+'_a4')
    d = dev - a4
    vals, cnt = np.unique(d, return_counts=True)
    print(s, 'b4-a4 diffs', list(zip(vals[:10], cnt[:10])), '...', len(vals))
