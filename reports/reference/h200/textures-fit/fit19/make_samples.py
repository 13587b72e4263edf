"""Draws a deterministic sample of fit19's H200 records into emu-driver/tests/data/fit19-samples.txt
(the unit tests of emu-driver/src/texture/sample.rs check the sampler against every line).
python3 make_samples.py --lod3 only appends the lod3 two-product records (see the end)."""
import numpy as np, sections as S, lod3_fit as L, os, sys
if '--lod5' in sys.argv:
    # lod5 (GH100): the bias threshold of the N = 2, 4 c + a blend (biases 42/43 and 54/55 256ths:
    # queries where c and c + a differ) and fit 3 on random / nearly parallel f32 gradients with
    # bias 1/2 at N = 16, whose unbiased lod is below 0 (the bias is added before the clamp at 0),
    # and unbiased at N = 16; appended.
    import lod5_fit as F
    rng = np.random.default_rng(1906)
    D5 = F.load('lod5')
    out = ['# aniso/anisob bq|rnd|par: lod5 on GH100 (fit19/lod5-README.md): bias threshold, random gradients']
    def emit(name, g, n, b, r, k):
        gb = ' '.join(f'{int(x):08x}' for x in g[k].view(np.uint32))
        out.append(f'aniso {name} {n} {gb} {r[k]}' if b == 0 else f'anisob {name} {n} {b} {gb} {r[k]}')
    g = D5['bq_g']
    for suf, n, b in [('bq_n2_p42', 2, 42), ('bq_n2_p43', 2, 43), ('bq_n4_p54', 4, 54), ('bq_n4_p55', 4, 55)]:
        r = F.res(D5, suf)
        lod = np.clip(F.aniso_lod(g, n) + b, 0, 3072)
        a, c = F.REMAP[n]
        base = (lod >> 8) * 256 + np.clip(np.floor((a * (lod & 255) - c) / 4.0), 0, 256).astype(np.int64)
        low = (lod >> 8) * 256 + np.clip(np.floor((a * (lod & 255) - c - a) / 4.0), 0, 256).astype(np.int64)
        for k in rng.choice(np.flatnonzero(base != low), 24, replace=False):
            emit('bq', g, n, b, r, k)
    for s in ['rnd', 'par']:
        g = D5[s + '_g']
        for suf, n, b in [('_b16', 16, 128), ('_a16', 16, 0), ('_b4', 4, 128)]:
            r = F.res(D5, s + suf)
            pick = list(rng.integers(0, len(r), 8))
            if b:
                neg = np.flatnonzero(F.result(g, n, b) != r)
                pick += list(rng.choice(neg, min(16, len(neg)), replace=False))
            for k in pick:
                emit(s, g, n, b, r, k)
    open('/work/main/emu-driver/tests/data/fit19-samples.txt', 'a').write('\n'.join(out) + '\n')
    print(len(out) - 1, 'records appended')
    sys.exit(0)
if '--lod3' in sys.argv:
    # lod3 (GH100) two-product determinants, fit 3 (lod5_fit.py): per section and texture, 32 queries
    # that fit 2 (the emulator before fit 3) gets wrong (all, where fewer) and 16 random ones; appended.
    import lod5_fit as F
    rng = np.random.default_rng(1905)
    D = F.load('lod3')
    out = ['# aniso/anisob sum|dif|cancel: lod3 on GH100 (fit19/lod3-README.md), two-product determinants (fit19/lod5-fit.md)']
    for name in ['sum', 'dif', 'cancel']:
        g = D[name + '_g']
        for suf, n, b in F.LOD3_TEX:
            r = F.res(D, name + '_' + suf)
            new, old = F.result(g, n, b), F.result(g, n, b, ydet=F.fit2_y)
            assert np.array_equal(new, r)
            miss = np.flatnonzero(old != r)
            pick = list(rng.choice(miss, min(32, len(miss)), replace=False)) + list(rng.integers(0, len(r), 16))
            for k in pick:
                gb = ' '.join(f'{int(x):08x}' for x in g[k].view(np.uint32))
                out.append(f'aniso {name} {n} {gb} {r[k]}' if b == 0 else f'anisob {name} {n} {b} {gb} {r[k]}')
    open('/work/main/emu-driver/tests/data/fit19-samples.txt', 'a').write('\n'.join(out) + '\n')
    print(len(out) - 1, 'records appended')
    sys.exit(0)
rng = np.random.default_rng(19)
out = ['# H200 records of fit19 (reports/reference/h200/textures-fit/run12.md), a random sample of each exhaustive set.',
       '# s8 A B W K: 8-bit signed texels A (weight 256-W) and B (weight W) read K/32767',
       '# srgb A B W H: sRGB bytes A, B (weights 256-W, W) read the half H (hex)',
       '# grad SECTION G0 G1 G2 G3 WIDTH HEIGHT L: gradients (f32 bits, hex) on a WIDTHxHEIGHT mipmap of 13 levels read lod*256 = L']
s8 = S.undelta(S.read('h200/s8.bin')['s8_pairs_d'])
for i in rng.integers(0, 256 * 256 * 256, 4096):
    p, w = divmod(int(i), 256); a, b = divmod(p, 256)
    out.append(f's8 {a - 128} {b - 128} {w} {int(s8[p][w])}')
sr = S.undelta(S.read('h200/srgb.bin')['srgb_pairs_d']) & 0xffff
for i in rng.integers(0, 256 * 256 * 256, 4096):
    p, w = divmod(int(i), 256); a, b = divmod(p, 256)
    out.append(f'srgb {a} {b} {w} {int(sr[p][w]):04x}')
D = {}
D.update(L.load('h200/loda.bin')); D.update(L.load('h200/lodb.bin')); D.update(L.load('h200/run2/lod2.bin'))
for name, h, n in [('iso', 4096, 512), ('axis', 4096, 512), ('dir', 4096, 512), ('rnd', 4096, 512), ('rndrect', 1024, 512), ('par_ax', 4096, 512), ('par_dir', 4096, 512), ('sumax', 4096, 512), ('npar', 4096, 512), ('ang', 4096, 512), ('perp', 4096, 512)]:
    g = D[name + '_g']; r = D[name + '_r']
    for k in rng.integers(0, len(r), n):
        gb = ' '.join(f'{int(x):08x}' for x in g[k].view(np.uint32))
        out.append(f'grad {name} {gb} 4096 {h} {int(round(float(r[k]) * 256))}')
open('/work/main/emu-driver/tests/data/fit19-samples.txt', 'w').write('\n'.join(out) + '\n')
print(len(out))
# Anisotropic queries (lod2, maxAnisotropy N): A = the returned value * 256 on the constant-per-level mipmap.
out = open('/work/main/emu-driver/tests/data/fit19-samples.txt').read().rstrip('\n').split('\n')
out.insert(4, '# aniso SECTION N G0 G1 G2 G3 A: maxAnisotropy N on the 4096x4096 mipmap; A = the result * 256 (level + blend weight)')
D2 = L.load('h200/run2/lod2.bin')
for name in ['an_ax', 'an_len', 'par_dir', 'an_rnd']:
    g = D2[name + '_g']
    for n in (2, 4, 8, 16):
        r = D2[name + '_a%d' % n]
        for k in rng.integers(0, len(r), 128):
            gb = ' '.join(f'{int(x):08x}' for x in g[k].view(np.uint32))
            out.append(f'aniso {name} {n} {gb} {int(round(float(r[k]) * 256))}')
open('/work/main/emu-driver/tests/data/fit19-samples.txt', 'w').write('\n'.join(out) + '\n')
print(len(out))
