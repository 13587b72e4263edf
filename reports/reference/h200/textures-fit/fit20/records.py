"""Reading the conformance tables: the H200's lines (h200-conformance.txt) and the
emulated lines listed in known-differences.txt, as lists of u32 words."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..', '..', '..', '..'))
DATA = os.path.join(ROOT, 'emu-driver', 'tests', 'data')


def words(line):
    out = []
    for tok in line.strip().split(','):
        if '*' in tok:
            v, n = tok.split('*')
            out += [int(v, 16)] * int(n)
        elif tok == '-':
            out.append(None)
        else:
            out.append(int(tok, 16))
    return out


def device(case):
    with open(os.path.join(DATA, 'h200-conformance.txt')) as f:
        for line in f:
            if line.startswith(case + ': '):
                return words(line.split(': ', 1)[1])
    raise KeyError(case)


def known(case):
    """The emulated line a known difference records (case with its @mode, if any)."""
    with open(os.path.join(DATA, 'known-differences.txt')) as f:
        for line in f:
            parts = line.split(' | ')
            if parts[0].strip() == case:
                return words(parts[1])
    raise KeyError(case)
